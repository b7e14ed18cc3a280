import type { SsoStore } from '@flowadmin/core'
import type { Database } from './database.js'
import { storedKey } from './throttle-store.js'

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
  deleteExpired: `DELETE FROM flowadmin_sso_logouts WHERE key IN (
                    SELECT key FROM flowadmin_sso_logouts WHERE expires_at <= $1 LIMIT $2
                    FOR UPDATE SKIP LOCKED)`,
} as const

/** Names bound to identities and logout tokens seen, shared by every instance on the database. */
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
    async deleteExpired(now, limit) {
      return (await db.query(SSO_SQL.deleteExpired, [now, limit])).rowCount ?? 0
    },
  }
}
