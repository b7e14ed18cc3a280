import type { TokenRecord, TokenStore } from '@flowadmin/core'
import { TOKEN_COLUMNS as COLUMNS, type TokenRow, tokenFromRow } from '@flowadmin/store-support'
import type { Database } from './database.js'

// Ids and usernames order by their bytes ("C"), as in every store, whatever the database's collation.
const OLDEST_FIRST = 'ORDER BY created_at, id COLLATE "C"'

/** The statements of the token store; each lookup goes through the key or an index. */
export const TOKEN_SQL = {
  // A record saved under an id or a hash that exists replaces it: first the one of another hash
  // with this id goes, then the hash is written (both in one transaction).
  dropOtherWithId: 'DELETE FROM flowadmin_tokens WHERE id = $2 AND hash <> $1',
  save: `INSERT INTO flowadmin_tokens (${COLUMNS})
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
         ON CONFLICT (hash) DO UPDATE SET id = excluded.id, kind = excluded.kind, name = excluded.name,
           username = excluded.username, client_id = excluded.client_id, scope = excluded.scope,
           fingerprint = excluded.fingerprint, created_at = excluded.created_at,
           expires_at = excluded.expires_at, last_used_at = excluded.last_used_at,
           last_address = excluded.last_address, agent = excluded.agent,
           audience = excluded.audience`,
  findByHash: `SELECT ${COLUMNS} FROM flowadmin_tokens WHERE hash = $1`,
  findById: `SELECT ${COLUMNS} FROM flowadmin_tokens WHERE id = $1`,
  listAll: `SELECT ${COLUMNS} FROM flowadmin_tokens ${OLDEST_FIRST}`,
  listByUser: `SELECT ${COLUMNS} FROM flowadmin_tokens WHERE username = $1 ${OLDEST_FIRST}`,
  usernames: 'SELECT DISTINCT username COLLATE "C" AS username FROM flowadmin_tokens ORDER BY 1',
  touch: 'UPDATE flowadmin_tokens SET last_used_at = $2, last_address = $3 WHERE id = $1',
  delete: 'DELETE FROM flowadmin_tokens WHERE id = $1',
  deleteByUser: 'DELETE FROM flowadmin_tokens WHERE username = $1',
  // Never-expiring records (null) match no comparison, so they stay.
  deleteExpired: `DELETE FROM flowadmin_tokens WHERE hash IN (
                    SELECT hash FROM flowadmin_tokens WHERE expires_at <= $1 LIMIT $2
                    FOR UPDATE SKIP LOCKED)`,
  countLive: `SELECT kind, COUNT(*) AS live FROM flowadmin_tokens
              WHERE expires_at IS NULL OR expires_at > $1 GROUP BY kind`,
} as const

/** Tokens by hash and by id. Each write is one statement, committed before it resolves. */
export function createTokenStore(db: Database): TokenStore {
  const one = async (sql: string, key: string) => {
    const { rows } = await db.query<TokenRow>(sql, [key])
    return rows[0] ? tokenFromRow(rows[0]) : null
  }
  return {
    async save(record) {
      const values = [
        record.hash,
        record.id,
        record.kind,
        record.name,
        record.username,
        record.clientId,
        record.scope,
        record.fingerprint,
        record.createdAt,
        record.expiresAt,
        record.lastUsedAt,
        record.lastAddress,
        record.agent,
        record.audience,
      ]
      await db.transaction(async (client) => {
        await client.query(TOKEN_SQL.dropOtherWithId, values.slice(0, 2))
        await client.query(TOKEN_SQL.save, values)
      })
    },
    findByHash: (hash) => one(TOKEN_SQL.findByHash, hash),
    findById: (id) => one(TOKEN_SQL.findById, id),
    async list(username) {
      const { rows } =
        username === null
          ? await db.query<TokenRow>(TOKEN_SQL.listAll)
          : await db.query<TokenRow>(TOKEN_SQL.listByUser, [username])
      return rows.map(tokenFromRow)
    },
    async usernames() {
      return (await db.query<{ username: string }>(TOKEN_SQL.usernames)).rows.map((row) => row.username)
    },
    async touch(id, usedAt, address) {
      await db.query(TOKEN_SQL.touch, [id, usedAt, address])
    },
    async delete(id) {
      return ((await db.query(TOKEN_SQL.delete, [id])).rowCount ?? 0) > 0
    },
    async deleteByUser(username) {
      return (await db.query(TOKEN_SQL.deleteByUser, [username])).rowCount ?? 0
    },
    async deleteExpired(now, limit) {
      return (await db.query(TOKEN_SQL.deleteExpired, [now, limit])).rowCount ?? 0
    },
    async countLive(now) {
      const live = { session: 0, api: 0 }
      const { rows } = await db.query<{ kind: TokenRecord['kind']; live: string }>(TOKEN_SQL.countLive, [now])
      for (const row of rows) live[row.kind] = Number(row.live)
      return live
    },
  }
}
