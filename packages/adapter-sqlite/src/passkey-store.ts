import type { PasskeyStore, WaitingSave } from '@flowadmin/core'
import {
  type ChallengeRow,
  PASSKEY_COLUMNS as COLUMNS,
  liveChallenge,
  type PasskeyRow,
  passkeyFromRow,
  type WaitingCount,
  waitingVerdict,
} from '@flowadmin/store-support'
import type { SqliteDatabase } from './driver.js'
import { createReader } from './reader.js'
import { deleteEnded, prepareAll } from './statements.js'
import { createTransaction } from './transaction.js'

/** The statements of the passkey store. */
export const PASSKEY_SQL = {
  save: `INSERT OR REPLACE INTO passkeys (${COLUMNS})
         VALUES (@id, @username, @name, @publicKey, @counter, @transports, @backedUp, @createdAt, @lastUsedAt)`,
  list: `SELECT ${COLUMNS} FROM passkeys WHERE username = ? ORDER BY created_at, id`,
  find: `SELECT ${COLUMNS} FROM passkeys WHERE id = ?`,
  // The compare-and-set: one statement, so a counter is recorded once.
  updateUse: `UPDATE passkeys SET counter = @counter, backed_up = @backedUp, last_used_at = @now
              WHERE id = @id AND ((counter = 0 AND @counter = 0) OR counter < @counter)`,
  delete: 'DELETE FROM passkeys WHERE username = ? AND id = ?',
  deleteAll: 'DELETE FROM passkeys WHERE username = ?',
  // Live sign-in challenges of one address, and in all: what the bounds count.
  countSignIns: `SELECT (SELECT count(*) FROM passkey_challenges
                         WHERE address = @address AND purpose = 'sign_in' AND expires_at > @now) AS mine,
                        (SELECT count(*) FROM passkey_challenges
                         WHERE purpose = 'sign_in' AND expires_at > @now) AS total`,
  saveChallenge: `INSERT OR REPLACE INTO passkey_challenges (key, purpose, username, address, expires_at)
                  VALUES (@key, @purpose, @username, @address, @expiresAt)`,
  // Taken once: the delete returns the row to one caller only.
  takeChallenge: `DELETE FROM passkey_challenges WHERE key = ?
                  RETURNING purpose, username, address, expires_at`,
  deleteExpiredChallenges: deleteEnded('passkey_challenges'),
} as const

/** Passkeys and the challenges of their ceremonies, each change one change of the group commit. */
export function createPasskeyStore(db: SqliteDatabase): PasskeyStore {
  const transaction = createTransaction(db)
  const read = createReader(db)
  const sql = prepareAll(db, PASSKEY_SQL)
  return {
    save(credential) {
      const row = {
        ...credential,
        transports: JSON.stringify(credential.transports),
        backedUp: credential.backedUp ? 1 : 0,
      }
      return transaction(() => {
        sql.save.run(row)
      })
    },
    list(username) {
      return read(() =>
        (sql.list.all(username) as PasskeyRow[]).map((row) => ({ ...passkeyFromRow(row), username })),
      )
    },
    find(id) {
      return read(() => {
        const row = sql.find.get(id) as PasskeyRow | undefined
        return row === undefined ? null : { ...passkeyFromRow(row), id }
      })
    },
    updateUse(id, counter, backedUp, now) {
      return transaction(
        () => sql.updateUse.run({ id, counter, backedUp: backedUp ? 1 : 0, now }).changes > 0,
      )
    },
    delete(username, id) {
      return transaction(() => sql.delete.run(username, id).changes > 0)
    },
    deleteAll(username) {
      return transaction(() => Number(sql.deleteAll.run(username).changes))
    },
    // A sign-in's challenge: the count and the save are one change, so one step for every process
    // on the file.
    saveChallenge(key, { purpose, username, address, expiresAt }, bounds, now): Promise<WaitingSave> {
      return transaction(() => {
        if (purpose === 'sign_in') {
          const allowed = waitingVerdict(sql.countSignIns.get({ address, now }) as WaitingCount, bounds)
          if (allowed !== 'saved') return allowed
        }
        sql.saveChallenge.run({ key, purpose, username, address, expiresAt })
        return 'saved'
      }, [`passkey-challenge:${key}`])
    },
    takeChallenge(key, now) {
      return transaction(
        () => liveChallenge(sql.takeChallenge.get(key) as ChallengeRow | undefined, now),
        [`passkey-challenge:${key}`],
      )
    },
    deleteExpiredChallenges(now, limit) {
      return transaction(() => Number(sql.deleteExpiredChallenges.run(now, limit).changes), [], 'relaxed')
    },
  }
}
