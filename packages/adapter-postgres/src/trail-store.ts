import type { TrailEntry, TrailFilter, TrailStore } from '@flowadmin/core'
import {
  TRAIL_COLUMNS,
  type TrailRow,
  trailConditions,
  trailFromRow,
  trailValues,
} from '@flowadmin/store-support'
import type { Database } from './database.js'
import { storedText } from './stored-text.js'

/** The fixed statements of the trail store; searches are built from their filter (see trailConditions). */
export const TRAIL_SQL = {
  // A batch is one statement: all of it or nothing, seq ascending in the batch's order.
  append: `INSERT INTO flowadmin_trail
             (time, server, instance, actor, event, outcome, address, address_reported, details)
           SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
                                $7::text[], $8::boolean[], $9::json[])`,
  deleteBefore: `DELETE FROM flowadmin_trail WHERE seq IN (
                   SELECT seq FROM flowadmin_trail WHERE time < $1 ORDER BY seq LIMIT $2)`,
  deleteBeyond: `DELETE FROM flowadmin_trail WHERE seq IN (
                   SELECT seq FROM flowadmin_trail ORDER BY seq
                   LIMIT greatest(0, least($2::bigint, (SELECT count(*) FROM flowadmin_trail) - $1::bigint)))`,
} as const

/** An entry whose text PostgreSQL can store; details travel as JSON, which escapes both already. */
const storable = (entry: TrailEntry): TrailEntry => ({
  ...entry,
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

/** The trail in one table. */
export function createTrailStore(db: Database): TrailStore {
  return {
    async append(entries) {
      if (entries.length === 0) return
      const columns: unknown[][] = Array.from({ length: 9 }, () => [])
      for (const entry of entries) {
        trailValues(storable(entry)).forEach((value, index) => {
          columns[index]?.push(value)
        })
      }
      await db.query(TRAIL_SQL.append, columns)
    },
    async search(filter, limit, after) {
      const { where, params } = trailConditions(storableFilter(filter), after, (index) => `$${index}`)
      const { rows } = await db.query<TrailRow>(
        `SELECT ${TRAIL_COLUMNS} FROM flowadmin_trail ${where}
         ORDER BY seq DESC LIMIT $${params.length + 1}`,
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
