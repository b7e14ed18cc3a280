import type { ThrottleCounter, ThrottleStore } from '@flowadmin/core'
import type { Database } from './database.js'

/** The statements of the throttle store. */
export const THROTTLE_SQL = {
  // One statement per key counts and reads back atomically, across every instance; a window that
  // ended starts over. In DO UPDATE, the bare column names are the stored row's values.
  hit: `INSERT INTO flowadmin_throttle AS t (key, count, reset_at) VALUES ($1, 1, $2::bigint + $3::bigint)
        ON CONFLICT (key) DO UPDATE SET
          count = CASE WHEN t.reset_at > $2 THEN t.count + 1 ELSE 1 END,
          reset_at = CASE WHEN t.reset_at > $2 THEN t.reset_at ELSE $2::bigint + $3::bigint END
        RETURNING count, reset_at`,
  peek: `SELECT key, count, reset_at FROM flowadmin_throttle WHERE key = ANY($1) AND reset_at > $2`,
  clear: 'DELETE FROM flowadmin_throttle WHERE key = $1',
  deleteExpired: `DELETE FROM flowadmin_throttle WHERE key IN (
                    SELECT key FROM flowadmin_throttle WHERE reset_at <= $1 LIMIT $2
                    FOR UPDATE SKIP LOCKED)`,
} as const

interface CounterRow {
  count: number
  /** bigint arrives as text. */
  reset_at: string
}

const rowToCounter = (row: CounterRow): ThrottleCounter => ({
  count: Number(row.count),
  resetAt: Number(row.reset_at),
})

/** Failure counters by key, one fixed window each, shared by every instance on the database. */
export function createThrottleStore(db: Database): ThrottleStore {
  return {
    async hit(keys, now, windowMs) {
      const counters: ThrottleCounter[] = []
      for (const key of keys) {
        const { rows } = await db.query<CounterRow>(THROTTLE_SQL.hit, [key, now, windowMs])
        counters.push(rowToCounter(rows[0] as CounterRow))
      }
      return counters
    },
    async peek(keys, now) {
      if (keys.length === 0) return []
      const { rows } = await db.query<CounterRow & { key: string }>(THROTTLE_SQL.peek, [keys, now])
      const byKey = new Map(rows.map((row) => [row.key, rowToCounter(row)]))
      return keys.map((key) => byKey.get(key) ?? null)
    },
    async clear(key) {
      await db.query(THROTTLE_SQL.clear, [key])
    },
    async deleteExpired(now, limit) {
      return (await db.query(THROTTLE_SQL.deleteExpired, [now, limit])).rowCount ?? 0
    },
  }
}
