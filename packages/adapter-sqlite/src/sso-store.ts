import type { SsoStore } from '@flowadmin/core'
import type { WaitingCount, WaitingRow } from '@flowadmin/store-support'
import { codeFromRow, codeRecord, waitingVerdict } from '@flowadmin/store-support'
import type { SqliteDatabase } from './driver.js'
import { createReader } from './reader.js'
import { deleteEnded, prepareAll } from './statements.js'
import { createTransaction } from './transaction.js'

/**
 * Remembers a key of `table` until its end, unless it is remembered and its end is after `now`:
 * the replay check counts live keys only, so a key whose time ended is remembered again.
 */
const rememberOnce = (table: string) =>
  `INSERT INTO ${table} (key, expires_at) VALUES (@key, @expiresAt)
   ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at
   WHERE ${table}.expires_at <= @now`

/** The statements of the single sign-on store. */
export const SSO_SQL = {
  claim:
    'INSERT INTO sso_names (username, identity, bound_at) VALUES (?, ?, ?) ON CONFLICT (username) DO NOTHING',
  bound: 'SELECT identity FROM sso_names WHERE username = ?',
  remember: rememberOnce('sso_logouts'),
  forget: 'DELETE FROM sso_logouts WHERE key = ?',
  deleteExpired: deleteEnded('sso_logouts'),
  // The first key stays: a candidate is kept only when there is none.
  keepKey: 'INSERT INTO sign_in_key (only_row, key, created_at) VALUES (1, ?, ?) ON CONFLICT DO NOTHING',
  key: 'SELECT key FROM sign_in_key WHERE only_row = 1',
  spend: rememberOnce('spent_challenges'),
  // Live codes of one address, and in all: what the bounds count.
  countCodes: `SELECT (SELECT count(*) FROM sso_codes WHERE address = @address AND expires_at > @now) AS mine,
                      (SELECT count(*) FROM sso_codes WHERE expires_at > @now) AS total`,
  saveCode: `INSERT OR REPLACE INTO sso_codes (key, address, client_id, code, expires_at)
             VALUES (@key, @address, @clientId, @record, @expiresAt)`,
  findCode: 'SELECT address, client_id, code AS record, expires_at FROM sso_codes WHERE key = ?',
  deleteCode: 'DELETE FROM sso_codes WHERE key = ?',
  deleteExpiredSpent: deleteEnded('spent_challenges'),
  deleteExpiredCodes: deleteEnded('sso_codes'),
} as const

/** A code's row also names the client that may take it. */
type CodeRow = WaitingRow & { client_id: string | null }

/**
 * Names bound to identities, logout tokens seen, the sign-in key, spent challenges and one-time
 * codes, each call one change of the group commit (a count and its save, a read and its delete:
 * one step for every process on the file).
 */
export function createSsoStore(db: SqliteDatabase): SsoStore {
  const transaction = createTransaction(db)
  const reader = createReader(db)
  const sql = prepareAll(db, SSO_SQL)
  return {
    claimName(username, identity, now) {
      return transaction(() => {
        sql.claim.run(username, identity, now)
        return (sql.bound.get(username) as { identity: string }).identity
      }, [`sso-name:${username}`])
    },
    rememberLogout(key, expiresAt, now) {
      return transaction(() => sql.remember.run({ key, expiresAt, now }).changes > 0, [`sso-logout:${key}`])
    },
    async forgetLogout(key) {
      await transaction(() => {
        sql.forget.run(key)
      }, [`sso-logout:${key}`])
    },
    deleteExpired(now, limit) {
      return transaction(() => sql.deleteExpired.run(now, limit).changes, [], 'relaxed')
    },
    signInKey(candidate, now) {
      return transaction(() => {
        sql.keepKey.run(candidate, now)
        return (sql.key.get() as { key: string }).key
      }, ['sign-in-key'])
    },
    spendChallenge(key, expiresAt, now) {
      return transaction(() => sql.spend.run({ key, expiresAt, now }).changes > 0, [`spent-challenge:${key}`])
    },
    // A save lost to a power cut costs a sign-in started again, so saves are relaxed; a take is
    // synced, so a spent code stays spent.
    saveCode(code, bounds, now) {
      const { key, address, expiresAt } = code
      const row = {
        key,
        address,
        clientId: code.authorization?.clientId ?? null,
        record: codeRecord(code),
        expiresAt,
      }
      return transaction(
        () => {
          const allowed = waitingVerdict(sql.countCodes.get({ address, now }) as WaitingCount, bounds)
          if (allowed === 'saved') sql.saveCode.run(row)
          return allowed
        },
        [`sso-code:${key}`],
        'relaxed',
      )
    },
    findCode(key, now) {
      return reader(
        () => {
          const row = sql.findCode.get(key) as CodeRow | undefined
          return row === undefined || Number(row.expires_at) <= now ? null : codeFromRow(key, row)
        },
        (touched) => touched === `sso-code:${key}`,
      )
    },
    takeCode(key, clientId, now) {
      return transaction(() => {
        const row = sql.findCode.get(key) as CodeRow | undefined
        if (row === undefined || Number(row.expires_at) <= now || (row.client_id ?? null) !== clientId)
          return null
        sql.deleteCode.run(key)
        return codeFromRow(key, row)
      }, [`sso-code:${key}`])
    },
    deleteExpiredSignIns(now, limit) {
      return transaction(
        () => {
          const removed = sql.deleteExpiredSpent.run(now, limit).changes
          return removed + sql.deleteExpiredCodes.run(now, limit - removed).changes
        },
        [],
        'relaxed',
      )
    },
  }
}
