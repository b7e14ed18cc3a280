import type { TrailStore } from '@flowadmin/core'
import {
  TRAIL_COLUMNS,
  type TrailRow,
  trailConditions,
  trailFromRow,
  trailValues,
} from '@flowadmin/store-support'
import type { Database } from './database.js'

/** The fixed statements of the trail store; searches are built from their filter (see trailConditions). */
export const TRAIL_SQL = {
  // A batch is one statement: all of it or nothing, seq ascending in the batch's order.
  append: `INSERT INTO flowadmin_trail
             (time, server, instance, actor, event, outcome, address, address_reported, details)
           SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
                                $7::text[], $8::boolean[], $9::json[])`,
  deleteBefore: `DELETE FROM flowadmin_trail WHERE seq IN (
                   SELECT seq FROM flowadmin_trail WHERE time < $1 ORDER BY time LIMIT $2)`,
  deleteBeyond: `DELETE FROM flowadmin_trail WHERE seq IN (
                   SELECT seq FROM flowadmin_trail ORDER BY time, seq
                   LIMIT greatest(0, least($2::bigint, (SELECT count(*) FROM flowadmin_trail) - $1::bigint)))`,
} as const

/** The trail in one table. */
export function createTrailStore(db: Database): TrailStore {
  return {
    async append(entries) {
      if (entries.length === 0) return
      const columns: unknown[][] = Array.from({ length: 9 }, () => [])
      for (const entry of entries) {
        trailValues(entry).forEach((value, index) => {
          columns[index]?.push(value)
        })
      }
      await db.query(TRAIL_SQL.append, columns)
    },
    async search(filter, limit, after) {
      const { where, params } = trailConditions(filter, after, (index) => `$${index}`)
      const { rows } = await db.query<TrailRow>(
        `SELECT ${TRAIL_COLUMNS} FROM flowadmin_trail ${where}
         ORDER BY time DESC, seq DESC LIMIT $${params.length + 1}`,
        [...params, limit],
      )
      return rows.map(trailFromRow)
    },
    async deleteBefore(before, limit) {
      const { rowCount } = await db.query(TRAIL_SQL.deleteBefore, [before, limit])
      return rowCount ?? 0
    },
    async deleteBeyond(keep, limit) {
      const { rowCount } = await db.query(TRAIL_SQL.deleteBeyond, [keep, limit])
      return rowCount ?? 0
    },
  }
}
