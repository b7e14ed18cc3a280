import type { Stores } from '@flowadmin/core'
import pg from 'pg'
import { clientConfig, describeTarget, type PostgresOptions, poolConfig } from './connection.js'
import { createDatabase } from './database.js'
import { toOpenError } from './errors.js'
import { createFactorStore } from './factor-store.js'
import { migrate } from './migrations.js'
import { createModuleStore } from './module-store.js'
import { type ModuleWatch, type ModuleWatchOptions, watchModules } from './module-watch.js'
import { createSsoStore } from './sso-store.js'
import { createThrottleStore } from './throttle-store.js'
import { createTokenStore } from './token-store.js'

export interface PostgresStores extends Stores {
  /** `host:port/database` of the server, never a password: fit for logs and messages. */
  readonly target: string
  /** The schema versions before and after the migrations applied when these stores opened. */
  readonly schema: { from: number; to: number }
  /**
   * Calls `onChange(module)` when any instance on this database changes a module's node sets,
   * and `onChange(null)` whenever listening (re)starts, when every module must be checked.
   */
  watchModules(
    onChange: (module: string | null) => Promise<void> | void,
    options?: ModuleWatchOptions,
  ): ModuleWatch
  /** Stops every watch and closes the connections. */
  close(): Promise<void>
}

/**
 * Every store port over one PostgreSQL database, shared by any number of instances. Connects,
 * applies the schema migrations under an advisory lock, and resolves when the stores are ready.
 * Rejects with a PostgresStoreError (one line naming host and port) when the server cannot be
 * reached or refuses. Once open, an operation during an outage throws the core's
 * StoreUnavailable within `timeoutMs`, and the next one after the server is back succeeds.
 */
export async function createPostgresStores(options: PostgresOptions = {}): Promise<PostgresStores> {
  const target = describeTarget(options)
  const pool = new pg.Pool(poolConfig(options))
  // An idle connection the server ended (restart, pg_terminate_backend) is dropped by the pool and
  // replaced on next use; the event must be handled or it would end the process.
  pool.on('error', () => {})
  let schema: { from: number; to: number }
  try {
    const client = await pool.connect()
    let failed = false
    try {
      schema = await migrate(client, target)
    } catch (error) {
      failed = true
      throw error
    } finally {
      client.release(failed)
    }
  } catch (error) {
    await pool.end().catch(() => {})
    throw toOpenError(error, target)
  }

  const db = createDatabase(pool)
  const watches = new Set<ModuleWatch>()
  let closing: Promise<void> | null = null
  return {
    tokens: createTokenStore(db),
    modules: createModuleStore(db),
    throttle: createThrottleStore(db),
    sso: createSsoStore(db),
    factors: createFactorStore(db),
    target,
    schema,
    watchModules(onChange, watchOptions) {
      const watch = watchModules(clientConfig(options), onChange, watchOptions)
      watches.add(watch)
      return {
        ready: watch.ready,
        async close() {
          watches.delete(watch)
          await watch.close()
        },
      }
    },
    close() {
      closing ??= (async () => {
        for (const watch of watches) await watch.close()
        watches.clear()
        await pool.end().catch(() => {})
      })()
      return closing
    },
  }
}
