import type { FactorStore } from '@flowadmin/core'
import { type PendingRow, pendingFromRow, type TotpRow, totpFromRow } from '@flowadmin/store-support'
import type { Database } from './database.js'
import { deleteEnded } from './statements.js'
import { storedKey } from './stored-text.js'

/** The statements of the factor store. */
export const FACTOR_SQL = {
  // A confirmed factor stays: a new enrolment replaces an unconfirmed one only.
  start: `INSERT INTO flowadmin_totp_factors AS f (username, secret, created_at) VALUES ($1, $2, $3)
          ON CONFLICT (username) DO UPDATE SET secret = excluded.secret, created_at = excluded.created_at,
            last_step = NULL
          WHERE f.confirmed_at IS NULL`,
  find: `SELECT secret, created_at, confirmed_at, confirmed_at_sign_in, last_step
         FROM flowadmin_totp_factors WHERE username = $1`,
  confirm: `UPDATE flowadmin_totp_factors SET confirmed_at = $1, last_step = $2, confirmed_at_sign_in = $5
            WHERE username = $3 AND secret = $4 AND confirmed_at IS NULL`,
  // The compare-and-set: one statement. Of two instances updating the row at once, the second
  // waits for the first to commit, then checks its condition again on the row the first left.
  useStep: `UPDATE flowadmin_totp_factors SET last_step = $1
            WHERE username = $2 AND confirmed_at IS NOT NULL AND (last_step IS NULL OR last_step < $1)`,
  deleteCodes: 'DELETE FROM flowadmin_recovery_codes WHERE username = $1',
  insertCodes: `INSERT INTO flowadmin_recovery_codes (username, hash, created_at)
                SELECT $1, hash, $3 FROM unnest($2::text[]) AS hash ON CONFLICT DO NOTHING`,
  useCode: 'DELETE FROM flowadmin_recovery_codes WHERE username = $1 AND hash = $2',
  countCodes: 'SELECT count(*)::integer AS count FROM flowadmin_recovery_codes WHERE username = $1',
  deleteTotp: 'DELETE FROM flowadmin_totp_factors WHERE username = $1',
  savePending: `INSERT INTO flowadmin_pending_signins
                  (key, username, client_id, scope, address, agent, created_at, expires_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
                ON CONFLICT (key) DO UPDATE SET username = excluded.username, client_id = excluded.client_id,
                  scope = excluded.scope, address = excluded.address, agent = excluded.agent,
                  created_at = excluded.created_at, expires_at = excluded.expires_at`,
  // Taken once: of two instances deleting the row, one gets it back.
  takePending: `DELETE FROM flowadmin_pending_signins WHERE key = $1
                RETURNING username, client_id, scope, address, agent, created_at, expires_at`,
  deleteExpiredPending: deleteEnded('flowadmin_pending_signins'),
} as const

/** TOTP factors and recovery codes, shared by every instance on the database. */
export function createFactorStore(db: Database): FactorStore {
  return {
    async startTotp(username, secret, now) {
      return ((await db.query(FACTOR_SQL.start, [storedKey(username), secret, now])).rowCount ?? 0) > 0
    },
    async findTotp(username) {
      const { rows } = await db.query<TotpRow>(FACTOR_SQL.find, [storedKey(username)])
      return rows[0] === undefined ? null : totpFromRow(username, rows[0])
    },
    async confirmTotp(username, secret, step, now, atSignIn) {
      const params = [now, step, storedKey(username), secret, atSignIn]
      const { rowCount } = await db.query(FACTOR_SQL.confirm, params)
      return (rowCount ?? 0) > 0
    },
    async useTotpStep(username, step) {
      return ((await db.query(FACTOR_SQL.useStep, [step, storedKey(username)])).rowCount ?? 0) > 0
    },
    async replaceRecoveryCodes(username, hashes, now) {
      const name = storedKey(username)
      await db.transaction(async (client) => {
        await client.query(FACTOR_SQL.deleteCodes, [name])
        await client.query(FACTOR_SQL.insertCodes, [name, [...hashes], now])
      })
    },
    async useRecoveryCode(username, hash) {
      return ((await db.query(FACTOR_SQL.useCode, [storedKey(username), hash])).rowCount ?? 0) > 0
    },
    async countRecoveryCodes(username) {
      const { rows } = await db.query<{ count: number }>(FACTOR_SQL.countCodes, [storedKey(username)])
      return rows[0]?.count ?? 0
    },
    async deleteFactors(username) {
      const name = storedKey(username)
      return db.transaction(async (client) => {
        const totp = (await client.query(FACTOR_SQL.deleteTotp, [name])).rowCount ?? 0
        const codes = (await client.query(FACTOR_SQL.deleteCodes, [name])).rowCount ?? 0
        return totp + codes > 0
      })
    },
    async savePendingSignIn(key, signIn) {
      await db.query(FACTOR_SQL.savePending, [
        storedKey(key),
        // A configured user's name and a known client, kept as they are, as tokens keep them.
        signIn.username,
        signIn.clientId,
        signIn.scope,
        signIn.address,
        signIn.agent,
        signIn.createdAt,
        signIn.expiresAt,
      ])
    },
    async takePendingSignIn(key, now) {
      const { rows } = await db.query<PendingRow>(FACTOR_SQL.takePending, [storedKey(key)])
      const [row] = rows
      return row === undefined || Number(row.expires_at) <= now ? null : pendingFromRow(row)
    },
    async deleteExpiredSignIns(now, limit) {
      return (await db.query(FACTOR_SQL.deleteExpiredPending, [now, limit])).rowCount ?? 0
    },
  }
}
