import type { SsoStore } from '@flowadmin/core'
import type { SqliteDatabase } from './database.js'
import { prepareAll } from './statements.js'
import { createTransaction } from './transaction.js'

/** The statements of the single sign-on store. */
export const SSO_SQL = {
  claim:
    'INSERT INTO sso_names (username, identity, bound_at) VALUES (?, ?, ?) ON CONFLICT (username) DO NOTHING',
  bound: 'SELECT identity FROM sso_names WHERE username = ?',
  // A key whose time ended is remembered again: the replay check counts live keys only.
  remember: `INSERT INTO sso_logouts (key, expires_at) VALUES (@key, @expiresAt)
             ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at
             WHERE sso_logouts.expires_at <= @now`,
  deleteExpired: `DELETE FROM sso_logouts
                  WHERE key IN (SELECT key FROM sso_logouts WHERE expires_at <= ? LIMIT ?)`,
} as const

/** Names bound to identities and logout tokens seen, each call one change of the group commit. */
export function createSsoStore(db: SqliteDatabase): SsoStore {
  const transaction = createTransaction(db)
  const { claim, bound, remember, deleteExpired } = prepareAll(db, SSO_SQL)
  return {
    claimName(username, identity, now) {
      return transaction(() => {
        claim.run(username, identity, now)
        return (bound.get(username) as { identity: string }).identity
      }, [`sso-name:${username}`])
    },
    rememberLogout(key, expiresAt, now) {
      return transaction(() => remember.run({ key, expiresAt, now }).changes > 0, [`sso-logout:${key}`])
    },
    deleteExpired(now, limit) {
      return transaction(() => deleteExpired.run(now, limit).changes, [], 'relaxed')
    },
  }
}
