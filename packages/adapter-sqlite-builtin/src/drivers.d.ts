// The parts of the built-in SQLite modules used here, so this package needs neither Bun's typings
// nor a newer @types/node (node:sqlite is in Node 22.5+, Deno 2.2+ and Bun).

declare module 'bun:sqlite' {
  export interface Statement {
    run(...params: unknown[]): { changes: number }
    /** null when there is no row. */
    get(...params: unknown[]): unknown
    all(...params: unknown[]): unknown[]
  }
  export class Database {
    constructor(filename: string, options?: { readonly?: boolean; create?: boolean; strict?: boolean })
    prepare(sql: string): Statement
    exec(sql: string): unknown
    close(): void
    readonly inTransaction: boolean
    /** As better-sqlite3's: BEGIN (or BEGIN IMMEDIATE) and COMMIT, or a savepoint when nested. */
    transaction<T>(work: () => T): { (): T; immediate(): T }
  }
}

declare module 'node:sqlite' {
  export interface StatementSync {
    run(...params: unknown[]): { changes: number | bigint }
    get(...params: unknown[]): unknown
    all(...params: unknown[]): unknown[]
  }
  export class DatabaseSync {
    constructor(location: string, options?: { readOnly?: boolean })
    prepare(sql: string): StatementSync
    exec(sql: string): void
    close(): void
    readonly isTransaction: boolean
  }
}
