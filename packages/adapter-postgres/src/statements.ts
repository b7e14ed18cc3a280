/**
 * Deletes up to $2 rows of `table` whose `end` column is at or before $1, keyed by `key`; a null
 * end matches no comparison, so such a row stays. Rows another transaction holds are skipped, not
 * waited for: the next sweep takes them.
 */
export const deleteEnded = (table: string, { key = 'key', end = 'expires_at' } = {}): string =>
  `DELETE FROM ${table} WHERE ${key} IN (
     SELECT ${key} FROM ${table} WHERE ${end} <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`
