// The store the settings name, opened (and migrated) here; each store's package is loaded only
// when the settings name it: a server on SQLite never loads the PostgreSQL driver, and the reverse.
import * as path from 'node:path'
import type { PostgresStores } from '@flowadmin/adapter-postgres'
import { messageOf, type Stores } from '@flowadmin/core'
import { resolveSettings } from '../config/settings/load.js'
import type { Settings } from '../config/settings/schema.js'
import { SettingsError, StartupError } from '../errors.js'
import type { ServerOptions } from './options.js'

/** The PostgreSQL stores of these settings: `postgres.url`, else DATABASE_URL, else the PG* variables. */
export async function openPostgresStores(settings: Settings): Promise<PostgresStores> {
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
  if (settings.storage === 'memory') {
    const { createMemoryStores } = await import('@flowadmin/adapter-memory')
    return { stores: createMemoryStores(), storage: 'memory' }
  }
  if (settings.storage === 'postgres') {
    const stores = await openPostgresStores(settings)
    return { stores, storage: `postgres ${stores.target}`, postgres: stores }
  }
  const { createSqliteStores } = await import('@flowadmin/adapter-sqlite')
  const file = path.join(settings.userDir, 'flowadmin.db')
  try {
    // Given the path, the stores own the connection and close it with themselves.
    return { stores: createSqliteStores(file), storage: file }
  } catch (error) {
    // The store's message names the file and says what to do.
    throw new StartupError(messageOf(error), undefined, { cause: error })
  }
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
  const { SCHEMA_VERSION } = await import('@flowadmin/adapter-sqlite')
  return `the database ${storage} is at schema version ${SCHEMA_VERSION}`
}
