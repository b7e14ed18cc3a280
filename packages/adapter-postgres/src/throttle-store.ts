import {
  type AttemptDecision,
  attemptCounters,
  type LoginAttempt,
  type ThrottlePolicy,
  type ThrottleStore,
  throttleRefusal,
} from '@flowadmin/core'
import { type CounterRow, counterFromRow } from '@flowadmin/store-support'
import type { Database, Queryable } from './database.js'
import { deleteEnded } from './statements.js'
import { storedKey } from './stored-text.js'

/** The first half of the advisory locks of throttle keys ('flow' in ASCII); the second is the key's hash. */
export const THROTTLE_LOCK_CLASS = 0x666c_6f77

/** The statements of the throttle store. `count` holds the failures of the live window. */
export const THROTTLE_SQL = {
  // Both counters of an attempt, in one statement; the keys arrive sorted, so instances locking
  // the same two keys take them in the same order and never deadlock. Distinct keys may share a
  // hash: they then take turns, which is slower, never wrong.
  lock: `SELECT pg_advisory_xact_lock(${THROTTLE_LOCK_CLASS}, hashtext($1)),
                pg_advisory_xact_lock(${THROTTLE_LOCK_CLASS}, hashtext($2))`,
  // The counters as they stand at $2: an ended window counts nothing, an ended lease no attempt in flight.
  read: `SELECT key,
           CASE WHEN reset_at > $2 THEN count ELSE 0 END AS failures,
           CASE WHEN reset_at > $2 AND lease_until > $2 THEN in_flight ELSE 0 END AS in_flight,
           reset_at
         FROM flowadmin_throttle WHERE key = ANY($1)`,
  // One more attempt in flight; a window that ended (or a new key) starts over at $2.
  admit: `INSERT INTO flowadmin_throttle AS t (key, count, reset_at, in_flight, lease_until)
          VALUES ($1, 0, $2::bigint + $3::bigint, 1, $2::bigint + $4::bigint)
          ON CONFLICT (key) DO UPDATE SET
            count = CASE WHEN t.reset_at > $2 THEN t.count ELSE 0 END,
            in_flight = CASE WHEN t.reset_at > $2 AND t.lease_until > $2 THEN t.in_flight + 1 ELSE 1 END,
            reset_at = CASE WHEN t.reset_at > $2 THEN t.reset_at ELSE $2::bigint + $3::bigint END,
            lease_until = $2::bigint + $4::bigint`,
  // One attempt leaves; $4 (0 or 1) is added to the failures.
  settle: `INSERT INTO flowadmin_throttle AS t (key, count, reset_at, in_flight, lease_until)
           VALUES ($1, $4, $2::bigint + $3::bigint, 0, 0)
           ON CONFLICT (key) DO UPDATE SET
             count = CASE WHEN t.reset_at > $2 THEN t.count + $4 ELSE $4 END,
             in_flight = CASE WHEN t.reset_at > $2 AND t.lease_until > $2 AND t.in_flight > 0
                         THEN t.in_flight - 1 ELSE 0 END,
             reset_at = CASE WHEN t.reset_at > $2 THEN t.reset_at ELSE $2::bigint + $3::bigint END`,
  clear: 'DELETE FROM flowadmin_throttle WHERE key = $1',
  known: 'SELECT 1 FROM flowadmin_known_clients WHERE key = $1 AND expires_at > $2',
  remember: `INSERT INTO flowadmin_known_clients AS k (key, expires_at) VALUES ($1, $2)
             ON CONFLICT (key) DO UPDATE SET expires_at = greatest(k.expires_at, excluded.expires_at)`,
  deleteExpired: deleteEnded('flowadmin_throttle', { end: 'reset_at' }),
  deleteExpiredKnown: deleteEnded('flowadmin_known_clients'),
} as const

const countersOf = (attempt: LoginAttempt, policy: ThrottlePolicy) =>
  attemptCounters(attempt, policy).map((counter) => ({ ...counter, key: storedKey(counter.key) }))

/** Takes the locks of an attempt's two counters until the transaction ends. */
async function lockCounters(client: Queryable, attempt: LoginAttempt): Promise<void> {
  const [first, second] = [storedKey(attempt.pairKey), storedKey(attempt.addressKey)].sort()
  await client.query(THROTTLE_SQL.lock, [first, second])
}

/**
 * Login attempts decided in the database. Each call is one transaction holding the advisory locks
 * of its two counters, so instances sharing the database decide one after another on the counters
 * as the last one left them.
 */
export function createThrottleStore(db: Database): ThrottleStore {
  return {
    async begin(attempt, policy, now) {
      return db.transaction(async (client): Promise<AttemptDecision> => {
        await lockCounters(client, attempt)
        const counters = countersOf(attempt, policy)
        const { rows } = await client.query<CounterRow & { key: string }>(THROTTLE_SQL.read, [
          counters.map(({ key }) => key),
          now,
        ])
        const read = counters.map(({ key, limit }) => ({
          limit,
          state: counterFromRow(rows.find((row) => row.key === key)),
        }))
        const refusal = throttleRefusal(read, policy.allowance)
        if (refusal) return refusal
        for (const { key } of counters) {
          await client.query(THROTTLE_SQL.admit, [key, now, policy.windowMs, policy.leaseMs])
        }
        const known = await client.query(THROTTLE_SQL.known, [storedKey(attempt.knownKey), now])
        return { outcome: 'proceed', known: (known.rowCount ?? 0) > 0 }
      })
    },

    async finish(attempt, outcome, policy, now) {
      await db.transaction(async (client) => {
        await lockCounters(client, attempt)
        const failed = outcome === 'failed' ? 1 : 0
        for (const { key } of countersOf(attempt, policy)) {
          await client.query(THROTTLE_SQL.settle, [key, now, policy.windowMs, failed])
        }
        if (outcome === 'succeeded') {
          await client.query(THROTTLE_SQL.clear, [storedKey(attempt.pairKey)])
          await client.query(THROTTLE_SQL.remember, [storedKey(attempt.knownKey), now + policy.knownMs])
        }
      })
    },

    async deleteExpired(now, limit) {
      const counters = (await db.query(THROTTLE_SQL.deleteExpired, [now, limit])).rowCount ?? 0
      if (counters >= limit) return counters
      return (
        counters + ((await db.query(THROTTLE_SQL.deleteExpiredKnown, [now, limit - counters])).rowCount ?? 0)
      )
    },
  }
}
