import { createHmac, hash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { stat } from 'node:fs/promises'
import { isIP } from 'node:net'
import * as path from 'node:path'
import { createHttpApp } from '@flowadmin/adapter-http'
import { createMemoryStores } from '@flowadmin/adapter-memory'
import type { PostgresStores } from '@flowadmin/adapter-postgres'
import { createSqliteStores, SCHEMA_VERSION as SQLITE_SCHEMA_VERSION } from '@flowadmin/adapter-sqlite'
import { consolePaths, createConsole } from '@flowadmin/console'
import {
  type Core,
  type CoreObserver,
  createCore,
  type Digest,
  type EventSink,
  type LoginQueueBounds,
  type ModuleInstaller,
  messageOf,
  type NodeSetLoader,
  type PasswordVerifier,
  type Stores,
} from '@flowadmin/core'
import { getConnInfo } from '@hono/node-server/conninfo'
import type { Context } from 'hono'
import { getPath } from 'hono/utils/url'
import { createArgon2Verifier, DEFAULT_VERIFY_CONCURRENCY } from './argon2.js'
import { type AuditLog, createAuditLog } from './audit.js'
import { EXIT_USAGE, SettingsError, StartupError } from './errors.js'
import { createFlowsTypeUsage } from './flows.js'
import { type Listener, listen } from './listen.js'
import { createLogger, type Log, type Logger, logTo } from './log.js'
import { type LoginQueueSizing, sizeLoginQueue } from './login-queue-sizing.js'
import { createMetrics, fanOut, metricsFetch } from './metrics.js'
import { createDiskLoader, type DiscoveredModule, discoverModules, toDescriptors } from './modules-on-disk.js'
import { createNpmInstaller, sweepStaging } from './npm-installer.js'
import { createPalettePolicy } from './palette-policy.js'
import { canonicalAddress, clientAddressOf, parseTrustedProxies } from './proxy.js'
import { createReadiness } from './readiness.js'
import { loadSettings, parseSettings, type Settings, type SettingsInput } from './settings.js'
import { startSweeper } from './sweeper.js'

/** The product version, from this package's manifest (one level above both src and dist). */
export const VERSION: string = JSON.parse(
  readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
).version

/**
 * SHA-256 on the event loop. Web Crypto's digest runs on libuv's thread pool, where it would
 * queue behind password hashing: every authenticated request would wait out a login storm.
 * `hash` is the one-shot form: a third of `createHash`'s cost for a token-sized input.
 */
const nodeDigest: Digest = {
  sha256: async (text) => hash('sha256', text, 'hex'),
  hmacSha256: async (key, text) => createHmac('sha256', key).update(text).digest('hex'),
}

export interface ServerOptions {
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
  /** Allows an unauthenticated API on a non-loopback address. */
  allowOpenAdmin?: boolean | undefined
  /** Where relative paths of flags resolve. Default: the current directory. */
  cwd?: string | undefined
  /**
   * The server's log (a pino logger): warnings (skipped packages, an open API), errors (the detail
   * of each 500, a refused reload) and notes (a reload applied). Default: `createLogger()`, JSON
   * lines on stderr.
   */
  logger?: Logger | undefined
  /** Receives audit lines when `auditLog` is "stdout". Default: process.stdout. */
  stdout?: ((text: string) => void) | undefined
  /** Milliseconds `close()` lets requests in flight finish. Default: the `shutdownTimeout` setting. */
  shutdownGraceMs?: number | undefined
}

/** What a reload of the settings file did. */
export type ReloadOutcome =
  | {
      ok: true
      /** How many users are configured now. */
      users: number
      /** Settings that changed in the file but take effect only after a restart. */
      needRestart: string[]
    }
  | { ok: false; message: string }

/**
 * Settings a running server takes from its file again: the users, their passwords and their
 * permissions. Every other setting needs a restart.
 */
export const RELOADED_SETTINGS: readonly string[] = ['adminAuth.users']

export interface RunningServer {
  /** Where the API answers, e.g. `http://127.0.0.1:1880` (with `httpAdminRoot` when set). */
  url: string
  host: string
  port: number
  /** The database file, `memory`, or `postgres host:port/database`. */
  storage: string
  authEnabled: boolean
  /** The settings in effect: those of the start, with the users of the last reload. */
  settings: Settings
  /** The bounds of the queue in front of password verification, as configured or derived. */
  loginQueue: LoginQueueSizing
  core: Core
  /**
   * Reads the settings file again and applies its users, passwords and permissions from the next
   * request. An invalid file, one that turns adminAuth on or off, or a store that cannot delete
   * the tokens of removed users (it is down) is refused and the running settings stay; either way
   * the outcome is logged in one line. Reloads run one at a time; the promise never rejects.
   */
  reload(): Promise<ReloadOutcome>
  /** Where the metrics listener answers (`metrics: {host, port}`), e.g. `http://127.0.0.1:9464/metrics`. */
  metricsUrl: string | null
  /** Stops accepting, finishes requests in flight, stops the sweeper and closes the store. */
  close(): Promise<void>
}

/** True for addresses only this machine can reach: 127.0.0.0/8, ::1 and localhost. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase()
  if (bare === 'localhost' || bare === '::1') return true
  const v4 = bare.startsWith('::ffff:') ? bare.slice(7) : bare
  return isIP(v4) === 4 && v4.startsWith('127.')
}

/** The TCP peer's address of a request, canonical (IPv4-mapped IPv6 shown as plain IPv4). */
export function socketAddress(c: Context): string {
  try {
    const address = getConnInfo(c).remote.address
    if (address === undefined) return 'unknown'
    return canonicalAddress(address) ?? address
  } catch {
    return 'unknown'
  }
}

/** The settings of a start with these options: the file or object, then the overriding flags. */
export async function resolveSettings(options: ServerOptions, cwd: string): Promise<Settings> {
  const base =
    options.settingsFile !== undefined
      ? await loadSettings(options.settingsFile, cwd)
      : parseSettings(options.settings ?? {}, 'settings', cwd)
  return {
    ...base,
    uiHost: options.host ?? base.uiHost,
    uiPort: options.port ?? base.uiPort,
    userDir: options.userDir !== undefined ? path.resolve(cwd, options.userDir) : base.userDir,
  }
}

/** The PostgreSQL stores of these settings: `postgres.url`, else DATABASE_URL, else the PG* variables. */
export async function openPostgresStores(settings: Settings): Promise<PostgresStores> {
  // Loaded only when used: the PostgreSQL driver costs start-up time and memory on SQLite.
  const { createPostgresStores } = await import('@flowadmin/adapter-postgres')
  try {
    return await createPostgresStores({
      url: settings.postgres.url ?? (process.env.DATABASE_URL || undefined),
      pool: settings.postgres.pool,
      timeoutMs: settings.postgres.timeoutMs,
    })
  } catch (error) {
    // One line naming host, port and database; never the URL, which may hold a password.
    throw new StartupError(messageOf(error), undefined, { cause: error })
  }
}

export async function openStores(settings: Settings): Promise<{
  stores: Stores & { close(): Promise<void> }
  storage: string
  postgres?: PostgresStores
}> {
  if (settings.storage === 'memory') return { stores: createMemoryStores(), storage: 'memory' }
  if (settings.storage === 'postgres') {
    const stores = await openPostgresStores(settings)
    return { stores, storage: `postgres ${stores.target}`, postgres: stores }
  }
  const file = path.join(settings.userDir, 'flowadmin.db')
  try {
    // Given the path, the stores own the connection and close it with themselves.
    return { stores: createSqliteStores(file), storage: file }
  } catch (error) {
    // The store's message names the file and says what to do.
    throw new StartupError(messageOf(error), undefined, { cause: error })
  }
}

/** The core as this service runs it: argon2, SHA-256 on the event loop, modules on disk. */
export async function createServerCore(
  settings: Settings,
  stores: Stores,
  events: EventSink,
  modules: readonly DiscoveredModule[],
  log: Log,
  login: {
    verifier?: PasswordVerifier
    loginQueue?: LoginQueueSizing
    observer?: CoreObserver | undefined
  } = {},
  /** The loader (default: one over `modules`) and the installer (default: none, installs refused). */
  palette: { loader?: NodeSetLoader; installer?: ModuleInstaller } = {},
): Promise<Core> {
  const { loginQueue } = login
  return createCore(
    {
      stores,
      verifier: login.verifier ?? (await createArgon2Verifier()),
      digest: nodeDigest,
      loader: palette.loader ?? createDiskLoader(modules),
      installer: palette.installer,
      typeUsage: createFlowsTypeUsage(path.join(settings.userDir, 'flows.json'), (message) =>
        log('error', 'flows file unreadable; disabling modules is refused until it is fixed', {
          reason: message,
        }),
      ),
      events,
      observer: login.observer,
    },
    {
      adminAuth: settings.adminAuth && {
        ...settings.adminAuth,
        ...(loginQueue && {
          loginQueue: {
            concurrency: loginQueue.concurrency,
            maxWaiting: loginQueue.maxWaiting,
            maxWaitingKnown: loginQueue.maxWaitingKnown,
            retryAfter: loginQueue.retryAfter,
          },
        }),
      },
    },
  )
}

/**
 * Applies the store's schema migrations and stops: what `flowadmin migrate` runs before the
 * instances start (they would apply them at start too). Returns a line fit to print.
 */
export async function migrateStore(
  options: Pick<ServerOptions, 'settingsFile' | 'settings' | 'userDir' | 'cwd'>,
): Promise<string> {
  const cwd = options.cwd ?? process.cwd()
  const settings = await resolveSettings(options, cwd)
  if (settings.storage === 'memory') {
    throw new SettingsError('storage is "memory": there is no schema to migrate')
  }
  if (settings.storage === 'postgres') {
    const stores = await openPostgresStores(settings)
    await stores.close()
    const { from, to } = stores.schema
    return from === to
      ? `the database at ${stores.target} is at schema version ${to}; nothing to do`
      : `migrated the database at ${stores.target} from schema version ${from} to ${to}`
  }
  const { stores, storage } = await openStores(settings)
  await stores.close()
  return `the database ${storage} is at schema version ${SQLITE_SCHEMA_VERSION}`
}

/**
 * Starts the service: settings, stores, core, HTTP app, listener. Start-up failures are
 * StartupErrors (SettingsError for the settings) whose message is fit to print as it is.
 */
export async function startServer(options: ServerOptions = {}): Promise<RunningServer> {
  const cwd = options.cwd ?? process.cwd()
  const logger = options.logger ?? createLogger()
  const log = logTo(logger)
  const warn = (message: string) => log('warning', message)
  const settings = await resolveSettings(options, cwd)

  if (settings.adminAuth === null && !isLoopback(settings.uiHost) && !options.allowOpenAdmin) {
    throw new StartupError(
      `refusing to listen on ${settings.uiHost}: adminAuth is not set, so anyone who can reach that address ` +
        'could administer this service. Set adminAuth, listen on 127.0.0.1, or pass --allow-open-admin.',
      EXIT_USAGE,
    )
  }
  const userDir = await stat(settings.userDir).catch(() => null)
  if (!userDir?.isDirectory()) {
    throw new SettingsError(`userDir ${settings.userDir} is not an existing folder`)
  }

  const metricsListener = typeof settings.metrics === 'object' ? settings.metrics : null
  if (metricsListener !== null && !isLoopback(metricsListener.host)) {
    throw new SettingsError(
      `metrics.host: ${metricsListener.host} is not a loopback address: the metrics listener needs no token, so it only listens on 127.0.0.1, ::1 or localhost`,
    )
  }

  const audit = createAuditLog(settings.auditLog, options.stdout, (message, fields) =>
    log('error', message, fields),
  )
  const cleanup: Array<() => Promise<void> | void> = [() => audit.close()]
  const undo = async () => {
    for (const step of cleanup.reverse()) await step()
  }
  try {
    const opened = await openStores(settings)
    const { storage, postgres } = opened
    cleanup.push(() => opened.stores.close())
    const metrics = settings.metrics === 'off' ? null : createMetrics()
    const stores = metrics === null ? opened.stores : metrics.instrument(opened.stores)
    const events = metrics === null ? audit : fanOut(audit, metrics.events)

    const argon2 = await createArgon2Verifier()
    const configured = settings.adminAuth?.loginQueue ?? {}
    const queueing = sizeLoginQueue(configured, DEFAULT_VERIFY_CONCURRENCY, settings.adminAuth !== null)
    const loginQueue = queueing.queue
    // The core exists only below; the first verification cannot end before it does.
    let resize: (bounds: LoginQueueBounds) => void = () => {}
    const verifier = queueing.measuring(argon2, (bounds) => resize(bounds))

    await sweepStaging(settings.userDir)
    const modules = await discoverModules(settings.userDir, warn)
    const loader = createDiskLoader(modules)
    const { palette } = settings
    const installer = createNpmInstaller({
      userDir: settings.userDir,
      policy: createPalettePolicy(palette),
      registry: palette.registry,
      allowScripts: palette.allowScripts,
      timeoutMs: palette.timeout * 1000,
      waitMs: palette.wait * 1000,
      log,
      onChange: (installed) => loader.update(installed),
    })
    const core = await createServerCore(
      settings,
      stores,
      events,
      modules,
      log,
      { verifier, loginQueue, observer: metrics?.observer },
      { loader, installer },
    )
    resize = (bounds) => core.loginQueue.resize(bounds)
    await core.modules.sync(toDescriptors(modules))
    await core.sweep()
    // Users removed from the settings since the last run lose every token now, not on next use.
    await core.tokens.purgeRemovedUsers()
    metrics?.track({
      liveTokens: () => stores.tokens.countLive(Date.now()),
      loginQueueLoad: () => core.loginQueue.load(),
    })
    let closing: Promise<void> | null = null
    const readiness = createReadiness(stores.tokens, () => (closing !== null ? 'closing' : 'running'))
    // Node sets another instance enables are loaded here too; a (re)connection checks them all.
    // A failed first connection is reported and retried by the watch itself.
    await postgres
      ?.watchModules((module) => core.modules.loadEnabled(module), { onError: warn })
      .ready.catch(() => {})
    const outage = createOutageLog(log)

    const proxies = parseTrustedProxies(settings.trustProxy)
    const app = createHttpApp(core, {
      version: VERSION,
      basePath: settings.httpAdminRoot,
      clientAddress: (c) => clientAddressOf(socketAddress(c), c.req.header('X-Forwarded-For'), proxies),
      maxBodyBytes: settings.apiMaxLength,
      cors: settings.httpAdminCors ?? undefined,
      // What the request sent stays in fields of its own: a path may hold any character.
      onUnexpectedError: (error, c) =>
        logger.error(
          { method: c.req.method, path: c.req.path, err: error },
          'unexpected error answering a request',
        ),
      readiness,
      metrics: settings.metrics === 'api' ? metrics?.exposition : undefined,
      onResponse: metrics?.onResponse,
      onStorageUnavailable: (error) => outage(error),
    })
    const api = app.fetch
    const page = settings.console ? createConsole({ basePath: settings.httpAdminRoot }, api) : null
    if (settings.console && page === null) {
      warn(
        'the console is not built (run `pnpm build`), so only the API answers; "console": false silences this',
      )
    }
    // API requests go straight to the API; only the console's own paths pass its router.
    const consolePath = consolePaths(settings.httpAdminRoot)
    const serve: typeof app.fetch =
      page === null
        ? api
        : (request, env) => (consolePath(getPath(request)) ? page.fetch(request, env) : api(request, env))
    const listener = await listen(serve, settings.uiHost, settings.uiPort, settings.httpServer)
    cleanup.push(() => listener.close(0))
    let metricsServer: Listener | null = null
    if (metricsListener !== null && metrics !== null) {
      metricsServer = await listen(
        metricsFetch(metrics),
        metricsListener.host,
        metricsListener.port,
        settings.httpServer,
      )
      cleanup.push(() => metricsServer?.close(0))
    }

    const stopSweeper = startSweeper(() => core.sweep(), log)

    if (!core.authEnabled) {
      warn('adminAuth is not set: the admin API is open to anyone who can reach it')
    }
    let reloading: Promise<unknown> = Promise.resolve()
    const running: RunningServer = {
      url: `${origin(listener)}${settings.httpAdminRoot}`,
      host: listener.address.address,
      port: listener.address.port,
      storage,
      authEnabled: core.authEnabled,
      settings,
      loginQueue,
      core,
      metricsUrl: metricsServer === null ? null : `${origin(metricsServer)}/metrics`,
      reload() {
        // Each reload waits for the one before; none rejects, so none holds up those after it.
        const outcome = reloading.then(() => {
          reopenAuditLog(audit, log)
          return reloadSettings(running, options, cwd, log).catch((error: unknown) =>
            refuseReload(log, messageOf(error)),
          )
        })
        reloading = outcome
        return outcome
      },
      close() {
        closing ??= (async () => {
          stopSweeper()
          const grace = options.shutdownGraceMs ?? settings.shutdownTimeout
          await Promise.all([listener.close(grace), metricsServer?.close(0)])
          await undo()
        })()
        return closing
      },
    }
    return running
  } catch (error) {
    await undo()
    throw error
  }
}

/** The dotted names of the settings whose values differ, `adminAuth` looked into one level. */
function changedSettings(before: Settings, after: Settings): string[] {
  const changed: string[] = []
  const differ = (a: unknown, b: unknown) => JSON.stringify(a) !== JSON.stringify(b)
  for (const key of Object.keys(after) as Array<keyof Settings>) {
    if (key !== 'adminAuth') {
      // Named as in the settings file.
      if (differ(before[key], after[key])) changed.push(key === 'palette' ? 'externalModules.palette' : key)
      continue
    }
    const was: Record<string, unknown> = { ...before.adminAuth }
    const now: Record<string, unknown> = { ...after.adminAuth }
    for (const field of new Set([...Object.keys(was), ...Object.keys(now)])) {
      if (differ(was[field], now[field])) changed.push(`adminAuth.${field}`)
    }
  }
  return changed
}

async function reloadSettings(
  server: RunningServer,
  options: ServerOptions,
  cwd: string,
  log: Log,
): Promise<ReloadOutcome> {
  const refuse = (message: string) => refuseReload(log, message)
  if (options.settingsFile === undefined) return refuse('the server was started without a settings file')
  let next: Settings
  try {
    next = await resolveSettings(options, cwd)
  } catch (error) {
    return refuse(messageOf(error).split('\n').join('; '))
  }
  if ((next.adminAuth === null) !== (server.settings.adminAuth === null)) {
    return refuse('adminAuth: turning authentication on or off needs a restart')
  }
  const changed = changedSettings(server.settings, next)
  const needRestart = changed.filter((name) => !RELOADED_SETTINGS.includes(name))
  if (next.adminAuth !== null && server.settings.adminAuth !== null) {
    try {
      // The tokens of removed users go first; the users change only once they are gone.
      await server.core.setUsers(next.adminAuth.users)
    } catch (error) {
      return refuse(`the tokens of removed users could not be deleted: ${messageOf(error)}`)
    }
    server.settings = {
      ...server.settings,
      adminAuth: { ...server.settings.adminAuth, users: next.adminAuth.users },
    }
  }
  const users = next.adminAuth?.users.length ?? 0
  log('info', 'settings reloaded', { users })
  if (needRestart.length > 0)
    log('warning', 'these settings change only after a restart', { settings: needRestart })
  return { ok: true, users, needRestart }
}

/** A reload that did not happen: one line saying why; the running settings stay as they were. */
function refuseReload(log: Log, message: string): ReloadOutcome {
  log('error', 'settings not reloaded, the running settings stay', { reason: message })
  return { ok: false, message }
}

/** Reopens the audit log file by its name (after a rotation); a failure keeps the old file and is logged. */
function reopenAuditLog(audit: AuditLog, log: Log): void {
  try {
    audit.reopen()
  } catch (error) {
    log('error', 'audit log not reopened; its lines still go to the file open before', {
      reason: messageOf(error),
    })
  }
}

/** `http://host:port` of a listener, an IPv6 address in brackets. */
function origin(listener: Listener): string {
  const { address, family, port } = listener.address
  return `http://${family === 'IPv6' ? `[${address}]` : address}:${port}`
}

/** How often at most an outage of the store is logged while requests keep meeting it. */
const OUTAGE_LOG_INTERVAL_MS = 10_000

/** Logs an unreachable store once per interval, however many requests meet it. */
function createOutageLog(log: Log): (error: unknown) => void {
  let last = Number.NEGATIVE_INFINITY
  let missed = 0
  return (error) => {
    const now = Date.now()
    if (now - last < OUTAGE_LOG_INTERVAL_MS) {
      missed++
      return
    }
    // `missed`: requests answered 503 since the last report.
    log('warning', 'the store cannot be reached, requests answer 503', { reason: messageOf(error), missed })
    last = now
    missed = 0
  }
}
