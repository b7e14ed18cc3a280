import type { IssuedCode, SsoStore, StartedSignIn, WaitingBounds, WaitingSave } from '@flowadmin/core'
import type { WaitingCount, WaitingRow } from '@flowadmin/store-support'
import { codeRecord, signInRecord, waitingFromRow, waitingVerdict } from '@flowadmin/store-support'
import type { Database } from './database.js'
import { deleteEnded } from './statements.js'
import { storedKey } from './stored-text.js'

/** The first half of the advisory locks of sign-in addresses ('sign' in ASCII); the second is the address's hash. */
export const SIGN_IN_LOCK_CLASS = 0x7369_676e

/** The statements of the single sign-on store. */
export const SSO_SQL = {
  // Inserts when free; either way one row answers: the identity the name is bound to now.
  claim: `WITH claimed AS (
            INSERT INTO flowadmin_sso_names (username, identity, bound_at) VALUES ($1, $2, $3)
            ON CONFLICT (username) DO NOTHING
            RETURNING identity)
          SELECT identity FROM claimed
          UNION ALL
          SELECT identity FROM flowadmin_sso_names WHERE username = $1`,
  // A key whose time ended is remembered again: the replay check counts live keys only.
  remember: `INSERT INTO flowadmin_sso_logouts AS l (key, expires_at) VALUES ($1, $2)
             ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at
             WHERE l.expires_at <= $3`,
  forget: 'DELETE FROM flowadmin_sso_logouts WHERE key = $1',
  deleteExpired: deleteEnded('flowadmin_sso_logouts'),
  // One address's saves take turns (an advisory lock until the transaction ends), so its count and
  // its save are one step across instances.
  lockAddress: `SELECT pg_advisory_xact_lock(${SIGN_IN_LOCK_CLASS}, hashtext($1))`,
  countSignIns: `SELECT count(*) FILTER (WHERE address = $1) AS mine, count(*) AS total
                 FROM flowadmin_sso_sign_ins WHERE expires_at > $2`,
  saveSignIn: `INSERT INTO flowadmin_sso_sign_ins (key, address, sign_in, expires_at) VALUES ($1, $2, $3, $4)
               ON CONFLICT (key) DO UPDATE SET address = excluded.address, sign_in = excluded.sign_in,
                 expires_at = excluded.expires_at`,
  // Taken once: of racing deletes, one gets the row.
  takeSignIn:
    'DELETE FROM flowadmin_sso_sign_ins WHERE key = $1 RETURNING address, sign_in AS record, expires_at',
  countCodes: `SELECT count(*) FILTER (WHERE address = $1) AS mine, count(*) AS total
               FROM flowadmin_sso_codes WHERE expires_at > $2`,
  saveCode: `INSERT INTO flowadmin_sso_codes (key, address, client_id, code, expires_at) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (key) DO UPDATE SET address = excluded.address, client_id = excluded.client_id,
               code = excluded.code, expires_at = excluded.expires_at`,
  findCode:
    'SELECT address, code AS record, expires_at FROM flowadmin_sso_codes WHERE key = $1 AND expires_at > $2',
  takeCode: `DELETE FROM flowadmin_sso_codes
             WHERE key = $1 AND client_id IS NOT DISTINCT FROM $2 AND expires_at > $3
             RETURNING address, code AS record, expires_at`,
  deleteExpiredSignIns: deleteEnded('flowadmin_sso_sign_ins'),
  deleteExpiredCodes: deleteEnded('flowadmin_sso_codes'),
} as const

/**
 * Saves `params` with `save` unless the bounds are reached, counted by `count` under the lock of
 * the address: saves from one address take turns across instances, so it never passes its bound.
 * (The total may be passed by as many saves as other addresses make at the same moment.)
 */
function saveWithin(
  db: Database,
  sql: { count: string; save: string },
  address: string,
  params: unknown[],
  bounds: WaitingBounds,
  now: number,
): Promise<WaitingSave> {
  return db.transaction(async (client) => {
    await client.query(SSO_SQL.lockAddress, [address])
    const { rows } = await client.query<WaitingCount>(sql.count, [address, now])
    const allowed = waitingVerdict(rows[0] ?? { mine: 0, total: 0 }, bounds)
    if (allowed === 'saved') await client.query(sql.save, params)
    return allowed
  })
}

/**
 * Names bound to identities, logout tokens seen, sign-ins under way and one-time codes, shared by
 * every instance on the database.
 */
export function createSsoStore(db: Database): SsoStore {
  return {
    async claimName(username, identity, now) {
      const name = storedKey(username)
      for (let attempt = 0; attempt < 3; attempt++) {
        const { rows } = await db.query<{ identity: string }>(SSO_SQL.claim, [name, identity, now])
        // Empty only when another instance's insert was not yet visible to this statement's
        // snapshot when it conflicted: it is committed now, so asking again finds it.
        const [first] = rows
        if (first !== undefined) return first.identity
      }
      throw new Error(`The name ${JSON.stringify(username.slice(0, 64))} could be neither bound nor read`)
    },
    async rememberLogout(key, expiresAt, now) {
      const { rowCount } = await db.query(SSO_SQL.remember, [storedKey(key), expiresAt, now])
      return (rowCount ?? 0) > 0
    },
    async forgetLogout(key) {
      await db.query(SSO_SQL.forget, [storedKey(key)])
    },
    async deleteExpired(now, limit) {
      return (await db.query(SSO_SQL.deleteExpired, [now, limit])).rowCount ?? 0
    },
    saveSignIn(signIn, bounds, now) {
      const { key, address, expiresAt } = signIn
      const stored = storedKey(address)
      const record = signInRecord(signIn)
      const sql = { count: SSO_SQL.countSignIns, save: SSO_SQL.saveSignIn }
      return saveWithin(db, sql, stored, [key, stored, record, expiresAt], bounds, now)
    },
    async takeSignIn(key, now) {
      const { rows } = await db.query<WaitingRow>(SSO_SQL.takeSignIn, [key])
      const row = rows[0]
      return row === undefined || Number(row.expires_at) <= now
        ? null
        : waitingFromRow<StartedSignIn>(key, row)
    },
    saveCode(code, bounds, now) {
      const { key, address, authorization, expiresAt } = code
      const stored = storedKey(address)
      const clientId = authorization === null ? null : storedKey(authorization.clientId)
      const record = codeRecord(code)
      const sql = { count: SSO_SQL.countCodes, save: SSO_SQL.saveCode }
      return saveWithin(db, sql, stored, [key, stored, clientId, record, expiresAt], bounds, now)
    },
    async findCode(key, now) {
      const { rows } = await db.query<WaitingRow>(SSO_SQL.findCode, [key, now])
      return rows[0] === undefined ? null : waitingFromRow<IssuedCode>(key, rows[0])
    },
    async takeCode(key, clientId, now) {
      const client = clientId === null ? null : storedKey(clientId)
      const { rows } = await db.query<WaitingRow>(SSO_SQL.takeCode, [key, client, now])
      return rows[0] === undefined ? null : waitingFromRow<IssuedCode>(key, rows[0])
    },
    async deleteExpiredSignIns(now, limit) {
      const removed = (await db.query(SSO_SQL.deleteExpiredSignIns, [now, limit])).rowCount ?? 0
      return removed + ((await db.query(SSO_SQL.deleteExpiredCodes, [now, limit - removed])).rowCount ?? 0)
    },
  }
}
