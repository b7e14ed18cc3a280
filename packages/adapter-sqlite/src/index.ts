export {
  BUSY_TIMEOUT_MS,
  openDatabase,
  type SqliteDatabase,
  type SqliteDriver,
  type SqliteStatement,
  type TransactionFunction,
} from './database.js'
export { SqliteStoreError, type SqliteStoreErrorCode } from './errors.js'
export { MIGRATIONS, migrate, SCHEMA_VERSION } from './migrations.js'
export { createSqliteStores, type SqliteStores } from './sqlite-stores.js'
