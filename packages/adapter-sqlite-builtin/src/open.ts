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
  let closing: Promise<void> | null = null
  return {
    ...stores,
    /**
     * Closes the stores first, which commits (and answers) the changes still waiting for the
     * group commit, then the file: a change queued in the same tick is committed, not failed on a
     * closed file. Asked again, it waits for the same close.
     */
    close() {
      closing ??= stores.close().finally(() => db.close())
      return closing
    },
  }
}
