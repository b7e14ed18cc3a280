import type { TokenRecord, TokenStore } from '@flowadmin/core'
import type { Database } from './database.js'

/** The statements of the token store; each lookup goes through the key or an index. */
export const TOKEN_SQL = {
  save: `INSERT INTO flowadmin_tokens (hash, username, client_id, scope, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (hash) DO UPDATE SET username = excluded.username, client_id = excluded.client_id,
           scope = excluded.scope, created_at = excluded.created_at, expires_at = excluded.expires_at`,
  findByHash: `SELECT hash, username, client_id, scope, created_at, expires_at
               FROM flowadmin_tokens WHERE hash = $1`,
  delete: 'DELETE FROM flowadmin_tokens WHERE hash = $1',
  deleteByUser: 'DELETE FROM flowadmin_tokens WHERE username = $1',
  deleteExpired: `DELETE FROM flowadmin_tokens WHERE hash IN (
                    SELECT hash FROM flowadmin_tokens WHERE expires_at <= $1 LIMIT $2
                    FOR UPDATE SKIP LOCKED)`,
} as const

interface TokenRow {
  hash: string
  username: string
  client_id: string
  scope: string[]
  /** bigint arrives as text. */
  created_at: string
  expires_at: string
}

const rowToRecord = (row: TokenRow): TokenRecord => ({
  hash: row.hash,
  username: row.username,
  clientId: row.client_id,
  scope: row.scope,
  createdAt: Number(row.created_at),
  expiresAt: Number(row.expires_at),
})

/** Tokens by hash. Each write is one statement, committed before it resolves. */
export function createTokenStore(db: Database): TokenStore {
  return {
    async save(record) {
      await db.query(TOKEN_SQL.save, [
        record.hash,
        record.username,
        record.clientId,
        record.scope,
        record.createdAt,
        record.expiresAt,
      ])
    },
    async findByHash(hash) {
      const { rows } = await db.query<TokenRow>(TOKEN_SQL.findByHash, [hash])
      return rows[0] ? rowToRecord(rows[0]) : null
    },
    async delete(hash) {
      return ((await db.query(TOKEN_SQL.delete, [hash])).rowCount ?? 0) > 0
    },
    async deleteByUser(username) {
      return (await db.query(TOKEN_SQL.deleteByUser, [username])).rowCount ?? 0
    },
    async deleteExpired(now, limit) {
      return (await db.query(TOKEN_SQL.deleteExpired, [now, limit])).rowCount ?? 0
    },
  }
}
