import type { TokenRecord, TokenStore } from '@flowadmin/core'
import { TOKEN_COLUMNS as COLUMNS, type TokenRow, tokenFromRow } from '@flowadmin/store-support'
import type { Database } from './database.js'
import { deleteEnded } from './statements.js'
import { fromStored, storedKey } from './stored-text.js'
import { createTokenCache, TOKEN_CHANNEL, type TokenCache } from './token-cache.js'

// Ids and usernames order by their bytes ("C"), as in every store, whatever the database's collation.
const OLDEST_FIRST = 'ORDER BY created_at, id COLLATE "C"'

/** The statements of the token store; each lookup goes through the key or an index. */
export const TOKEN_SQL = {
  // A record saved under an id or a hash that exists replaces it: first the one of another hash
  // with this id goes, then the hash is written (both in one transaction).
  dropOtherWithId: 'DELETE FROM flowadmin_tokens WHERE id = $2 AND hash <> $1 RETURNING hash',
  save: `INSERT INTO flowadmin_tokens (${COLUMNS})
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
         ON CONFLICT (hash) DO UPDATE SET id = excluded.id, kind = excluded.kind, name = excluded.name,
           username = excluded.username, client_id = excluded.client_id, scope = excluded.scope,
           fingerprint = excluded.fingerprint, created_at = excluded.created_at,
           expires_at = excluded.expires_at, last_used_at = excluded.last_used_at,
           last_address = excluded.last_address, agent = excluded.agent,
           audience = excluded.audience, sign_in = excluded.sign_in
         RETURNING (xmax = 0) AS inserted`,
  findByHash: `SELECT ${COLUMNS} FROM flowadmin_tokens WHERE hash = $1`,
  findById: `SELECT ${COLUMNS} FROM flowadmin_tokens WHERE id = $1`,
  listAll: `SELECT ${COLUMNS} FROM flowadmin_tokens ${OLDEST_FIRST}`,
  listByUser: `SELECT ${COLUMNS} FROM flowadmin_tokens WHERE username = $1 ${OLDEST_FIRST}`,
  usernames: 'SELECT DISTINCT username FROM flowadmin_tokens',
  touch: 'UPDATE flowadmin_tokens SET last_used_at = $2, last_address = $3 WHERE id = $1',
  // A record changed or deleted is announced by its hash, in the statement (or transaction) that
  // does it: the announcement is delivered when that commits, never before. A new record and a
  // use (touch) change no answer any instance may have kept, and are not announced.
  announce: `SELECT pg_notify('${TOKEN_CHANNEL}', $1)`,
  delete: `WITH gone AS (DELETE FROM flowadmin_tokens WHERE id = $1 RETURNING hash)
           SELECT hash, pg_notify('${TOKEN_CHANNEL}', hash) FROM gone`,
  deleteByUser: `WITH gone AS (DELETE FROM flowadmin_tokens WHERE username = $1 RETURNING hash)
                 SELECT hash, pg_notify('${TOKEN_CHANNEL}', hash) FROM gone`,
  // Never-expiring records (null) match no comparison, so they stay. Not announced: an expired
  // record kept anywhere is refused for its expiry all the same.
  deleteExpired: `${deleteEnded('flowadmin_tokens', { key: 'hash' })} RETURNING hash`,
  countLive: `SELECT kind, COUNT(*) AS live FROM flowadmin_tokens
              WHERE expires_at IS NULL OR expires_at > $1 GROUP BY kind`,
} as const

/** A record as read back: its username was written by storedKey. */
const recordOf = (row: TokenRow) => tokenFromRow(row, fromStored)

/**
 * Tokens by hash and by id. Each write is one statement or transaction, committed before it
 * resolves. A lookup by hash (each authenticated request's and introspection's) answers from
 * `cache` when it holds the record (see TokenCache: only while the token channel is heard), and
 * reads the database otherwise; every change or deletion of a record is announced on the channel
 * and forgotten here at once. The rights a record grants are still decided at each request by the
 * core, against the users as they are.
 */
export function createTokenStore(db: Database, cache: TokenCache = createTokenCache()): TokenStore {
  const one = async (sql: string, key: string) => {
    const { rows } = await db.query<TokenRow>(sql, [key])
    return rows[0] ? recordOf(rows[0]) : null
  }
  return {
    async save(record) {
      const values = [
        record.hash,
        record.id,
        record.kind,
        record.name,
        // A username may hold a NUL (a name from a directory or a provider), which text cannot.
        storedKey(record.username),
        record.clientId,
        record.scope,
        record.fingerprint,
        record.createdAt,
        record.expiresAt,
        record.lastUsedAt,
        record.lastAddress,
        record.agent,
        record.audience,
        record.signIn,
      ]
      const changed = await db.transaction(async (client) => {
        const dropped = await client.query<{ hash: string }>(TOKEN_SQL.dropOtherWithId, values.slice(0, 2))
        const saved = await client.query<{ inserted: boolean }>(TOKEN_SQL.save, values)
        const hashes = dropped.rows.map((row) => row.hash)
        if (saved.rows[0]?.inserted !== true) hashes.push(record.hash)
        for (const hash of hashes) await client.query(TOKEN_SQL.announce, [hash])
        return hashes
      })
      for (const hash of changed) cache.forget(hash)
    },
    async findByHash(hash) {
      const kept = cache.get(hash)
      if (kept !== undefined) return kept
      const generation = cache.generation
      const record = await one(TOKEN_SQL.findByHash, hash)
      if (record !== null) cache.keep(record, generation)
      return record
    },
    findById: (id) => one(TOKEN_SQL.findById, id),
    async list(username) {
      const { rows } =
        username === null
          ? await db.query<TokenRow>(TOKEN_SQL.listAll)
          : await db.query<TokenRow>(TOKEN_SQL.listByUser, [storedKey(username)])
      return rows.map(recordOf)
    },
    async usernames() {
      // Sorted here, as every store sorts them: the escaped text does not sort as the names do.
      const { rows } = await db.query<{ username: string }>(TOKEN_SQL.usernames)
      return rows.map((row) => fromStored(row.username)).sort()
    },
    async touch(id, usedAt, address) {
      await db.query(TOKEN_SQL.touch, [id, usedAt, address])
      cache.used(id, usedAt, address)
    },
    async delete(id) {
      const { rows } = await db.query<{ hash: string }>(TOKEN_SQL.delete, [id])
      for (const row of rows) cache.forget(row.hash)
      cache.forgetId(id)
      return rows.length > 0
    },
    async deleteByUser(username) {
      const { rows } = await db.query<{ hash: string }>(TOKEN_SQL.deleteByUser, [storedKey(username)])
      for (const row of rows) cache.forget(row.hash)
      return rows.length
    },
    async deleteExpired(now, limit) {
      const { rows } = await db.query<{ hash: string }>(TOKEN_SQL.deleteExpired, [now, limit])
      for (const row of rows) cache.forget(row.hash)
      return rows.length
    },
    async countLive(now) {
      const live = { session: 0, api: 0 }
      const { rows } = await db.query<{ kind: TokenRecord['kind']; live: string }>(TOKEN_SQL.countLive, [now])
      for (const row of rows) live[row.kind] = Number(row.live)
      return live
    },
  }
}
