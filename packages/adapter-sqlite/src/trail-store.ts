import type { TrailStore } from '@flowadmin/core'
import {
  TRAIL_COLUMNS,
  type TrailRow,
  trailConditions,
  trailFromRow,
  trailValues,
} from '@flowadmin/store-support'
import type { SqliteDatabase, SqliteStatement } from './driver.js'
import { createReader } from './reader.js'
import { prepareAll } from './statements.js'
import { createTransaction } from './transaction.js'

/** The fixed statements of the trail store; searches are built from their filter (see trailConditions). */
export const TRAIL_SQL = {
  append: `INSERT INTO trail (time, server, instance, actor, event, outcome, address, address_reported, details)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  deleteBefore: 'DELETE FROM trail WHERE seq IN (SELECT seq FROM trail WHERE time < ? ORDER BY seq LIMIT ?)',
  count: 'SELECT count(*) AS count FROM trail',
  deleteOldest: 'DELETE FROM trail WHERE seq IN (SELECT seq FROM trail ORDER BY seq LIMIT ?)',
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
  return {
    async append(entries) {
      if (entries.length === 0) return
      await transaction(() => {
        for (const entry of entries) {
          const values = trailValues(entry)
          values[7] = entry.addressReported ? 1 : 0
          sql.append.run(...values)
        }
      }, [TRAIL])
    },
    async search(filter, limit, after) {
      const { where, params } = trailConditions(filter, after, () => '?')
      const statement = searchOf(`SELECT ${TRAIL_COLUMNS} FROM trail ${where} ORDER BY seq DESC LIMIT ?`)
      return reader(() => (statement.all(...params, limit) as TrailRow[]).map(trailFromRow), onTrail)
    },
    async deleteBefore(before, limit) {
      return transaction(() => sql.deleteBefore.run(before, limit).changes, [TRAIL], 'relaxed')
    },
    async deleteBeyond(keep, limit) {
      return transaction(
        () => {
          const { count } = sql.count.get() as { count: number }
          const excess = Math.min(count - keep, limit)
          return excess > 0 ? sql.deleteOldest.run(excess).changes : 0
        },
        [TRAIL],
        'relaxed',
      )
    },
  }
}
