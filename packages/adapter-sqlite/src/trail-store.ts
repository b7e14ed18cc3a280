import type { TrailEntry, TrailStore } from '@flowadmin/core'
import {
  TRAIL_COLUMNS,
  TRAIL_ENTRY_COLUMNS,
  type TrailRow,
  trailConditions,
  trailFromRow,
  trailValues,
} from '@flowadmin/store-support'
import type { SqliteDatabase, SqliteStatement } from './driver.js'
import { createReader } from './reader.js'
import { prepareAll } from './statements.js'
import { createTransaction } from './transaction.js'

/** Which events a statement picks: flowadmin's own, or one reporter's (its first parameter). */
const OWN = 'reporter IS NULL'
const ONE = 'reporter = ?'
const countOf = (which: string) => `SELECT count(*) AS count FROM trail WHERE ${which}`
// Through trail_by_reporter (reporter, received, then seq as its rowid): the first received first.
const deleteBeforeOf = (which: string) =>
  `DELETE FROM trail WHERE seq IN (
     SELECT seq FROM trail WHERE ${which} AND received < ? ORDER BY received, seq LIMIT ?)`
const deleteFirstOf = (which: string) =>
  `DELETE FROM trail WHERE seq IN (SELECT seq FROM trail WHERE ${which} ORDER BY received, seq LIMIT ?)`

/** The fixed statements of the trail store; searches are built from their filter (see trailConditions). */
export const TRAIL_SQL = {
  append: `INSERT INTO trail (${TRAIL_ENTRY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  knowReporter: 'INSERT INTO trail_reporters (reporter, spent_until) VALUES (?, 0) ON CONFLICT DO NOTHING',
  spentUntil: 'SELECT spent_until FROM trail_reporters WHERE reporter = ?',
  spend: `INSERT INTO trail_reporters (reporter, spent_until) VALUES (?, ?)
          ON CONFLICT (reporter) DO UPDATE SET spent_until = excluded.spent_until`,
  reporters: 'SELECT reporter FROM trail_reporters',
  countOwn: countOf(OWN),
  count: countOf(ONE),
  deleteBeforeOwn: deleteBeforeOf(OWN),
  deleteBefore: deleteBeforeOf(ONE),
  deleteFirstOwn: deleteFirstOf(OWN),
  deleteFirst: deleteFirstOf(ONE),
} as const

/** What trail changes touch, and what trail reads depend on (see transaction.ts). */
const TRAIL = 'trail'
const onTrail = (touched: string) => touched === TRAIL

/** Most search statements kept prepared, one per shape of filter. */
const MAX_SHAPES = 64

/** The trail in one table, appended through the group commit; a batch is one change. */
export function createTrailStore(db: SqliteDatabase): TrailStore {
  const transaction = createTransaction(db)
  const reader = createReader(db)
  const sql = prepareAll(db, TRAIL_SQL)
  const searches = new Map<string, SqliteStatement>()
  const searchOf = (text: string) => {
    let statement = searches.get(text)
    if (statement === undefined) {
      if (searches.size >= MAX_SHAPES) searches.clear()
      statement = db.prepare(text)
      searches.set(text, statement)
    }
    return statement
  }
  /** Inside a transaction: appends the entries and makes their reporters known. */
  const add = (entries: readonly TrailEntry[]) => {
    for (const entry of entries) {
      const values = trailValues(entry)
      values[TRAIL_ADDRESS_REPORTED] = entry.addressReported ? 1 : 0
      sql.append.run(...values)
    }
    for (const reporter of new Set(entries.map((entry) => entry.reporter))) {
      if (reporter !== null) sql.knowReporter.run(reporter)
    }
  }
  /** A statement of `name` for `reporter`, and its leading parameters. */
  const forReporter = (name: 'count' | 'deleteBefore' | 'deleteFirst', reporter: string | null) =>
    reporter === null
      ? { statement: sql[`${name}Own`], params: [] }
      : { statement: sql[name], params: [reporter] }
  return {
    async append(entries) {
      if (entries.length === 0) return
      await transaction(() => add(entries), [TRAIL])
    },
    async appendReport(reporter, entries, pace, now) {
      return transaction(() => {
        const row = sql.spentUntil.get(reporter) as { spent_until: number } | undefined
        const next = Math.max(row?.spent_until ?? now, now) + pace.costMs
        if (next - pace.burstMs > now) return { appended: false as const, retryAt: next - pace.burstMs }
        add(entries)
        sql.spend.run(reporter, next)
        return { appended: true as const }
      }, [TRAIL])
    },
    async reporters() {
      return reader(
        () => (sql.reporters.all() as Array<{ reporter: string }>).map((row) => row.reporter),
        onTrail,
      )
    },
    async search(filter, limit, after) {
      const { where, params } = trailConditions(filter, after, () => '?')
      const statement = searchOf(`SELECT ${TRAIL_COLUMNS} FROM trail ${where} ORDER BY seq DESC LIMIT ?`)
      return reader(
        () => (statement.all(...params, limit) as TrailRow[]).map((row) => trailFromRow(row)),
        onTrail,
      )
    },
    async deleteBefore(reporter, before, limit) {
      const { statement, params } = forReporter('deleteBefore', reporter)
      return transaction(() => statement.run(...params, before, limit).changes, [TRAIL], 'relaxed')
    },
    async deleteBeyond(reporter, keep, limit) {
      const counted = forReporter('count', reporter)
      const first = forReporter('deleteFirst', reporter)
      return transaction(
        () => {
          const { count } = counted.statement.get(...counted.params) as { count: number }
          const excess = Math.min(count - keep, limit)
          return excess > 0 ? first.statement.run(...first.params, excess).changes : 0
        },
        [TRAIL],
        'relaxed',
      )
    },
  }
}

/** Where `address_reported` is among trailValues: SQLite keeps it as 0 or 1. */
const TRAIL_ADDRESS_REPORTED = TRAIL_ENTRY_COLUMNS.split(', ').indexOf('address_reported')
