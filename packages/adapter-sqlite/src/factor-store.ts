import type { FactorStore } from '@flowadmin/core'
import { type PendingRow, pendingFromRow, type TotpRow, totpFromRow } from '@flowadmin/store-support'
import type { SqliteDatabase } from './driver.js'
import { createReader } from './reader.js'
import { deleteEnded, prepareAll } from './statements.js'
import { createTransaction } from './transaction.js'

/** The statements of the factor store. */
export const FACTOR_SQL = {
  // A confirmed factor stays: a new enrolment replaces an unconfirmed one only.
  start: `INSERT INTO totp_factors (username, secret, created_at) VALUES (?, ?, ?)
          ON CONFLICT (username) DO UPDATE SET secret = excluded.secret, created_at = excluded.created_at,
            last_step = NULL
          WHERE totp_factors.confirmed_at IS NULL`,
  find: `SELECT secret, created_at, confirmed_at, confirmed_at_sign_in, last_step
         FROM totp_factors WHERE username = ?`,
  confirm: `UPDATE totp_factors SET confirmed_at = ?, confirmed_at_sign_in = ?, last_step = ?
            WHERE username = ? AND secret = ? AND confirmed_at IS NULL`,
  // The compare-and-set: one statement, so a step is recorded once.
  useStep: `UPDATE totp_factors SET last_step = ?
            WHERE username = ? AND confirmed_at IS NOT NULL AND (last_step IS NULL OR last_step < ?)`,
  deleteCodes: 'DELETE FROM recovery_codes WHERE username = ?',
  insertCode:
    'INSERT INTO recovery_codes (username, hash, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
  useCode: 'DELETE FROM recovery_codes WHERE username = ? AND hash = ?',
  countCodes: 'SELECT count(*) AS count FROM recovery_codes WHERE username = ?',
  deleteTotp: 'DELETE FROM totp_factors WHERE username = ?',
  savePending: `INSERT OR REPLACE INTO pending_signins
                  (key, username, client_id, scope, address, agent, created_at, expires_at)
                VALUES (@key, @username, @clientId, @scope, @address, @agent, @createdAt, @expiresAt)`,
  // Taken once: the delete returns the row to one caller only.
  takePending: `DELETE FROM pending_signins WHERE key = ?
                RETURNING username, client_id, scope, address, agent, created_at, expires_at`,
  deleteExpiredPending: deleteEnded('pending_signins'),
} as const

/** TOTP factors and recovery codes, each change one change of the group commit. */
export function createFactorStore(db: SqliteDatabase): FactorStore {
  const transaction = createTransaction(db)
  const read = createReader(db)
  const sql = prepareAll(db, FACTOR_SQL)
  const key = (username: string) => `factors:${username}`
  const about = (username: string) => (touched: string) => touched === key(username)
  return {
    startTotp(username, secret, now) {
      return transaction(() => sql.start.run(username, secret, now).changes > 0, [key(username)])
    },
    findTotp(username) {
      return read(() => {
        const row = sql.find.get(username) as TotpRow | undefined
        return row === undefined ? null : totpFromRow(username, row)
      }, about(username))
    },
    confirmTotp(username, secret, step, now, atSignIn) {
      return transaction(
        () => sql.confirm.run(now, atSignIn ? 1 : 0, step, username, secret).changes > 0,
        [key(username)],
      )
    },
    useTotpStep(username, step) {
      return transaction(() => sql.useStep.run(step, username, step).changes > 0, [key(username)])
    },
    replaceRecoveryCodes(username, hashes, now) {
      return transaction(() => {
        sql.deleteCodes.run(username)
        for (const hash of hashes) sql.insertCode.run(username, hash, now)
      }, [key(username)])
    },
    useRecoveryCode(username, hash) {
      return transaction(() => sql.useCode.run(username, hash).changes > 0, [key(username)])
    },
    countRecoveryCodes(username) {
      return read(
        () => Number((sql.countCodes.get(username) as { count: number | bigint }).count),
        about(username),
      )
    },
    deleteFactors(username) {
      return transaction(() => {
        const totp = sql.deleteTotp.run(username).changes
        const codes = sql.deleteCodes.run(username).changes
        return totp + codes > 0
      }, [key(username)])
    },
    savePendingSignIn(pendingKey, signIn) {
      const row = { key: pendingKey, ...signIn, scope: JSON.stringify(signIn.scope) }
      return transaction(() => {
        sql.savePending.run(row)
      }, [`signin:${pendingKey}`])
    },
    takePendingSignIn(pendingKey, now) {
      return transaction(() => {
        const row = sql.takePending.get(pendingKey) as PendingRow | undefined
        return row === undefined || Number(row.expires_at) <= now ? null : pendingFromRow(row)
      }, [`signin:${pendingKey}`])
    },
    deleteExpiredSignIns(now, limit) {
      return transaction(() => sql.deleteExpiredPending.run(now, limit).changes, [], 'relaxed')
    },
  }
}
