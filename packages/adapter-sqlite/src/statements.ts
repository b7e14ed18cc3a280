import type { SqliteDatabase, SqliteStatement } from './driver.js'

/** Prepares each statement of a store's SQL once, under the same name. */
export const prepareAll = <Name extends string>(
  db: SqliteDatabase,
  sql: Record<Name, string>,
): Record<Name, SqliteStatement> =>
  Object.fromEntries(Object.entries<string>(sql).map(([name, text]) => [name, db.prepare(text)])) as Record<
    Name,
    SqliteStatement
  >

/**
 * Deletes up to `?` (the second parameter) rows of `table` whose `end` column is at or before `?`
 * (the first), keyed by `key`; a null end matches no comparison, so such a row stays.
 */
export const deleteEnded = (table: string, { key = 'key', end = 'expires_at' } = {}): string =>
  `DELETE FROM ${table} WHERE ${key} IN (SELECT ${key} FROM ${table} WHERE ${end} <= ? LIMIT ?)`
