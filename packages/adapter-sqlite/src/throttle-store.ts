import {
  type AttemptDecision,
  attemptCounters,
  type LoginAttempt,
  type ThrottleStore,
  throttleRefusal,
} from '@flowadmin/core'
import { type CounterRow, counterFromRow } from '@flowadmin/store-support'
import type { SqliteDatabase } from './driver.js'
import { deleteEnded, prepareAll } from './statements.js'
import { createTransaction } from './transaction.js'

/** The statements of the throttle store. `count` holds the failures of the live window. */
export const THROTTLE_SQL = {
  // A counter as it stands at @now: an ended window counts nothing, an ended lease no attempt in flight.
  read: `SELECT
           CASE WHEN reset_at > @now THEN count ELSE 0 END AS failures,
           CASE WHEN reset_at > @now AND lease_until > @now THEN in_flight ELSE 0 END AS in_flight,
           reset_at > @now AS live,
           reset_at
         FROM throttle WHERE key = @key`,
  // One more attempt in flight; a window that ended (or a new key) starts over at @now.
  admit: `INSERT INTO throttle (key, count, reset_at, in_flight, lease_until)
          VALUES (@key, 0, @now + @window, 1, @now + @lease)
          ON CONFLICT (key) DO UPDATE SET
            count = CASE WHEN reset_at > @now THEN count ELSE 0 END,
            in_flight = CASE WHEN reset_at > @now AND lease_until > @now THEN in_flight + 1 ELSE 1 END,
            reset_at = CASE WHEN reset_at > @now THEN reset_at ELSE @now + @window END,
            lease_until = @now + @lease`,
  // One attempt leaves; @failed (0 or 1) is added to the failures.
  settle: `INSERT INTO throttle (key, count, reset_at, in_flight, lease_until)
           VALUES (@key, @failed, @now + @window, 0, 0)
           ON CONFLICT (key) DO UPDATE SET
             count = CASE WHEN reset_at > @now THEN count + @failed ELSE @failed END,
             in_flight = CASE WHEN reset_at > @now AND lease_until > @now AND in_flight > 0
                         THEN in_flight - 1 ELSE 0 END,
             reset_at = CASE WHEN reset_at > @now THEN reset_at ELSE @now + @window END`,
  clear: 'DELETE FROM throttle WHERE key = ?',
  known: 'SELECT 1 FROM known_clients WHERE key = ? AND expires_at > ?',
  remember: `INSERT INTO known_clients (key, expires_at) VALUES (?, ?)
             ON CONFLICT (key) DO UPDATE SET expires_at = max(expires_at, excluded.expires_at)`,
  deleteExpired: deleteEnded('throttle', { end: 'reset_at' }),
  deleteExpiredKnown: deleteEnded('known_clients'),
} as const

/**
 * Login attempts decided in the database. Each call is one change of the group commit (an
 * IMMEDIATE transaction), so processes sharing the file decide one after another on the counters
 * as the last one left them. Its changes are 'relaxed': a group holding only throttle changes
 * commits with `synchronous=NORMAL`, which survives the process crashing but not the machine
 * losing power (the last failures counted before a power cut may be forgotten), a fair price for
 * counters that a flood writes twice per attempt. A group holding any other change syncs it all.
 */
export function createThrottleStore(db: SqliteDatabase): ThrottleStore {
  const transaction = createTransaction(db)
  const { read, admit, settle, clear, known, remember, deleteExpired, deleteExpiredKnown } = prepareAll(
    db,
    THROTTLE_SQL,
  )

  // What an attempt's changes touch (see transaction.ts): its two counters.
  const relaxed = (attempt: LoginAttempt) =>
    [[`throttle:${attempt.pairKey}`, `throttle:${attempt.addressKey}`], 'relaxed'] as const

  return {
    async begin(attempt, policy, now) {
      return transaction(
        (): AttemptDecision => {
          const counters = attemptCounters(attempt, policy)
          const seen = counters.map(({ key, limit }) => ({
            limit,
            state: counterFromRow(read.get({ key, now }) as CounterRow | undefined),
          }))
          const refusal = throttleRefusal(seen, policy.allowance)
          if (refusal) return refusal
          for (const { key } of counters) {
            admit.run({ key, now, window: policy.windowMs, lease: policy.leaseMs })
          }
          return { outcome: 'proceed', known: known.get(attempt.knownKey, now) !== undefined }
        },
        ...relaxed(attempt),
      )
    },

    async finish(attempt, outcome, policy, now) {
      await transaction(
        () => {
          const failed = outcome === 'failed' ? 1 : 0
          for (const { key } of attemptCounters(attempt, policy)) {
            settle.run({ key, now, window: policy.windowMs, failed })
          }
          if (outcome === 'succeeded') {
            clear.run(attempt.pairKey)
            remember.run(attempt.knownKey, now + policy.knownMs)
          }
        },
        ...relaxed(attempt),
      )
    },

    async deleteExpired(now, limit) {
      // Only ended windows and expired clients go, which no decision counts: no reader waits for this.
      return transaction(
        () => {
          const counters = deleteExpired.run(now, limit).changes
          return counters + deleteExpiredKnown.run(now, limit - counters).changes
        },
        [],
        'relaxed',
      )
    },
  }
}
