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
