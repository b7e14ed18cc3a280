import {
  createSqliteStores,
  openDatabase,
  type SqliteDriver,
  type SqliteStores,
} from '@flowadmin/adapter-sqlite'

/**
 * The stores over the file at `path`, opened through `driver` with every check, durability
 * setting and migration of `openDatabase`; `close()` closes the file.
 */
export function openStores(path: string, driver: SqliteDriver): SqliteStores {
  const db = openDatabase(path, { driver })
  const stores = createSqliteStores(db)
  let open = true
  return {
    ...stores,
    async close() {
      if (open) db.close()
      open = false
    },
  }
}
