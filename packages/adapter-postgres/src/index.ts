export {
  clientConfig,
  DEFAULT_POOL_SIZE,
  DEFAULT_TIMEOUT_MS,
  describeTarget,
  type PostgresOptions,
  redactUrl,
} from './connection.js'
export { isOutage, PostgresStoreError, type PostgresStoreErrorCode, RETRY_AFTER_SECONDS } from './errors.js'
export { FLEET_CHANNEL } from './fleet-state.js'
export type { FleetWatchHandlers } from './fleet-watch.js'
export { MIGRATION_LOCK, MIGRATIONS, SCHEMA_VERSION } from './migrations.js'
export { MODULE_CHANNEL } from './module-store.js'
export type { ModuleWatch, ModuleWatchOptions } from './module-watch.js'
export {
  createPostgresStores,
  FLEET_LISTENER_NAME,
  type PostgresStores,
  TOKEN_LISTENER_NAME,
  type TokenCacheOptions,
} from './postgres-stores.js'
export { TOKEN_CHANNEL } from './token-cache.js'
