import type { TokenRecord, TokenStore } from '@flowadmin/core'
import type { SqliteDatabase } from './database.js'
import { createTransaction } from './transaction.js'

/** The statements of the token store; each lookup goes through an index (see the plan test). */
export const TOKEN_SQL = {
  save: `INSERT OR REPLACE INTO tokens (hash, username, client_id, scope, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?)`,
  findByHash: `SELECT hash, username, client_id, scope, created_at, expires_at FROM tokens WHERE hash = ?`,
  delete: 'DELETE FROM tokens WHERE hash = ?',
  deleteByUser: 'DELETE FROM tokens WHERE username = ?',
  deleteExpired: `DELETE FROM tokens
                  WHERE hash IN (SELECT hash FROM tokens WHERE expires_at <= ? LIMIT ?)`,
} as const

interface TokenRow {
  hash: string
  username: string
  client_id: string
  scope: string
  created_at: number | bigint
  expires_at: number | bigint
}

/** Token changes touch nothing a waiting reader depends on: lookups answer at once (below). */
const NO_READER: readonly string[] = []

const rowToRecord = (row: TokenRow): TokenRecord => ({
  hash: row.hash,
  username: row.username,
  clientId: row.client_id,
  scope: JSON.parse(row.scope) as string[],
  createdAt: Number(row.created_at),
  expiresAt: Number(row.expires_at),
})

/**
 * Tokens by hash. Every write goes through the group commit and resolves once durable. A lookup
 * answers at once, even while changes wait for their commit: a pending revoke only hides a token
 * early, and a pending issue is of a token nobody has been given yet.
 */
export function createTokenStore(db: SqliteDatabase): TokenStore {
  const transaction = createTransaction(db)
  const save = db.prepare(TOKEN_SQL.save)
  const findByHash = db.prepare(TOKEN_SQL.findByHash)
  const remove = db.prepare(TOKEN_SQL.delete)
  const deleteByUser = db.prepare(TOKEN_SQL.deleteByUser)
  const deleteExpired = db.prepare(TOKEN_SQL.deleteExpired)

  return {
    async save(record) {
      await transaction(
        () =>
          save.run(
            record.hash,
            record.username,
            record.clientId,
            JSON.stringify(record.scope),
            record.createdAt,
            record.expiresAt,
          ),
        NO_READER,
      )
    },
    async findByHash(hash) {
      const row = findByHash.get(hash) as TokenRow | undefined
      return row ? rowToRecord(row) : null
    },
    async delete(hash) {
      return transaction(() => remove.run(hash).changes > 0, NO_READER)
    },
    async deleteByUser(username) {
      return transaction(() => deleteByUser.run(username).changes, NO_READER)
    },
    async deleteExpired(now, limit) {
      return transaction(() => deleteExpired.run(now, limit).changes, NO_READER)
    },
  }
}
