// The part of a SQLite driver the stores use, typed structurally (better-sqlite3's shape), so any
// driver of that shape serves: better-sqlite3, Bun's `bun:sqlite`, `node:sqlite`.

/** A prepared statement: the part of better-sqlite3's `Statement` the stores use. */
export interface SqliteStatement {
  run(...params: unknown[]): { changes: number }
  get(...params: unknown[]): unknown
  all(...params: unknown[]): unknown[]
}

/**
 * Work wrapped as a transaction, as better-sqlite3's `db.transaction(work)` returns it: called, it
 * runs `work` between `BEGIN` and `COMMIT` (`.immediate()`: `BEGIN IMMEDIATE`), or in a savepoint
 * when a transaction is open already; a throw undoes the work and is thrown again.
 */
export interface TransactionFunction<T> {
  (): T
  immediate(): T
}

/**
 * A SQLite connection, typed by the part of better-sqlite3's `Database` the stores use, so a
 * caller may hand in any driver of that shape.
 */
export interface SqliteDatabase {
  prepare(sql: string): SqliteStatement
  exec(sql: string): unknown
  close(): unknown
  /** True while a transaction is open on this connection. */
  readonly inTransaction: boolean
  /**
   * better-sqlite3's transaction functions. A driver without them (`node:sqlite`) gets the same
   * behaviour from `BEGIN`, `SAVEPOINT`, `COMMIT` and `ROLLBACK` statements.
   */
  transaction?<T>(work: () => T): TransactionFunction<T>
  /** The file, when the driver tells it; used in error messages. */
  readonly name?: string
}

/**
 * Opens a connection to `file` (never creating it when `readonly`). openDatabase uses
 * better-sqlite3 unless handed another driver of this shape (Bun's `bun:sqlite`, `node:sqlite`),
 * which gets the same checks, settings and migrations.
 */
export type SqliteDriver = (file: string, options: { readonly: boolean }) => SqliteDatabase
