import type { TokenRecord, TokenStore } from '@flowadmin/core'
import type { SqliteDatabase } from './database.js'

const COLUMNS = `hash, id, kind, name, username, client_id, scope, fingerprint, created_at, expires_at,
  last_used_at, last_address`

/** The statements of the token store; each lookup goes through an index (see the plan test). */
export const TOKEN_SQL = {
  save: `INSERT OR REPLACE INTO tokens (${COLUMNS})
         VALUES (@hash, @id, @kind, @name, @username, @clientId, @scope, @fingerprint, @createdAt,
                 @expiresAt, @lastUsedAt, @lastAddress)`,
  findByHash: `SELECT ${COLUMNS} FROM tokens WHERE hash = ?`,
  findById: `SELECT ${COLUMNS} FROM tokens WHERE id = ?`,
  listAll: `SELECT ${COLUMNS} FROM tokens ORDER BY created_at, id`,
  listByUser: `SELECT ${COLUMNS} FROM tokens WHERE username = ? ORDER BY created_at, id`,
  usernames: 'SELECT DISTINCT username FROM tokens ORDER BY username',
  touch: 'UPDATE tokens SET last_used_at = ?, last_address = ? WHERE id = ?',
  delete: 'DELETE FROM tokens WHERE id = ?',
  deleteByUser: 'DELETE FROM tokens WHERE username = ?',
  deleteExpired: `DELETE FROM tokens
                  WHERE hash IN (SELECT hash FROM tokens WHERE expires_at <= ? LIMIT ?)`,
} as const

interface TokenRow {
  hash: string
  id: string
  kind: TokenRecord['kind']
  name: string | null
  username: string
  client_id: string
  scope: string
  fingerprint: string
  created_at: number | bigint
  expires_at: number | bigint | null
  last_used_at: number | bigint | null
  last_address: string | null
}

const orNull = (value: number | bigint | null) => (value === null ? null : Number(value))

const rowToRecord = (row: TokenRow): TokenRecord => ({
  hash: row.hash,
  id: row.id,
  kind: row.kind,
  name: row.name,
  username: row.username,
  clientId: row.client_id,
  scope: JSON.parse(row.scope) as string[],
  fingerprint: row.fingerprint,
  createdAt: Number(row.created_at),
  expiresAt: orNull(row.expires_at),
  lastUsedAt: orNull(row.last_used_at),
  lastAddress: row.last_address,
})

/** Tokens by hash and by id. Each write is one statement, so one transaction, committed before it resolves. */
export function createTokenStore(db: SqliteDatabase): TokenStore {
  const save = db.prepare(TOKEN_SQL.save)
  const findByHash = db.prepare(TOKEN_SQL.findByHash)
  const findById = db.prepare(TOKEN_SQL.findById)
  const listAll = db.prepare(TOKEN_SQL.listAll)
  const listByUser = db.prepare(TOKEN_SQL.listByUser)
  const usernames = db.prepare(TOKEN_SQL.usernames)
  const touch = db.prepare(TOKEN_SQL.touch)
  const remove = db.prepare(TOKEN_SQL.delete)
  const deleteByUser = db.prepare(TOKEN_SQL.deleteByUser)
  const deleteExpired = db.prepare(TOKEN_SQL.deleteExpired)

  return {
    async save(record) {
      save.run({ ...record, scope: JSON.stringify(record.scope) })
    },
    async findByHash(hash) {
      const row = findByHash.get(hash) as TokenRow | undefined
      return row ? rowToRecord(row) : null
    },
    async findById(id) {
      const row = findById.get(id) as TokenRow | undefined
      return row ? rowToRecord(row) : null
    },
    async list(username) {
      const rows = (username === null ? listAll.all() : listByUser.all(username)) as TokenRow[]
      return rows.map(rowToRecord)
    },
    async usernames() {
      return (usernames.all() as Array<{ username: string }>).map((row) => row.username)
    },
    async touch(id, usedAt, address) {
      touch.run(usedAt, address, id)
    },
    async delete(id) {
      return remove.run(id).changes > 0
    },
    async deleteByUser(username) {
      return deleteByUser.run(username).changes
    },
    async deleteExpired(now, limit) {
      return deleteExpired.run(now, limit).changes
    },
  }
}
