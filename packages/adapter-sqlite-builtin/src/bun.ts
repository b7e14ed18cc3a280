import { Database } from 'bun:sqlite'
import type { SqliteDriver, SqliteStores } from '@flowadmin/adapter-sqlite'
import { openStores } from './open.js'

/** Bun's built-in SQLite as a driver of the SQLite stores. */
export const bunSqlite: SqliteDriver = (file, { readonly }) => {
  // `strict` binds `@name` parameters from `{ name }`, as better-sqlite3 does.
  const db = new Database(file, readonly ? { readonly: true, strict: true } : { create: true, strict: true })
  return {
    prepare(sql) {
      const statement = db.prepare(sql)
      return {
        run: (...params) => statement.run(...params),
        // bun:sqlite answers null for no row, the stores expect undefined.
        get: (...params) => statement.get(...params) ?? undefined,
        all: (...params) => statement.all(...params),
      }
    },
    exec: (sql) => db.exec(sql),
    close: () => db.close(),
    get inTransaction() {
      return db.inTransaction
    },
    // Its transaction functions nest as savepoints, as better-sqlite3's do.
    transaction: (work) => db.transaction(work),
    name: file,
  }
}

/**
 * Every store port over the SQLite file at `path`, through `bun:sqlite` (Bun only): the same
 * schema, statements and durability as `createSqliteStores` from `@flowadmin/adapter-sqlite`, so
 * one file serves either. Throws a SqliteStoreError for a file it cannot use.
 */
export function createBunSqliteStores(path: string): SqliteStores {
  return openStores(path, bunSqlite)
}
