import { readFile, stat } from 'node:fs/promises'
import * as path from 'node:path'
import { pathToFileURL } from 'node:url'
import { DEFAULT_MAX_BODY_BYTES, originProblem } from '@flowadmin/adapter-http'
import { DEFAULT_API_TOKENS, messageOf } from '@flowadmin/core'
import bytes from 'bytes'
import * as v from 'valibot'
import { SettingsError } from './errors.js'
import { DEFAULT_HTTP_LIMITS, type HttpLimits } from './listen.js'
import { ruleProblem, urlProblem } from './palette-policy.js'
import { trustProxyProblem } from './proxy.js'

/** Settings after validation, with every default applied and every path absolute. */
export interface Settings {
  uiHost: string
  uiPort: number
  /** Absolute. */
  userDir: string
  /** '' or a prefix such as '/admin' (no trailing slash). */
  httpAdminRoot: string
  storage: 'sqlite' | 'memory' | 'postgres'
  /** The PostgreSQL store's connection, used when `storage` is 'postgres'. */
  postgres: PostgresSettings
  adminAuth: AdminAuthSettings | null
  /** 'stdout', 'off', or an absolute file path the events are appended to. */
  auditLog: 'stdout' | 'off' | { file: string }
  /** Addresses and CIDR ranges of the reverse proxies whose X-Forwarded-For counts; [] for none. */
  trustProxy: string[]
  /** Browser origins that may call the API (CORS); null: no CORS headers at all. */
  httpAdminCors: { origins: string[] } | null
  /** Largest request body, in bytes. */
  apiMaxLength: number
  /** Timeouts and header size of the HTTP server. */
  httpServer: HttpLimits
  /**
   * Where `GET /metrics` is served: 'api' beside the API (needs `metrics.read`), 'off', or on a
   * listener of its own (open to whoever reaches it, so loopback only).
   */
  metrics: 'api' | 'off' | { host: string; port: number }
  /** Milliseconds requests in flight may take to finish once a stop is asked for. */
  shutdownTimeout: number
  /** Serve the console, the page for people, at `<httpAdminRoot>/`. */
  console: boolean
  /** Installing and removing node modules (`externalModules.palette`). */
  palette: PaletteSettings
}

/** `externalModules.palette`, with its defaults applied. */
export interface PaletteSettings {
  allowInstall: boolean
  allowUpload: boolean
  allowList: string[]
  denyList: string[]
  allowScripts: boolean
  /** null: npm's own configuration (userDir/.npmrc, ~/.npmrc, the public registry). */
  registry: string | null
  /** Seconds npm may run for one install or removal. */
  timeout: number
  /** Seconds a request waits for the install or removal before it, then 409 busy. */
  wait: number
}

export const DEFAULT_PALETTE: PaletteSettings = {
  allowInstall: true,
  allowUpload: false,
  allowList: ['*'],
  denyList: [],
  allowScripts: false,
  registry: null,
  timeout: 300,
  wait: 30,
}

export interface PostgresSettings {
  /** `postgres://…`; null: `DATABASE_URL`, else the standard `PG*` variables. */
  url: string | null
  /** Most connections for requests. */
  pool: number
  /** Milliseconds a connection attempt or statement may take before requests get 503. */
  timeoutMs: number
}

export const DEFAULT_POSTGRES_POOL = 10
export const DEFAULT_POSTGRES_TIMEOUT_MS = 5000

export const DEFAULT_SHUTDOWN_TIMEOUT = 10_000
export const DEFAULT_METRICS_HOST = '127.0.0.1'

export interface AdminAuthSettings {
  type: 'credentials'
  users: Array<{ username: string; password: string; permissions: string | string[] }>
  default?: { permissions: string | string[] } | undefined
  sessionExpiryTime?: number | undefined
  clients?: string[] | undefined
  throttle?:
    | {
        windowSeconds?: number | undefined
        maxFailuresPerUser?: number | undefined
        maxFailuresPerAddress?: number | undefined
        inFlightAllowance?: number | undefined
        knownClientDays?: number | undefined
      }
    | undefined
  /** Lifetimes of named API tokens, in seconds. */
  apiTokens?:
    | {
        expiryTime?: number | undefined
        maxExpiryTime?: number | undefined
        allowNoExpiry?: boolean | undefined
      }
    | undefined
  /** Bounds of the queue in front of password verification; by default derived from its measured rate. */
  loginQueue?: { maxWaiting?: number | undefined; maxWaitingKnown?: number | undefined } | undefined
}

export const DEFAULT_HOST = '127.0.0.1'
export const DEFAULT_PORT = 1880
const MAX_API_MAX_LENGTH = 100 * 1024 * 1024
/**
 * A size as Node-RED takes it (it hands these strings to the `bytes` package): whole bytes with an
 * optional `b`, or a number, possibly with decimals, and kb, mb, gb, tb or pb (powers of 1024, any
 * case). Only the shape is checked here; `bytes` does the arithmetic. Anything `bytes` would read
 * loosely ("1.5", "10 apples") is refused instead.
 */
const SIZE = /^(\d+ *b?|\d+(\.\d+)? *(kb|mb|gb|tb|pb))$/i
const SIZE_MESSAGE = 'must be a number of bytes or a size such as "64kb" or "1mb"'

/** A hundred years: the longest an API token may be allowed to live. */
const MAX_API_TOKEN_SECONDS = 100 * 365 * 86_400
const PERMISSION = /^(\*|read|write|[a-z][a-zA-Z0-9_-]*\.(read|write))$/
const ADMIN_ROOT = /^(\/[A-Za-z0-9._~!$&'()*+,;=:@-]+)*\/?$/

const text = (what: string) =>
  v.pipe(v.string(`must be a string (${what})`), v.nonEmpty(`must not be empty (${what})`))
const whole = (min: number, max: number) =>
  v.pipe(
    v.number('must be a number'),
    v.integer('must be a whole number'),
    v.minValue(min, `must be at least ${min}`),
    v.maxValue(max, `must be at most ${max}`),
  )
const permissionWord = v.pipe(
  v.string('must be a string'),
  v.regex(
    PERMISSION,
    (issue) => `${issue.received} is not a permission (use *, read, write, or <resource>.read|write)`,
  ),
)
const permissions = v.union(
  [permissionWord, v.pipe(v.array(permissionWord), v.nonEmpty('must list at least one permission'))],
  // Reached only when the value is neither a string nor a list: those report their own issues.
  'must be a permission or a non-empty list of permissions (e.g. "*" or ["read"])',
)

const user = v.strictObject(
  {
    username: text('a username'),
    password: v.pipe(
      v.string('must be a string (an argon2 hash made by `flowadmin hash-pw`)'),
      v.startsWith('$argon2', 'must be an argon2 hash made by `flowadmin hash-pw`, not a plain password'),
    ),
    permissions,
  },
  unknownKey,
)

const adminAuth = v.strictObject(
  {
    type: v.literal('credentials', 'must be "credentials"'),
    users: v.pipe(
      v.array(user, 'must be a list of users'),
      v.nonEmpty('must list at least one user'),
      v.check(
        (users) => new Set(users.map((entry) => entry.username)).size === users.length,
        (issue) => `usernames must be unique (${duplicates(issue.input as Array<{ username: string }>)})`,
      ),
    ),
    default: v.optional(v.strictObject({ permissions }, unknownKey)),
    sessionExpiryTime: v.optional(whole(1, 2_147_483_647)),
    clients: v.optional(v.array(text('a client id'), 'must be a list of client ids')),
    throttle: v.optional(
      v.strictObject(
        {
          windowSeconds: v.optional(whole(1, 31_536_000)),
          maxFailuresPerUser: v.optional(whole(1, 1_000_000)),
          maxFailuresPerAddress: v.optional(whole(1, 1_000_000)),
          inFlightAllowance: v.optional(whole(1, 1_000)),
          knownClientDays: v.optional(whole(0, 3_650)),
        },
        unknownKey,
      ),
    ),
    loginQueue: v.optional(
      v.strictObject(
        {
          maxWaiting: v.optional(whole(0, 100_000)),
          maxWaitingKnown: v.optional(whole(0, 100_000)),
        },
        unknownKey,
      ),
    ),
    apiTokens: v.optional(
      v.pipe(
        v.strictObject(
          {
            expiryTime: v.optional(whole(1, MAX_API_TOKEN_SECONDS)),
            maxExpiryTime: v.optional(whole(1, MAX_API_TOKEN_SECONDS)),
            allowNoExpiry: v.optional(v.boolean('must be true or false')),
          },
          unknownKey,
        ),
        v.check(
          ({ expiryTime, maxExpiryTime }) =>
            (expiryTime ?? DEFAULT_API_TOKENS.expiryTime) <=
            (maxExpiryTime ?? DEFAULT_API_TOKENS.maxExpiryTime),
          'expiryTime must not be longer than maxExpiryTime',
        ),
      ),
    ),
  },
  unknownKey,
)

const issueOf = (problem: (value: string) => string | null) =>
  v.rawCheck<string>(({ dataset, addIssue }) => {
    if (!dataset.typed) return
    const message = problem(dataset.value)
    if (message !== null) addIssue({ message })
  })

const origins = v.union(
  [
    v.pipe(v.string(), issueOf(originProblem)),
    v.pipe(v.array(v.pipe(v.string(), issueOf(originProblem))), v.nonEmpty('must list at least one origin')),
  ],
  'must be an origin such as "https://editor.example" or a non-empty list of them',
)

const sizeText = v.pipe(
  v.string(),
  v.regex(SIZE, SIZE_MESSAGE),
  v.transform((text) => bytes.parse(text) as number),
)

const milliseconds = whole(1, 3_600_000)

// The URL may hold a password: no message here repeats the value.
const postgres = v.strictObject(
  {
    url: v.optional(
      v.pipe(
        v.string('must be a string'),
        v.check(
          (url) => /^postgres(ql)?:\/\/./.test(url) && URL.canParse(url),
          'must be a URL such as "postgres://user:password@host:5432/database"',
        ),
      ),
    ),
    pool: v.optional(whole(1, 1000)),
    timeoutMs: v.optional(whole(100, 600_000)),
  },
  unknownKey,
)

const httpServer = v.pipe(
  v.strictObject(
    {
      headersTimeout: v.optional(milliseconds, DEFAULT_HTTP_LIMITS.headersTimeout),
      requestTimeout: v.optional(milliseconds, DEFAULT_HTTP_LIMITS.requestTimeout),
      keepAliveTimeout: v.optional(milliseconds, DEFAULT_HTTP_LIMITS.keepAliveTimeout),
      maxHeaderSize: v.optional(whole(1024, 1_048_576), DEFAULT_HTTP_LIMITS.maxHeaderSize),
    },
    unknownKey,
  ),
  v.check(
    (limits) => limits.headersTimeout <= limits.requestTimeout,
    (issue) =>
      `headersTimeout (${(issue.input as HttpLimits).headersTimeout}) must not be longer than requestTimeout (${(issue.input as HttpLimits).requestTimeout})`,
  ),
)

// An object is checked field by field, so its messages name the field; anything else is one message.
const metricsListener = v.strictObject(
  { host: v.optional(text('a loopback address')), port: whole(0, 65_535) },
  unknownKey,
)
const metrics = v.lazy((input) =>
  typeof input === 'object' && input !== null && !Array.isArray(input)
    ? metricsListener
    : v.boolean('must be true, false or {"host": "127.0.0.1", "port": <port>}'),
)

const paletteRules = v.array(
  v.pipe(v.string('must be a string'), issueOf(ruleProblem)),
  'must be a list of module names or patterns such as "node-red-contrib-*" or "some-module@<2"',
)

const externalModules = v.strictObject(
  {
    palette: v.optional(
      v.strictObject(
        {
          allowInstall: v.optional(v.boolean('must be true or false')),
          allowUpload: v.optional(v.boolean('must be true or false')),
          allowList: v.optional(paletteRules),
          denyList: v.optional(paletteRules),
          allowScripts: v.optional(v.boolean('must be true or false')),
          registry: v.optional(
            v.pipe(
              v.string('must be a string'),
              issueOf((url) => (urlProblem(url) === null ? null : 'must be an http or https URL')),
            ),
          ),
          timeout: v.optional(whole(1, 3_600)),
          wait: v.optional(whole(0, 600)),
        },
        unknownKey,
      ),
    ),
  },
  unknownKey,
)

const schema = v.strictObject(
  {
    uiHost: v.optional(text('a host name or address')),
    uiPort: v.optional(whole(0, 65_535)),
    userDir: v.optional(text('a folder')),
    httpAdminRoot: v.optional(
      v.pipe(v.string('must be a string'), v.regex(ADMIN_ROOT, 'must be "" or a path such as "/admin"')),
    ),
    storage: v.optional(
      v.picklist(['sqlite', 'memory', 'postgres'], 'must be "sqlite", "memory" or "postgres"'),
    ),
    postgres: v.optional(postgres),
    adminAuth: v.optional(adminAuth),
    auditLog: v.optional(
      v.union(
        [v.picklist(['stdout', 'off']), v.strictObject({ file: text('a file path') }, unknownKey)],
        'must be "stdout", "off" or {"file": "<path>"}',
      ),
    ),
    trustProxy: v.optional(
      v.array(
        v.pipe(v.string('must be a string'), issueOf(trustProxyProblem)),
        'must be a list of addresses',
      ),
    ),
    httpAdminCors: v.optional(v.strictObject({ origin: origins }, unknownKey)),
    apiMaxLength: v.optional(
      v.pipe(v.union([v.number(), sizeText], SIZE_MESSAGE), whole(1, MAX_API_MAX_LENGTH)),
    ),
    httpServer: v.optional(httpServer),
    metrics: v.optional(metrics),
    shutdownTimeout: v.optional(whole(0, 3_600_000)),
    console: v.optional(v.boolean('must be true or false')),
    externalModules: v.optional(externalModules),
  },
  unknownKey,
)

export type SettingsInput = v.InferInput<typeof schema>

/** The message of a strict object's own issues: an unknown key, a missing key, or not an object. */
function unknownKey(issue: v.StrictObjectIssue): string {
  if (issue.expected === 'never') return 'unknown setting'
  if (issue.expected?.startsWith('"')) return 'is required'
  return 'must be an object'
}

function duplicates(users: Array<{ username: string }>): string {
  const seen = new Set<string>()
  const twice = new Set<string>()
  for (const { username } of users) (seen.has(username) ? twice : seen).add(username)
  return [...twice].join(', ')
}

/** `adminAuth.users[0].permissions`, from a valibot issue path. */
function fieldOf(issue: v.BaseIssue<unknown>): string {
  let field = ''
  for (const item of issue.path ?? []) {
    const key = item.key
    if (typeof key === 'number') field += `[${key}]`
    else field += field === '' ? String(key) : `.${String(key)}`
  }
  return field
}

/**
 * Validates a settings object. `source` names it in messages (the file as the user gave it);
 * relative paths in it resolve against `baseDir`.
 */
export function parseSettings(input: unknown, source: string, baseDir: string): Settings {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new SettingsError(`${source}: the settings must be an object`)
  }
  const result = v.safeParse(schema, input, { abortEarly: false })
  if (!result.success) {
    const lines = result.issues.map((issue) => {
      const field = fieldOf(issue)
      return `${source}: ${field === '' ? '' : `${field}: `}${issue.message}`
    })
    throw new SettingsError(lines.join('\n'))
  }
  const parsed = result.output
  if (parsed.postgres !== undefined && parsed.storage !== 'postgres') {
    throw new SettingsError(`${source}: postgres: is set, but storage is not "postgres"`)
  }
  return {
    uiHost: parsed.uiHost ?? DEFAULT_HOST,
    uiPort: parsed.uiPort ?? DEFAULT_PORT,
    userDir: path.resolve(baseDir, parsed.userDir ?? '.'),
    httpAdminRoot: (parsed.httpAdminRoot ?? '').replace(/\/$/, ''),
    storage: parsed.storage ?? 'sqlite',
    postgres: {
      url: parsed.postgres?.url ?? null,
      pool: parsed.postgres?.pool ?? DEFAULT_POSTGRES_POOL,
      timeoutMs: parsed.postgres?.timeoutMs ?? DEFAULT_POSTGRES_TIMEOUT_MS,
    },
    adminAuth: parsed.adminAuth ?? null,
    auditLog:
      typeof parsed.auditLog === 'object'
        ? { file: path.resolve(baseDir, parsed.auditLog.file) }
        : (parsed.auditLog ?? 'stdout'),
    trustProxy: parsed.trustProxy ?? [],
    httpAdminCors:
      parsed.httpAdminCors === undefined ? null : { origins: [parsed.httpAdminCors.origin].flat() },
    apiMaxLength: parsed.apiMaxLength ?? DEFAULT_MAX_BODY_BYTES,
    httpServer: parsed.httpServer ?? { ...DEFAULT_HTTP_LIMITS },
    metrics:
      typeof parsed.metrics === 'object'
        ? { host: parsed.metrics.host ?? DEFAULT_METRICS_HOST, port: parsed.metrics.port }
        : parsed.metrics === false
          ? 'off'
          : 'api',
    shutdownTimeout: parsed.shutdownTimeout ?? DEFAULT_SHUTDOWN_TIMEOUT,
    console: parsed.console ?? true,
    palette: { ...DEFAULT_PALETTE, ...parsed.externalModules?.palette },
  }
}

/**
 * Reads and validates a settings file: JSON (`.json`), or an ES module (`.js`, `.mjs`) whose
 * default export is the settings object. Without a file, the defaults with `cwd` as userDir.
 */
export async function loadSettings(file?: string, cwd = process.cwd()): Promise<Settings> {
  if (file === undefined) return parseSettings({}, 'settings', cwd)
  const absolute = path.resolve(cwd, file)
  const info = await stat(absolute).catch(() => null)
  if (info === null) throw new SettingsError(`${file}: settings file not found`)
  if (!info.isFile()) throw new SettingsError(`${file}: not a file`)

  const extension = path.extname(absolute).toLowerCase()
  let raw: unknown
  if (extension === '.js' || extension === '.mjs') {
    raw = await importSettings(absolute, file)
  } else if (extension === '.json') {
    const source = await readFile(absolute, 'utf8').catch((error: unknown) => {
      throw new SettingsError(`${file}: cannot read: ${(error as NodeJS.ErrnoException).code ?? error}`)
    })
    try {
      raw = JSON.parse(source)
    } catch (error) {
      throw new SettingsError(`${file}: not valid JSON: ${messageOf(error)}`)
    }
  } else {
    throw new SettingsError(`${file}: settings must be a .json, .js or .mjs file`)
  }
  return parseSettings(raw, file, path.dirname(absolute))
}

let imports = 0

async function importSettings(absolute: string, file: string): Promise<unknown> {
  let module: { default?: unknown }
  try {
    // A query of its own each time, so reading the file again (on SIGHUP) sees its new content.
    module = await import(`${pathToFileURL(absolute).href}?read=${++imports}`)
  } catch (error) {
    throw new SettingsError(`${file}: cannot load: ${messageOf(error)}`)
  }
  if (module.default === undefined) {
    throw new SettingsError(`${file}: must export the settings object as its default export`)
  }
  return module.default
}
