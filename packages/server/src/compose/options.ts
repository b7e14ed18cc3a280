// What the composition root takes (ServerOptions) and what it gives back (RunningServer), apart
// from the code that assembles, reloads and opens, so that each of those can name them.
import type { Core } from '@flowadmin/core'
import type { SettingsSource } from '../config/settings/load.js'
import type { Settings } from '../config/settings/schema.js'
import type { Logger } from '../log.js'
import type { LoginQueueSizing } from './login-queue-sizing.js'

export interface ServerOptions extends SettingsSource {
  /** Allows an unauthenticated API on a non-loopback address. */
  allowOpenAdmin?: boolean | undefined
  /** Allows the second-factor key of the examples (the demo): see exampleMfaKeyRefusal. */
  allowExampleMfaKey?: boolean | undefined
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
