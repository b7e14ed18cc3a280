import { DatabaseSync } from 'node:sqlite'
import type { SqliteDriver, SqliteStores } from '@flowadmin/adapter-sqlite'
import { openStores } from './open.js'

// SQLite's primary result codes, by the names better-sqlite3 and bun:sqlite give them.
const CODES: Record<number, string> = {
  5: 'SQLITE_BUSY',
  6: 'SQLITE_LOCKED',
  8: 'SQLITE_READONLY',
  11: 'SQLITE_CORRUPT',
  14: 'SQLITE_CANTOPEN',
  26: 'SQLITE_NOTADB',
}

/** Runs `work`; an error of node:sqlite (code ERR_SQLITE_ERROR, `errcode`) gets SQLite's name as its code. */
function named<T>(work: () => T): T {
  try {
    return work()
  } catch (error) {
    const errcode = (error as { errcode?: unknown }).errcode
    const name = typeof errcode === 'number' ? CODES[errcode & 0xff] : undefined
    if (name !== undefined) Object.defineProperty(error, 'code', { value: name })
    throw error
  }
}

/** The `node:sqlite` module (Deno, Bun, Node 22.5+) as a driver of the SQLite stores. */
export const nodeSqlite: SqliteDriver = (file, { readonly }) => {
  const db = named(() => new DatabaseSync(file, { readOnly: readonly }))
  return {
    prepare(sql) {
      const statement = named(() => db.prepare(sql))
      return {
        run: (...params) => named(() => ({ changes: Number(statement.run(...params).changes) })),
        get: (...params) => named(() => statement.get(...params)),
        all: (...params) => named(() => statement.all(...params)),
      }
    },
    exec: (sql) => named(() => db.exec(sql)),
    close: () => db.close(),
    get inTransaction() {
      return db.isTransaction
    },
    name: file,
  }
}

/**
 * Every store port over the SQLite file at `path`, through `node:sqlite`: the same schema,
 * statements and durability as `createSqliteStores` from `@flowadmin/adapter-sqlite`, so one file
 * serves either. Throws a SqliteStoreError for a file it cannot use.
 */
export function createNodeSqliteStores(path: string): SqliteStores {
  return openStores(path, nodeSqlite)
}
