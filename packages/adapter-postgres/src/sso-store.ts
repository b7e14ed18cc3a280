import type { SsoStore, WaitingBounds, WaitingSave } from '@flowadmin/core'
import type { WaitingCount, WaitingRow } from '@flowadmin/store-support'
import { codeFromRow, codeRecord, waitingVerdict } from '@flowadmin/store-support'
import type { Database } from './database.js'
import { deleteEnded } from './statements.js'
import { storedKey } from './stored-text.js'

/** The first half of the advisory locks of code addresses ('sign' in ASCII); the second is the address's hash. */
export const SIGN_IN_LOCK_CLASS = 0x7369_676e

/**
 * Remembers a key of `table` until its end ($2), unless it is remembered and its end is after
 * `now` ($3): the replay check counts live keys only, so a key whose time ended is remembered again.
 */
const rememberOnce = (table: string) =>
  `INSERT INTO ${table} AS r (key, expires_at) VALUES ($1, $2)
   ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at
   WHERE r.expires_at <= $3`

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
  remember: rememberOnce('flowadmin_sso_logouts'),
  forget: 'DELETE FROM flowadmin_sso_logouts WHERE key = $1',
  deleteExpired: deleteEnded('flowadmin_sso_logouts'),
  // Inserts when there is none; either way one row answers: the key kept first.
  signInKey: `WITH kept AS (
                INSERT INTO flowadmin_sign_in_key (key, created_at) VALUES ($1, $2)
                ON CONFLICT (only_row) DO NOTHING
                RETURNING key)
              SELECT key FROM kept
              UNION ALL
              SELECT key FROM flowadmin_sign_in_key`,
  spend: rememberOnce('flowadmin_spent_challenges'),
  // One address's saves take turns (an advisory lock until the transaction ends), so its count and
  // its save are one step across instances.
  lockAddress: `SELECT pg_advisory_xact_lock(${SIGN_IN_LOCK_CLASS}, hashtext($1))`,
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
  deleteExpiredSpent: deleteEnded('flowadmin_spent_challenges'),
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
 * Names bound to identities, logout tokens seen, the sign-in key, spent challenges and one-time
 * codes, shared by every instance on the database.
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
    async signInKey(candidate, now) {
      for (let attempt = 0; attempt < 3; attempt++) {
        const { rows } = await db.query<{ key: string }>(SSO_SQL.signInKey, [candidate, now])
        // Empty only when another instance's insert was not yet visible to this statement's
        // snapshot when it conflicted: it is committed now, so asking again finds it.
        const [first] = rows
        if (first !== undefined) return first.key
      }
      throw new Error('The sign-in key could be neither kept nor read')
    },
    async spendChallenge(key, expiresAt, now) {
      const { rowCount } = await db.query(SSO_SQL.spend, [key, expiresAt, now])
      return (rowCount ?? 0) > 0
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
      return rows[0] === undefined ? null : codeFromRow(key, rows[0])
    },
    async takeCode(key, clientId, now) {
      const client = clientId === null ? null : storedKey(clientId)
      const { rows } = await db.query<WaitingRow>(SSO_SQL.takeCode, [key, client, now])
      return rows[0] === undefined ? null : codeFromRow(key, rows[0])
    },
    async deleteExpiredSignIns(now, limit) {
      const removed = (await db.query(SSO_SQL.deleteExpiredSpent, [now, limit])).rowCount ?? 0
      return removed + ((await db.query(SSO_SQL.deleteExpiredCodes, [now, limit - removed])).rowCount ?? 0)
    },
  }
}
