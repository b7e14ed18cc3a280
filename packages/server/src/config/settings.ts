import { readFile, stat } from 'node:fs/promises'
import * as path from 'node:path'
import { pathToFileURL } from 'node:url'
import { DEFAULT_MAX_BODY_BYTES, normaliseBasePath, originProblem } from '@flowadmin/adapter-http'
import {
  DEFAULT_API_TOKENS,
  FLOWADMIN_AUDIENCE,
  isSecretDigest,
  messageOf,
  PERMISSION_WORD,
} from '@flowadmin/core'
import bytes from 'bytes'
import * as v from 'valibot'
import { ruleProblem, urlProblem } from '../adapters/palette-policy.js'
import { SettingsError } from '../errors.js'
import { DEFAULT_HTTP_LIMITS, type HttpLimits } from '../http/listen.js'
import { trustProxyProblem } from '../http/proxy.js'
import { evaluateInChild } from './child-eval.js'
import { jsonMistake } from './json-mistake.js'

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
  /** How long the trail keeps events, and how many at most (the oldest go first). */
  auditTrail: { maxAgeDays: number; maxEvents: number }
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
  /**
   * Fleet mode: the module routes state the desired modules of the Node-RED instances whose
   * helper reports here; null: off, the module routes manage `userDir`.
   */
  fleet: { prune: boolean; answerWaitMs: number } | null
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
/** The trail keeps events for 90 days, and 10 million at most. */
export const DEFAULT_AUDIT_TRAIL = { maxAgeDays: 90, maxEvents: 10_000_000 }
export const DEFAULT_METRICS_HOST = '127.0.0.1'

export interface AdminAuthSettings {
  /** `credentials` (passwords) or `strategy` (Node-RED's word for a sign-in elsewhere). */
  type: 'credentials' | 'strategy'
  /** Empty when everyone signs in with the identity provider. */
  users: Array<{ username: string; password: string; permissions: string | string[] }>
  /** Single sign-on with the organisation's OpenID provider. */
  oidc?: OidcSettings | undefined
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
  /** Programs (Node-RED instances) that ask about tokens: an id and a secret's hash each. */
  resourceServers?: Array<{ id: string; secret: string; redirectUris?: string[] | undefined }> | undefined
  /** People's second factors, with the key resolved (from the file or the environment); absent: none. */
  mfa?: MfaSettings | undefined
  /** Passkeys: the relying party (its id, name and origins); absent: no passkeys. */
  webauthn?: WebAuthnSettings | undefined
}

/** `adminAuth.webauthn`: the relying party of passkeys. */
export interface WebAuthnSettings {
  /** The relying party id: a host name each origin's host is, or ends with `.` and it. */
  rpId: string
  /** The name browsers show when a passkey is made; default `flowadmin`. */
  rpName: string
  /** The origins (`https://host[:port]`) flowadmin's pages are served from. */
  origins: string[]
}

export const DEFAULT_RP_NAME = 'flowadmin'

/** `adminAuth.mfa`, with the key resolved. */
export interface MfaSettings {
  /** The key TOTP secrets are sealed with (at least 32 characters). */
  key: string
  /** The name authenticator apps show beside the username; default `flowadmin`. */
  issuer: string
  /**
   * Who must have a second factor to sign in with a password: `none` (default), `everyone`, or
   * whoever holds any of these permissions.
   */
  require: 'none' | 'everyone' | string[]
}

/** Where the second-factor key comes from when the settings file does not hold it. */
export const MFA_KEY_ENV = 'FLOWADMIN_MFA_KEY'
export const DEFAULT_MFA_ISSUER = 'flowadmin'
/** The fewest characters of a second-factor key (it should hold at least 256 random bits). */
export const MIN_MFA_KEY_LENGTH = 32

/** `adminAuth.oidc`, with the client secret resolved (from the file or the environment). */
export interface OidcSettings {
  issuer: string
  clientId: string
  clientSecret: string
  label: string
  /** Default `preferred_username`. */
  usernameClaim?: string | undefined
  /** Default `openid profile email`. */
  scope?: string | undefined
  /** Default: the origin the browser used, then `<httpAdminRoot>/auth/strategy/callback`. */
  redirectUri?: string | undefined
  /** Default 28800 (eight hours). */
  maxSessionSeconds?: number | undefined
  apiTokensOutliveSessions?: boolean | undefined
  permissions: { claim: string; map: Record<string, string | string[]> }
}

/** Where the client secret comes from when the settings file does not hold it. */
export const OIDC_SECRET_ENV = 'FLOWADMIN_OIDC_CLIENT_SECRET'
export const DEFAULT_OIDC_LABEL = 'Sign in with single sign-on'

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
const ADMIN_ROOT = /^(\/[A-Za-z0-9._~!$&'()*+,;=:@-]+)*\/?$/

/** A relying party id: a DNS host name (`localhost` included), never an IP address. */
const isRpId = (host: string) =>
  /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/.test(host) &&
  !/^[0-9.]+$/.test(host)

/** An absolute http(s) URL that is an origin alone: no path, query, fragment or credentials. */
function isOrigin(text: string): boolean {
  if (!URL.canParse(text)) return false
  const url = new URL(text)
  return (
    (url.protocol === 'https:' || url.protocol === 'http:') &&
    url.username === '' &&
    url.password === '' &&
    url.search === '' &&
    url.hash === '' &&
    url.pathname === '/' &&
    !text.endsWith('/')
  )
}

/** Whether `host` (an origin's) is the relying party id or one of its subdomains. */
const underRpId = (host: string, rpId: string) => host === rpId || host.endsWith(`.${rpId}`)

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
    PERMISSION_WORD,
    (issue) =>
      `${issue.received} is not a permission (use *, read, write, *.read, *.write, or <resource>.read|write)`,
  ),
)
const permissions = v.union(
  [permissionWord, v.pipe(v.array(permissionWord), v.nonEmpty('must list at least one permission'))],
  // Reached only when the value is neither a string nor a list: those report their own issues.
  'must be a permission or a non-empty list of permissions (e.g. "*" or ["read"])',
)

/**
 * A password's (or secret's) hash: argon2 as `flowadmin hash-pw` makes it, or bcrypt as Node-RED's
 * settings.js holds it (`$2a$`, `$2b$`, `$2y$`; accepted so users move without new passwords).
 */
const BCRYPT = /^\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}$/
const passwordHash = (what: string) =>
  v.pipe(
    v.string(`must be a string (${what} made by \`flowadmin hash-pw\`)`),
    v.check(
      (hash) => hash.startsWith('$argon2') || BCRYPT.test(hash),
      (issue) =>
        (issue.input as string).startsWith('$2')
          ? 'is not a whole bcrypt hash ($2a$, $2b$ or $2y$, a cost, then 53 characters)'
          : `must be ${what} made by \`flowadmin hash-pw\` (or a bcrypt hash from Node-RED), not a plain password`,
    ),
  )

/** True for a bcrypt hash (from Node-RED's settings.js), which `flowadmin hash-pw` should replace. */
export const isBcryptHash = (hash: string): boolean => BCRYPT.test(hash)

const user = strictObject({
  username: text('a username'),
  password: passwordHash('an argon2 hash'),
  permissions,
})

/**
 * Why a resource server's redirect URI is unusable, or null: an absolute http(s) URL without
 * credentials or fragment (RFC 6749 §3.1.2). It is compared exactly, as written.
 */
function redirectUriProblem(text: string): string | null {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return 'must be an absolute URL such as "https://nodered.example/auth/strategy/callback"'
  }
  // The authorization code and the person's session travel to it.
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)))
    return 'must be an https URL (http only on 127.0.0.1, ::1 or localhost): the sign-in’s code is sent to it'
  if (url.username !== '' || url.password !== '' || text.includes('#'))
    return 'must not hold credentials or a #fragment'
  return null
}

const issueOf = (problem: (value: string) => string | null) =>
  v.rawCheck<string>(({ dataset, addIssue }) => {
    if (!dataset.typed) return
    const message = problem(dataset.value)
    if (message !== null) addIssue({ message })
  })

/**
 * A resource server's secret as the settings hold it: the digest of a machine secret from
 * `flowadmin secret` (`sha256:` and 64 lowercase hex digits), or a password hash from before
 * machine secrets (argon2 from `flowadmin hash-pw`, bcrypt from Node-RED), still accepted.
 */
const machineSecret = v.pipe(
  v.string('must be a string: the digest that `flowadmin secret` prints (sha256:…)'),
  v.check(
    (secret) => isSecretDigest(secret) || secret.startsWith('$argon2') || BCRYPT.test(secret),
    (issue) => {
      const secret = issue.input as string
      if (secret.startsWith('sha256:'))
        return 'is not a whole digest: sha256: then 64 lowercase hex digits, as `flowadmin secret` prints it'
      if (secret.startsWith('$2'))
        return 'is not a whole bcrypt hash ($2a$, $2b$ or $2y$, a cost, then 53 characters)'
      return 'must be the digest that `flowadmin secret` prints (sha256:…), not the secret itself'
    },
  ),
)

/** Why a resource server id is unusable, or null: it travels in HTTP Basic, before a ":". */
export function resourceServerIdProblem(id: string): string | null {
  if (!/^[\x21-\x7e]+$/.test(id)) return 'must be printable ASCII without spaces (it is sent in HTTP Basic)'
  if (id.includes(':')) return 'must not contain ":" (HTTP Basic separates id and secret with it)'
  if (id.includes('/'))
    return 'must not contain "/" (the trail names an instance <resource server>/<instance>)'
  return null
}

const resourceServer = strictObject({
  id: v.pipe(text('a resource server id'), issueOf(resourceServerIdProblem)),
  secret: machineSecret,
  redirectUris: v.optional(
    v.array(
      v.pipe(text('a redirect URI'), issueOf(redirectUriProblem)),
      'must be a list of redirect URIs (where its editors come back after signing in)',
    ),
  ),
})

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]'])

/** Why a URL of the identity provider's settings is unusable, or null: https, or http on loopback. */
function providerUrlProblem(text: string): string | null {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return 'must be a URL such as "https://id.example.com/realms/ops"'
  }
  if (url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))) {
    return url.username === '' && url.password === '' && url.hash === ''
      ? null
      : 'must not hold credentials or a #fragment'
  }
  return 'must be an https URL (http only on 127.0.0.1, ::1 or localhost)'
}

const oidc = strictObject({
  issuer: v.pipe(text('the provider’s issuer URL'), issueOf(providerUrlProblem)),
  clientId: text('the client id registered at the provider'),
  clientSecret: v.optional(text(`the client secret, or set ${OIDC_SECRET_ENV}`)),
  label: v.optional(text('the sign-in button’s label')),
  usernameClaim: v.optional(text('a claim name')),
  scope: v.optional(
    v.pipe(
      text('scopes separated by spaces'),
      v.check((scope) => scope.split(' ').includes('openid'), 'must include openid'),
    ),
  ),
  redirectUri: v.optional(v.pipe(text('a URL'), issueOf(providerUrlProblem))),
  maxSessionSeconds: v.optional(whole(60, 31_536_000)),
  apiTokensOutliveSessions: v.optional(v.boolean('must be true or false')),
  permissions: strictObject({
    claim: text('the claim that lists the person’s groups, e.g. "groups"'),
    map: v.pipe(
      v.record(v.string(), permissions, 'must map group names to permissions'),
      v.check((map) => Object.keys(map).length > 0, 'must map at least one group'),
    ),
  }),
})

const adminAuth = strictObject({
  type: v.optional(
    v.picklist(['credentials', 'strategy'], 'must be "credentials" (passwords) or "strategy" (oidc)'),
  ),
  users: v.optional(
    v.pipe(
      v.array(user, 'must be a list of users'),
      v.nonEmpty('must list at least one user'),
      v.check(
        (users) => new Set(users.map((entry) => entry.username)).size === users.length,
        (issue) => `usernames must be unique (${duplicates(issue.input as Array<{ username: string }>)})`,
      ),
    ),
  ),
  oidc: v.optional(oidc),
  default: v.optional(strictObject({ permissions })),
  sessionExpiryTime: v.optional(whole(1, 2_147_483_647)),
  clients: v.optional(v.array(text('a client id'), 'must be a list of client ids')),
  throttle: v.optional(
    strictObject({
      windowSeconds: v.optional(whole(1, 31_536_000)),
      maxFailuresPerUser: v.optional(whole(1, 1_000_000)),
      maxFailuresPerAddress: v.optional(whole(1, 1_000_000)),
      inFlightAllowance: v.optional(whole(1, 1_000)),
      knownClientDays: v.optional(whole(0, 3_650)),
    }),
  ),
  resourceServers: v.optional(
    v.pipe(
      v.array(resourceServer, 'must be a list of resource servers ({"id", "secret"})'),
      v.check(
        (servers) => new Set(servers.map((server) => server.id)).size === servers.length,
        'resource server ids must be unique',
      ),
      v.check(
        (servers) => !servers.some((server) => server.id === FLOWADMIN_AUDIENCE),
        `a resource server may not be called ${FLOWADMIN_AUDIENCE}: that names flowadmin's own tokens`,
      ),
    ),
  ),
  mfa: v.optional(
    strictObject({
      key: v.optional(
        v.pipe(
          text(`a key of at least ${MIN_MFA_KEY_LENGTH} random characters, or set ${MFA_KEY_ENV}`),
          v.minLength(MIN_MFA_KEY_LENGTH, `must have at least ${MIN_MFA_KEY_LENGTH} characters`),
        ),
      ),
      issuer: v.optional(text('the name authenticator apps show')),
      require: v.optional(
        v.union(
          [
            v.picklist(['none', 'everyone']),
            v.pipe(v.array(permissionWord), v.nonEmpty('must list at least one permission')),
          ],
          'must be "none", "everyone", or a non-empty list of permissions (e.g. ["*"])',
        ),
      ),
    }),
  ),
  webauthn: v.optional(
    strictObject({
      rpId: v.pipe(
        text('the host name passkeys are bound to, e.g. "admin.example.com"'),
        v.check(
          isRpId,
          'must be a lower-case host name (no scheme, port or path; not an IP address), e.g. "admin.example.com"',
        ),
      ),
      rpName: v.optional(text('the name browsers show when a passkey is made')),
      origins: v.pipe(
        v.array(
          v.pipe(
            text('an origin such as "https://admin.example.com"'),
            v.check(
              isOrigin,
              'must be an http(s) origin: scheme, host and port only, e.g. "https://admin.example.com"',
            ),
          ),
          'must be a list of origins',
        ),
        v.nonEmpty('must list at least one origin'),
      ),
    }),
  ),
  loginQueue: v.optional(
    strictObject({
      maxWaiting: v.optional(whole(0, 100_000)),
      maxWaitingKnown: v.optional(whole(0, 100_000)),
    }),
  ),
  apiTokens: v.optional(
    v.pipe(
      strictObject({
        expiryTime: v.optional(whole(1, MAX_API_TOKEN_SECONDS)),
        maxExpiryTime: v.optional(whole(1, MAX_API_TOKEN_SECONDS)),
        allowNoExpiry: v.optional(v.boolean('must be true or false')),
      }),
      v.check(
        ({ expiryTime, maxExpiryTime }) =>
          (expiryTime ?? DEFAULT_API_TOKENS.expiryTime) <=
          (maxExpiryTime ?? DEFAULT_API_TOKENS.maxExpiryTime),
        'expiryTime must not be longer than maxExpiryTime',
      ),
    ),
  ),
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
const postgres = strictObject({
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
})

const httpServer = v.pipe(
  strictObject({
    headersTimeout: v.optional(milliseconds, DEFAULT_HTTP_LIMITS.headersTimeout),
    requestTimeout: v.optional(milliseconds, DEFAULT_HTTP_LIMITS.requestTimeout),
    keepAliveTimeout: v.optional(milliseconds, DEFAULT_HTTP_LIMITS.keepAliveTimeout),
    maxHeaderSize: v.optional(whole(1024, 1_048_576), DEFAULT_HTTP_LIMITS.maxHeaderSize),
  }),
  v.check(
    (limits) => limits.headersTimeout <= limits.requestTimeout,
    (issue) =>
      `headersTimeout (${(issue.input as HttpLimits).headersTimeout}) must not be longer than requestTimeout (${(issue.input as HttpLimits).requestTimeout})`,
  ),
)

// An object is checked field by field, so its messages name the field; anything else is one message.
const metricsListener = strictObject({ host: v.optional(text('a loopback address')), port: whole(0, 65_535) })
const metrics = v.lazy((input) =>
  typeof input === 'object' && input !== null && !Array.isArray(input)
    ? metricsListener
    : v.boolean('must be true, false or {"host": "127.0.0.1", "port": <port>}'),
)

const paletteRules = v.array(
  v.pipe(v.string('must be a string'), issueOf(ruleProblem)),
  'must be a list of module names or patterns such as "node-red-contrib-*" or "some-module@<2"',
)

const externalModules = strictObject({
  palette: v.optional(
    strictObject({
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
    }),
  ),
})

const fleet = strictObject({
  modules: v.boolean('must be true or false'),
  prune: v.optional(v.boolean('must be true or false')),
  wait: v.optional(whole(0, 60)),
})

const schema = strictObject({
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
      [v.picklist(['stdout', 'off']), strictObject({ file: text('a file path') })],
      'must be "stdout", "off" or {"file": "<path>"}',
    ),
  ),
  auditTrail: v.optional(
    strictObject({
      maxAgeDays: v.optional(whole(1, 36_500)),
      maxEvents: v.optional(whole(1000, 1_000_000_000)),
    }),
  ),
  trustProxy: v.optional(
    v.array(v.pipe(v.string('must be a string'), issueOf(trustProxyProblem)), 'must be a list of addresses'),
  ),
  httpAdminCors: v.optional(strictObject({ origin: origins })),
  apiMaxLength: v.optional(
    v.pipe(v.union([v.number(), sizeText], SIZE_MESSAGE), whole(1, MAX_API_MAX_LENGTH)),
  ),
  httpServer: v.optional(httpServer),
  metrics: v.optional(metrics),
  shutdownTimeout: v.optional(whole(0, 3_600_000)),
  console: v.optional(v.boolean('must be true or false')),
  externalModules: v.optional(externalModules),
  fleet: v.optional(fleet),
})

export type SettingsInput = v.InferInput<typeof schema>

/**
 * An object that takes only these keys. An unknown key is reported with the nearest known one,
 * when it is close enough to be a slip (`uiPrt`: did you mean uiPort?).
 */
function strictObject<const TEntries extends v.ObjectEntries>(entries: TEntries) {
  const known = Object.keys(entries)
  return v.strictObject(entries, (issue: v.StrictObjectIssue) => {
    if (issue.expected === 'never') {
      const key = issue.path?.[0]?.key
      const nearest = typeof key === 'string' ? nearestWord(key, known) : null
      if (nearest !== null) suggestions.set(issue, nearest)
      return 'unknown setting'
    }
    if (issue.expected?.startsWith('"')) return 'is required'
    return 'must be an object'
  })
}

/** The known key suggested for an unknown-key issue; its field is completed once its path is. */
const suggestions = new WeakMap<object, string>()

/** Longest key compared for a suggestion: anything longer is no slip of a known key. */
const MAX_SUGGESTED_FROM = 64

/**
 * The word of `words` nearest to `word` (case aside), when it is within a slip of it: one edit for
 * words of up to 4 characters, two up to 8, three beyond. Null when none is that close.
 */
function nearestWord(word: string, words: readonly string[]): string | null {
  if (word.length > MAX_SUGGESTED_FROM) return null
  const allowed = word.length <= 4 ? 1 : word.length <= 8 ? 2 : 3
  let best: string | null = null
  let bestDistance = allowed + 1
  for (const candidate of words) {
    const distance = editDistance(word.toLowerCase(), candidate.toLowerCase())
    if (distance < bestDistance) {
      best = candidate
      bestDistance = distance
    }
  }
  return best
}

/**
 * Edits (insert, delete, replace, swap two neighbours) that turn `a` into `b`: the optimal string
 * alignment distance.
 */
function editDistance(a: string, b: string): number {
  let before: number[] = []
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let distance = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + cost,
      )
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        distance = Math.min(distance, (before[j - 2] as number) + 1)
      }
      current.push(distance)
    }
    before = previous
    previous = current
  }
  return previous[b.length] as number
}

function duplicates(users: Array<{ username: string }>): string {
  const seen = new Set<string>()
  const twice = new Set<string>()
  for (const { username } of users) (seen.has(username) ? twice : seen).add(username)
  return [...twice].join(', ')
}

/** `adminAuth.users[0].permissions`, from a valibot issue path (or the path up to its last key). */
function fieldOf(path: readonly { key: unknown }[]): string {
  let field = ''
  for (const item of path) {
    const key = item.key
    if (typeof key === 'number') field += `[${key}]`
    else field += field === '' ? String(key) : `.${String(key)}`
  }
  return field
}

/** One line of a refusal: the field and the issue's message, with the key suggested for it. */
function issueLine(issue: v.BaseIssue<unknown>, source: string): string {
  const path = issue.path ?? []
  const field = fieldOf(path)
  const nearest = suggestions.get(issue)
  const hint =
    nearest === undefined ? '' : `; did you mean ${fieldOf([...path.slice(0, -1), { key: nearest }])}?`
  return `${source}: ${field === '' ? '' : `${field}: `}${issue.message}${hint}`
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
    throw new SettingsError(result.issues.map((issue) => issueLine(issue, source)).join('\n'))
  }
  const parsed = result.output
  if (parsed.postgres !== undefined && parsed.storage !== 'postgres') {
    throw new SettingsError(`${source}: postgres: is set, but storage is not "postgres"`)
  }
  return {
    uiHost: parsed.uiHost ?? DEFAULT_HOST,
    uiPort: parsed.uiPort ?? DEFAULT_PORT,
    userDir: path.resolve(baseDir, parsed.userDir ?? '.'),
    httpAdminRoot: normaliseBasePath(parsed.httpAdminRoot ?? ''),
    storage: parsed.storage ?? 'sqlite',
    postgres: {
      url: parsed.postgres?.url ?? null,
      pool: parsed.postgres?.pool ?? DEFAULT_POSTGRES_POOL,
      timeoutMs: parsed.postgres?.timeoutMs ?? DEFAULT_POSTGRES_TIMEOUT_MS,
    },
    adminAuth: parsed.adminAuth === undefined ? null : adminAuthOf(parsed.adminAuth, source),
    auditLog:
      typeof parsed.auditLog === 'object'
        ? { file: path.resolve(baseDir, parsed.auditLog.file) }
        : (parsed.auditLog ?? 'stdout'),
    auditTrail: { ...DEFAULT_AUDIT_TRAIL, ...parsed.auditTrail },
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
    fleet: parsed.fleet?.modules
      ? { prune: parsed.fleet.prune ?? false, answerWaitMs: (parsed.fleet.wait ?? 5) * 1000 }
      : null,
  }
}

/**
 * `adminAuth` as the server uses it: users always a list, the type named, the client secret taken
 * from the environment when the file has none. Refuses a scheme with no way to sign in.
 */
function adminAuthOf(parsed: v.InferOutput<typeof adminAuth>, source: string): AdminAuthSettings {
  const { oidc: sso, users, type, mfa, webauthn, ...rest } = parsed
  const problem = (field: string, message: string) =>
    new SettingsError(`${source}: adminAuth${field}: ${message}`)
  if (users === undefined && sso === undefined) {
    throw problem('', 'list users (adminAuth.users) or configure single sign-on (adminAuth.oidc), or both')
  }
  if (type === 'credentials' && users === undefined) {
    throw problem(
      '.users',
      'is required when type is "credentials"; for single sign-on alone, omit type or set it to "strategy"',
    )
  }
  if (type === 'strategy' && sso === undefined) throw problem('.oidc', 'is required when type is "strategy"')
  let oidcSettings: OidcSettings | undefined
  if (sso !== undefined) {
    const clientSecret = sso.clientSecret ?? process.env[OIDC_SECRET_ENV]
    if (clientSecret === undefined || clientSecret === '') {
      throw problem(
        '.oidc.clientSecret',
        `is required: set it here or in the environment as ${OIDC_SECRET_ENV}`,
      )
    }
    oidcSettings = { ...sso, clientSecret, label: sso.label ?? DEFAULT_OIDC_LABEL }
  }
  const mfaKey = mfa?.key ?? process.env[MFA_KEY_ENV]
  if (mfaKey !== undefined && mfaKey.length < MIN_MFA_KEY_LENGTH) {
    throw problem('.mfa.key', `${MFA_KEY_ENV} must have at least ${MIN_MFA_KEY_LENGTH} characters`)
  }
  if (mfa !== undefined && mfaKey === undefined) {
    throw problem('.mfa.key', `is required: set it here or in the environment as ${MFA_KEY_ENV}`)
  }
  if (webauthn !== undefined) {
    const outside = webauthn.origins.find((origin) => !underRpId(new URL(origin).hostname, webauthn.rpId))
    if (outside !== undefined) {
      throw problem(
        '.webauthn.origins',
        `${outside} is not on ${webauthn.rpId}: each origin's host must be rpId or end with .${webauthn.rpId}`,
      )
    }
  }
  return {
    ...rest,
    ...(mfaKey !== undefined && {
      mfa: { key: mfaKey, issuer: mfa?.issuer ?? DEFAULT_MFA_ISSUER, require: mfa?.require ?? 'none' },
    }),
    ...(webauthn !== undefined && {
      webauthn: {
        rpId: webauthn.rpId,
        rpName: webauthn.rpName ?? DEFAULT_RP_NAME,
        origins: webauthn.origins.map((origin) => new URL(origin).origin),
      },
    }),
    type: type ?? (users === undefined ? 'strategy' : 'credentials'),
    users: users ?? [],
    ...(oidcSettings !== undefined && { oidc: oidcSettings }),
  }
}

/** Where the settings of a start come from, and the flags that override some of them. */
export interface SettingsSource {
  /** A settings file: JSON, or an ES module whose default export is the settings object. */
  settingsFile?: string | undefined
  /** The settings themselves, when there is no file; validated alike, paths relative to `cwd`. */
  settings?: SettingsInput | undefined
  /** Overrides `uiHost`. */
  host?: string | undefined
  /** Overrides `uiPort`; 0 picks a free port. */
  port?: number | undefined
  /** Overrides `userDir`; relative to `cwd`. */
  userDir?: string | undefined
}

/** The settings of a start from this source: the file or object, then the overriding flags. */
export async function resolveSettings(source: SettingsSource, cwd: string): Promise<Settings> {
  const base =
    source.settingsFile !== undefined
      ? await loadSettings(source.settingsFile, cwd)
      : parseSettings(source.settings ?? {}, 'settings', cwd)
  return {
    ...base,
    uiHost: source.host ?? base.uiHost,
    uiPort: source.port ?? base.uiPort,
    userDir: source.userDir !== undefined ? path.resolve(cwd, source.userDir) : base.userDir,
  }
}

/**
 * Reads and validates a settings file: JSON (`.json`), or a module (`.js`, `.mjs`, ES or CommonJS)
 * whose default export is the settings object. Without a file, the defaults with `cwd` as userDir.
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
    raw = await evaluateSettings(absolute, file)
  } else if (extension === '.json') {
    const source = await readFile(absolute, 'utf8').catch((error: unknown) => {
      throw new SettingsError(`${file}: cannot read: ${(error as NodeJS.ErrnoException).code ?? error}`)
    })
    raw = parseJson(source.replace(/^\uFEFF/, ''), file)
  } else {
    throw new SettingsError(`${file}: settings must be a .json, .js or .mjs file`)
  }
  return parseSettings(raw, file, path.dirname(absolute))
}

/**
 * The JSON of a settings file. A mistake is reported at its line and column; the text is never
 * repeated (JSON.parse's messages may quote it, and it may hold a password).
 */
function parseJson(source: string, file: string): unknown {
  try {
    return JSON.parse(source)
  } catch {
    const mistake = jsonMistake(source)
    if (mistake === null) throw new SettingsError(`${file}: not valid JSON`)
    throw new SettingsError(`${file}:${mistake.line}:${mistake.column}: not valid JSON: ${mistake.problem}`)
  }
}

/** Marks a value JSON cannot carry (a function, a symbol, a bigint) on its way out of the child. */
const NOT_DATA = '\u0000flowadmin:not-data'

/**
 * Run by a child `node` with the settings module's URL: imports it (ES module or CommonJS, as
 * Node resolves it) and sends its default export back as JSON, or why it cannot.
 */
const EVALUATE = `
const NOT_DATA = ${JSON.stringify(NOT_DATA)}
const send = (message) => process.send(message, () => process.exit(0))
const messageOf = (error) => (error instanceof Error ? error.message : String(error)) || 'unknown error'
try {
  const exported = (await import(process.argv[1])).default
  if (exported === undefined) send({ missing: true })
  else {
    const marked = (key, value) =>
      typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint'
        ? { [NOT_DATA]: typeof value }
        : value
    let json
    try {
      json = JSON.stringify(exported, marked)
    } catch (error) {
      send({ notData: messageOf(error) })
    }
    if (json !== undefined) send({ json })
  }
} catch (error) {
  send({ failed: messageOf(error) })
}
`

type Evaluated = { missing: true } | { json: string } | { notData: string } | { failed: string }

/** A stand-in for a function of the settings module: it is refused by validation as one would be. */
function notData(): void {}

/**
 * The default export of a `.js`/`.mjs` settings file, evaluated in a child `node` process and
 * handed over as JSON. Importing it here would keep every version of the module for the life of
 * the process, one more at each reload (a module is never unloaded); the child ends with its
 * module, and each load reads the file and whatever it imports afresh. What the module prints
 * goes to standard error, never into the command's output or the audit lines on stdout.
 * Functions, symbols and bigints come back as functions, which validation refuses as before.
 */
async function evaluateSettings(absolute: string, file: string): Promise<unknown> {
  const outcome = await runSettingsModule(absolute).catch((error: unknown) => {
    throw new SettingsError(`${file}: cannot load: ${messageOf(error)}`)
  })
  if ('failed' in outcome) throw new SettingsError(`${file}: cannot load: ${outcome.failed}`)
  if ('notData' in outcome) {
    const reason = /circular/i.test(outcome.notData) ? 'this object refers to itself' : outcome.notData
    throw new SettingsError(
      `${file}: cannot load: the settings must be plain data (JSON values), and ${reason}`,
    )
  }
  if ('missing' in outcome) {
    throw new SettingsError(`${file}: must export the settings object as its default export`)
  }
  return JSON.parse(outcome.json, (_key, value: unknown) =>
    typeof value === 'object' && value !== null && NOT_DATA in value ? notData : value,
  )
}

function runSettingsModule(absolute: string): Promise<Evaluated> {
  return evaluateInChild(
    ['--input-type=module', '--eval', EVALUATE, pathToFileURL(absolute).href],
    'settings',
  ) as Promise<Evaluated>
}
