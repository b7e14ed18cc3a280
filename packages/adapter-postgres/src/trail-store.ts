import type { TrailEntry, TrailFilter, TrailStore } from '@flowadmin/core'
import {
  TRAIL_COLUMNS,
  TRAIL_ENTRY_COLUMNS,
  type TrailRow,
  trailConditions,
  trailFromRow,
  trailValues,
} from '@flowadmin/store-support'
import type { Database } from './database.js'
import { fromStored, storedKey, storedText } from './stored-text.js'

/** The entries as one row of arrays, one array a column: a batch is one statement. */
const ROWS = `SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[],
                                  $7::text[], $8::text[], $9::text[], $10::boolean[], $11::json[])`

/** Which events a statement picks: flowadmin's own, or one reporter's (`$1`). */
const OWN = 'reporter IS NULL'
const ONE = 'reporter = $1'
// Through flowadmin_trail_by_reporter (reporter, received, seq): the first received first. For a
// reporter's statements the other parameters come after it, so `$n` counts from `from`.
const deleteBeforeOf = (which: string, from: number) =>
  `DELETE FROM flowadmin_trail WHERE seq IN (
     SELECT seq FROM flowadmin_trail WHERE ${which} AND received < $${from}
     ORDER BY received, seq LIMIT $${from + 1})`
const deleteBeyondOf = (which: string, from: number) =>
  `DELETE FROM flowadmin_trail WHERE seq IN (
     SELECT seq FROM flowadmin_trail WHERE ${which} ORDER BY received, seq
     LIMIT greatest(0, least($${from + 1}::bigint,
                             (SELECT count(*) FROM flowadmin_trail WHERE ${which}) - $${from}::bigint)))`

/** The fixed statements of the trail store; searches are built from their filter (see trailConditions). */
export const TRAIL_SQL = {
  // A batch is one statement: all of it or nothing, seq ascending in the batch's order. Its
  // reporters become known (the sweep goes through them).
  append: `WITH added AS (
             INSERT INTO flowadmin_trail (${TRAIL_ENTRY_COLUMNS}) ${ROWS} RETURNING reporter)
           INSERT INTO flowadmin_trail_reporters (reporter, spent_until)
           SELECT DISTINCT reporter, 0 FROM added WHERE reporter IS NOT NULL
           ON CONFLICT (reporter) DO NOTHING`,
  // A reporter's batch ($12), in one statement: its allowance moves on ($14 the cost, $15 the
  // burst, at $13 now) when it takes the batch, and only then are the entries appended. Of two
  // instances at once, the second waits on the reporter's row, then sees what the first spent.
  appendReport: `WITH spent AS (
                   INSERT INTO flowadmin_trail_reporters AS r (reporter, spent_until)
                   VALUES ($12, $13::float8 + $14::float8)
                   ON CONFLICT (reporter) DO UPDATE SET spent_until = greatest(r.spent_until, $13) + $14
                   WHERE greatest(r.spent_until, $13) + $14 - $15 <= $13
                   RETURNING 1),
                 added AS (
                   INSERT INTO flowadmin_trail (${TRAIL_ENTRY_COLUMNS})
                   ${ROWS} WHERE EXISTS (SELECT 1 FROM spent) RETURNING 1)
                 SELECT (SELECT count(*) FROM spent) AS spent, (SELECT count(*) FROM added) AS added`,
  spentUntil: 'SELECT spent_until FROM flowadmin_trail_reporters WHERE reporter = $1',
  reporters: 'SELECT reporter FROM flowadmin_trail_reporters',
  deleteBeforeOwn: deleteBeforeOf(OWN, 1),
  deleteBefore: deleteBeforeOf(ONE, 2),
  deleteBeyondOwn: deleteBeyondOf(OWN, 1),
  deleteBeyond: deleteBeyondOf(ONE, 2),
} as const

/**
 * An entry whose text PostgreSQL can store; details travel as JSON, which escapes both already.
 * The reporter is a key, written so that it reads back as it was.
 */
const storable = (entry: TrailEntry): TrailEntry => ({
  ...entry,
  reporter: entry.reporter === null ? null : storedKey(entry.reporter),
  server: storedText(entry.server),
  instance: storedText(entry.instance),
  actor: storedText(entry.actor),
  event: storedText(entry.event),
  address: storedText(entry.address),
})

/** A filter that matches text as storedText wrote it. */
const storableFilter = (filter: TrailFilter): TrailFilter => ({
  ...filter,
  source:
    filter.source === undefined
      ? undefined
      : { server: storedText(filter.source.server), instance: storedText(filter.source.instance) },
  actor: storedText(filter.actor),
  eventPrefix: storedText(filter.eventPrefix),
})

/** The entries as the columns of ROWS. */
function columnsOf(entries: readonly TrailEntry[]): unknown[][] {
  const columns: unknown[][] = Array.from({ length: 11 }, () => [])
  for (const entry of entries) {
    trailValues(storable(entry)).forEach((value, index) => {
      columns[index]?.push(value)
    })
  }
  return columns
}

/** The trail in one table, and its reporters' allowances in another. */
export function createTrailStore(db: Database): TrailStore {
  /** The parameters of a statement for `reporter` (null: flowadmin's own), then `rest`. */
  const forReporter = (reporter: string | null, own: string, one: string, rest: unknown[]) =>
    reporter === null ? { sql: own, params: rest } : { sql: one, params: [storedKey(reporter), ...rest] }
  return {
    async append(entries) {
      if (entries.length === 0) return
      await db.query(TRAIL_SQL.append, columnsOf(entries))
    },
    async appendReport(reporter, entries, pace, now) {
      const key = storedKey(reporter)
      const { rows } = await db.query<{ spent: string }>(TRAIL_SQL.appendReport, [
        ...columnsOf(entries),
        key,
        now,
        pace.costMs,
        pace.burstMs,
      ])
      if (Number(rows[0]?.spent) > 0) return { appended: true }
      // When it would fit, as the allowance stands now: advice, so a second look will do.
      const spent = await db.query<{ spent_until: number }>(TRAIL_SQL.spentUntil, [key])
      const next = Math.max(spent.rows[0]?.spent_until ?? now, now) + pace.costMs
      return { appended: false, retryAt: Math.max(next - pace.burstMs, now) }
    },
    async reporters() {
      const { rows } = await db.query<{ reporter: string }>(TRAIL_SQL.reporters)
      return rows.map((row) => fromStored(row.reporter))
    },
    async search(filter, limit, after) {
      const { where, params } = trailConditions(storableFilter(filter), after, (index) => `$${index}`)
      const { rows } = await db.query<TrailRow>(
        `SELECT ${TRAIL_COLUMNS} FROM flowadmin_trail ${where}
         ORDER BY seq DESC LIMIT $${params.length + 1}`,
        [...params, limit],
      )
      return rows.map((row) => trailFromRow(row, fromStored))
    },
    async deleteBefore(reporter, before, limit) {
      const { sql, params } = forReporter(reporter, TRAIL_SQL.deleteBeforeOwn, TRAIL_SQL.deleteBefore, [
        before,
        limit,
      ])
      return (await db.query(sql, params)).rowCount ?? 0
    },
    async deleteBeyond(reporter, keep, limit) {
      const { sql, params } = forReporter(reporter, TRAIL_SQL.deleteBeyondOwn, TRAIL_SQL.deleteBeyond, [
        keep,
        limit,
      ])
      return (await db.query(sql, params)).rowCount ?? 0
    },
  }
}
