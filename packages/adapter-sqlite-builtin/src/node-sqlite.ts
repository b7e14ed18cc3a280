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

/**
 * Some `node:sqlite` implementations (Deno's) store a text with a NUL whole but read it back cut
 * at the NUL. Where the probe at open finds that, texts with a NUL are kept escaped: the escape
 * character U+0001 becomes U+0001 U+0002, a NUL U+0001 U+0001, which keeps SQLite's order of texts
 * (a NUL still sorts first); reads undo it. Texts without either, nearly all, are stored as they
 * are, so the file stays the same for every driver.
 */
const ESCAPE = '\u0001'
const escapeText = (value: unknown): unknown =>
  typeof value === 'string' && (value.includes('\u0000') || value.includes(ESCAPE))
    ? value.replaceAll(ESCAPE, '\u0001\u0002').replaceAll('\u0000', '\u0001\u0001')
    : value
const unescapeText = (value: unknown): unknown => {
  if (typeof value !== 'string' || !value.includes(ESCAPE)) return value
  let text = ''
  for (let at = 0; at < value.length; at++) {
    const char = value[at] as string
    const next = value[at + 1]
    if (char === ESCAPE && (next === '\u0001' || next === '\u0002')) {
      text += next === '\u0001' ? '\u0000' : ESCAPE
      at++
    } else text += char
  }
  return text
}

/** Parameters with their texts escaped: positional values, or one object of named ones. */
const escapeParams = (params: unknown[]): unknown[] =>
  params.map((param) =>
    param !== null && typeof param === 'object' && !(param instanceof Uint8Array)
      ? Object.fromEntries(Object.entries(param).map(([key, value]) => [key, escapeText(value)]))
      : escapeText(param),
  )

const unescapeRow = (row: unknown): unknown =>
  row !== null && typeof row === 'object'
    ? Object.fromEntries(Object.entries(row).map(([key, value]) => [key, unescapeText(value)]))
    : row

let nulKept: boolean | undefined

/**
 * Whether this `node:sqlite` reads back a text with a NUL whole: a property of the driver, asked
 * once of a database in memory, so that opening a file that is not a database fails as such.
 */
function keepsNul(): boolean {
  if (nulKept === undefined) {
    const probe = new DatabaseSync(':memory:')
    try {
      const row = probe.prepare('SELECT ? AS v').get('a\u0000b') as { v?: unknown } | undefined
      nulKept = row?.v === 'a\u0000b'
    } finally {
      probe.close()
    }
  }
  return nulKept
}

/** The `node:sqlite` module (Deno, Bun, Node 22.5+) as a driver of the SQLite stores. */
export const nodeSqlite: SqliteDriver = (file, { readonly }) => {
  const db = named(() => new DatabaseSync(file, { readOnly: readonly }))
  const escaping = !keepsNul()
  const input = (params: unknown[]) => (escaping ? escapeParams(params) : params) as never[]
  return {
    prepare(sql) {
      const statement = named(() => db.prepare(sql))
      return {
        run: (...params) => named(() => ({ changes: Number(statement.run(...input(params)).changes) })),
        get: (...params) =>
          named(() => {
            const row = statement.get(...input(params))
            return escaping ? unescapeRow(row) : row
          }),
        all: (...params) =>
          named(() => {
            const rows = statement.all(...input(params))
            return escaping ? rows.map(unescapeRow) : rows
          }),
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
