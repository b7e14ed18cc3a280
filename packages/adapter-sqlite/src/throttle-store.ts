import type { ThrottleCounter, ThrottleStore } from '@flowadmin/core'
import type { SqliteDatabase } from './database.js'
import { createReader, createTransaction } from './transaction.js'

/** The statements of the throttle store. */
export const THROTTLE_SQL = {
  // One statement per key counts and reads back atomically; a window that ended starts over.
  // In DO UPDATE, `count` and `reset_at` are the stored row's values before the update.
  hit: `INSERT INTO throttle (key, count, reset_at) VALUES (@key, 1, @now + @window)
        ON CONFLICT (key) DO UPDATE SET
          count = CASE WHEN reset_at > @now THEN count + 1 ELSE 1 END,
          reset_at = CASE WHEN reset_at > @now THEN reset_at ELSE @now + @window END
        RETURNING count, reset_at`,
  peek: 'SELECT count, reset_at FROM throttle WHERE key = ? AND reset_at > ?',
  clear: 'DELETE FROM throttle WHERE key = ?',
  deleteExpired: `DELETE FROM throttle
                  WHERE key IN (SELECT key FROM throttle WHERE reset_at <= ? LIMIT ?)`,
} as const

interface CounterRow {
  count: number | bigint
  reset_at: number | bigint
}

const rowToCounter = (row: CounterRow): ThrottleCounter => ({
  count: Number(row.count),
  resetAt: Number(row.reset_at),
})

/** Failure counters by key, one fixed window each. */
export function createThrottleStore(db: SqliteDatabase): ThrottleStore {
  const transaction = createTransaction(db)
  const reader = createReader(db)
  const hit = db.prepare(THROTTLE_SQL.hit)
  const peek = db.prepare(THROTTLE_SQL.peek)
  const clear = db.prepare(THROTTLE_SQL.clear)
  const deleteExpired = db.prepare(THROTTLE_SQL.deleteExpired)
  // What a change to a counter touches, and what a peek depends on (see transaction.ts).
  const key = (name: string) => `throttle:${name}`

  return {
    async hit(keys, now, windowMs) {
      if (keys.length === 0) return []
      return transaction(
        () => keys.map((name) => rowToCounter(hit.get({ key: name, now, window: windowMs }) as CounterRow)),
        keys.map(key),
      )
    },
    async peek(keys, now) {
      const watched = new Set(keys.map(key))
      return reader(
        () =>
          keys.map((name) => {
            const row = peek.get(name, now) as CounterRow | undefined
            return row ? rowToCounter(row) : null
          }),
        (touched) => watched.has(touched),
      )
    },
    async clear(name) {
      await transaction(() => clear.run(name), [key(name)])
    },
    async deleteExpired(now, limit) {
      // Only windows that ended go, and a peek never shows those: no reader waits for this.
      return transaction(() => deleteExpired.run(now, limit).changes, [])
    },
  }
}
