import type { Stores } from '@flowadmin/core'
import pg from 'pg'
import { type ChannelWatch, type ChannelWatchOptions, watchChannel } from './channel-watch.js'
import { clientConfig, describeTarget, type PostgresOptions, poolConfig } from './connection.js'
import { createDatabase } from './database.js'
import { createCredentialCache, createEnrolmentStore } from './enrolment-store.js'
import { toOpenError } from './errors.js'
import { createFactorStore } from './factor-store.js'
import { createFleetStore } from './fleet-store.js'
import { type FleetWatchHandlers, watchFleet } from './fleet-watch.js'
import { createGroupStore } from './group-store.js'
import { migrate } from './migrations.js'
import { createModuleStore } from './module-store.js'
import { type ModuleWatch, type ModuleWatchOptions, watchModules } from './module-watch.js'
import { createPasskeyStore } from './passkey-store.js'
import { createRolloutStore } from './rollout-store.js'
import { createAskCache, createSnapshotStore } from './snapshot-store.js'
import { createSsoStore } from './sso-store.js'
import { createThrottleStore } from './throttle-store.js'
import { createTokenCache, TOKEN_CHANNEL } from './token-cache.js'
import { createTokenStore } from './token-store.js'
import { createTrailStore } from './trail-store.js'

const DEFAULT_TOKEN_HEARTBEAT_MS = 1000
const DEFAULT_FLEET_HEARTBEAT_MS = 2000
/** How long a heartbeat may be out while what its channel keeps true is still used. */
const staleAfter = (heartbeatMs: number) => 4 * heartbeatMs + 1000
/** The application_name of the connection that listens for token changes. */
export const TOKEN_LISTENER_NAME = 'flowadmin token changes'
/** The application_name of the connection that listens for the fleet's changes. */
export const FLEET_LISTENER_NAME = 'flowadmin fleet changes'

/** How the token lookups are kept in memory (see PostgresStores.cacheTokens). */
export interface TokenCacheOptions {
  /** Milliseconds between checks that the listening connection still answers. Default 1000. */
  heartbeatMs?: number | undefined
  /** Milliseconds before the first reconnection attempt; doubles up to 5000. Default 250. */
  retryMs?: number | undefined
  /** Told when the listening connection is lost (it reconnects by itself). */
  onError?: ((message: string) => void) | undefined
}

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
  /**
   * Tells `handlers` of the fleet's changes at any instance on this database: each revision of the
   * desired state, each instance's report saved, and each (re)start of listening, after which
   * what was announced meanwhile is lost. While it listens, the instances' credentials and the
   * asks for their flows, which each of their polls looks up, are answered from memory once read:
   * every change of one is announced, and forgotten when heard.
   */
  watchFleet(handlers: FleetWatchHandlers, options?: ChannelWatchOptions): ChannelWatch
  /**
   * From now on, token lookups by hash answer from memory what this instance read before, while a
   * connection of its own listens for the changes every instance announces (revocations, deleted
   * and changed records): each is forgotten when announced. While that connection is down, and
   * until it listens again, every lookup reads the database. Without this call nothing is kept.
   */
  cacheTokens(options?: TokenCacheOptions): ChannelWatch
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
  const watches = new Set<ChannelWatch>()
  const watched = (watch: ChannelWatch): ChannelWatch => {
    watches.add(watch)
    return {
      ready: watch.ready,
      async close() {
        watches.delete(watch)
        await watch.close()
      },
    }
  }
  // Keeps nothing until cacheTokens listens.
  const tokenCache = createTokenCache()
  // Keep nothing until watchFleet listens.
  const lookups = { credential: createCredentialCache(), ask: createAskCache() }
  let closing: Promise<void> | null = null
  return {
    tokens: createTokenStore(db, tokenCache),
    modules: createModuleStore(db),
    throttle: createThrottleStore(db),
    sso: createSsoStore(db),
    trail: createTrailStore(db),
    fleet: createFleetStore(db),
    enrolments: createEnrolmentStore(db, lookups.credential),
    groups: createGroupStore(db),
    snapshots: createSnapshotStore(db, lookups.ask),
    factors: createFactorStore(db),
    passkeys: createPasskeyStore(db),
    rollouts: createRolloutStore(db),
    target,
    schema,
    watchModules(onChange, watchOptions) {
      return watched(watchModules(clientConfig(options), onChange, watchOptions))
    },
    watchFleet(handlers, watchOptions = {}) {
      const heartbeatMs = watchOptions.heartbeatMs ?? DEFAULT_FLEET_HEARTBEAT_MS
      for (const cache of Object.values(lookups)) cache.staleMs = staleAfter(heartbeatMs)
      return watched(
        watchFleet(
          // Named apart in pg_stat_activity, as the token changes' connection is.
          { ...clientConfig(options), application_name: FLEET_LISTENER_NAME },
          handlers,
          { ...watchOptions, heartbeatMs },
          lookups,
        ),
      )
    },
    cacheTokens(cacheOptions = {}) {
      const heartbeatMs = cacheOptions.heartbeatMs ?? DEFAULT_TOKEN_HEARTBEAT_MS
      // A heartbeat out this long (a busy server answers late), and the kept records are no longer trusted.
      tokenCache.staleMs = staleAfter(heartbeatMs)
      return watched(
        watchChannel(
          // Named apart in pg_stat_activity: the connection every instance's token changes reach.
          { ...clientConfig(options), application_name: TOKEN_LISTENER_NAME },
          TOKEN_CHANNEL,
          {
            notified: (hash) => tokenCache.forget(hash),
            listening: () => tokenCache.listening(),
            lost: () => tokenCache.lost(),
            beat: () => tokenCache.beat(Date.now()),
            alive: () => tokenCache.alive(),
          },
          'token changes',
          { ...cacheOptions, heartbeatMs },
        ),
      )
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
