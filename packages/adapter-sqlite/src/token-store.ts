import type { TokenKind, TokenRecord, TokenStore } from '@flowadmin/core'
import { TOKEN_COLUMNS as COLUMNS, type TokenRow, tokenFromRow } from '@flowadmin/store-support'
import type { SqliteDatabase } from './driver.js'
import { createReader } from './reader.js'
import { deleteEnded, prepareAll } from './statements.js'
import { createTransaction } from './transaction.js'

/** The statements of the token store; each lookup goes through an index (see the plan test). */
export const TOKEN_SQL = {
  save: `INSERT OR REPLACE INTO tokens (${COLUMNS})
         VALUES (@hash, @id, @kind, @name, @username, @clientId, @scope, @fingerprint, @createdAt,
                 @expiresAt, @lastUsedAt, @lastAddress, @agent, @audience, @signIn)`,
  findByHash: `SELECT ${COLUMNS} FROM tokens WHERE hash = ?`,
  findById: `SELECT ${COLUMNS} FROM tokens WHERE id = ?`,
  listAll: `SELECT ${COLUMNS} FROM tokens ORDER BY created_at, id`,
  listByUser: `SELECT ${COLUMNS} FROM tokens WHERE username = ? ORDER BY created_at, id`,
  // One index seek a user (the next name after the last), not a scan of every token's entry: the
  // start asks this, and with many sessions a scan would read, and cache, the whole index.
  usernames: `WITH RECURSIVE users (username) AS (
                SELECT min(username) FROM tokens
                UNION ALL
                SELECT (SELECT min(username) FROM tokens WHERE username > users.username)
                FROM users WHERE users.username IS NOT NULL
              )
              SELECT username FROM users WHERE username IS NOT NULL`,
  touch: 'UPDATE tokens SET last_used_at = ?, last_address = ? WHERE id = ?',
  delete: 'DELETE FROM tokens WHERE id = ?',
  deleteByUser: 'DELETE FROM tokens WHERE username = ?',
  deleteExpired: deleteEnded('tokens', { key: 'hash' }),
  countLive: `SELECT kind, COUNT(*) AS live FROM tokens
              WHERE expires_at IS NULL OR expires_at > ? GROUP BY kind`,
} as const

/** What token changes touch, and what token reads depend on (see transaction.ts). */
const ANY_TOKEN = 'tokens'
const tokenKey = (id: string) => `token:${id}`

/** Records the lookup by hash found, kept while no other connection has committed a change. */
interface Found {
  records: Map<string, TokenRecord>
  /** `PRAGMA data_version` when they were read: another connection's commit changes it. */
  version: unknown
}
/** Per connection, shared by every token store over it, so a write through one clears it for all. */
const found = new WeakMap<SqliteDatabase, Found>()
/** At most this many records are kept; the next one past it starts afresh. */
const MAX_FOUND = 10_000
/** A record that shares nothing with `record`. */
const copyOf = (record: TokenRecord): TokenRecord => ({ ...record, scope: [...record.scope] })

/**
 * Tokens by hash and by id. Every write goes through the group commit and resolves once durable.
 * A lookup by hash (each authenticated request's) answers at once from what is committed, even
 * while changes wait for their commit: a pending issue is of a token nobody has been given yet.
 * Lookups by id and listings answer once the changes they could see are committed.
 *
 * A lookup by hash keeps the record it found, and the next lookup of that hash answers from it,
 * as long as nothing could have changed it: every token write through this connection forgets
 * them all in its transaction, and a commit by any other connection (the command line, another
 * process on the file) changes `PRAGMA data_version`, which each lookup reads first. The rights a
 * record grants are still decided at each request by the core, against the users as they are.
 */
export function createTokenStore(db: SqliteDatabase): TokenStore {
  const transaction = createTransaction(db)
  const reader = createReader(db)
  const cache = found.get(db) ?? { records: new Map(), version: null }
  found.set(db, cache)
  const dataVersion = db.prepare('PRAGMA data_version')
  /** Runs a token write, forgetting every record found: it may change or delete any of them. */
  const write = <T>(work: () => T, touches: readonly string[]) =>
    transaction(() => {
      cache.records.clear()
      return work()
    }, touches)
  // A change to one token touches it and the listings; deleting by user or expiry touches them all.
  const anyToken = (touched: string) => touched === ANY_TOKEN
  const {
    save,
    findByHash,
    findById,
    listAll,
    listByUser,
    usernames,
    touch,
    delete: remove,
    deleteByUser,
    deleteExpired,
    countLive,
  } = prepareAll(db, TOKEN_SQL)

  return {
    async save(record) {
      await write(
        () => save.run({ ...record, scope: JSON.stringify(record.scope) }),
        [tokenKey(record.id), ANY_TOKEN],
      )
    },
    async findByHash(hash) {
      const version = (dataVersion.get() as { data_version: unknown }).data_version
      if (version !== cache.version) {
        cache.records.clear()
        cache.version = version
      }
      // A copy each time: what a caller does with its record changes nothing kept.
      const known = cache.records.get(hash)
      if (known !== undefined) return copyOf(known)
      const row = findByHash.get(hash) as TokenRow | undefined
      if (row === undefined) return null
      const record = tokenFromRow(row)
      if (cache.records.size >= MAX_FOUND) cache.records.clear()
      cache.records.set(hash, copyOf(record))
      return record
    },
    async findById(id) {
      return reader(
        () => {
          const row = findById.get(id) as TokenRow | undefined
          return row ? tokenFromRow(row) : null
        },
        (touched) => touched === tokenKey(id) || touched === ANY_TOKEN,
      )
    },
    async list(username) {
      return reader(() => {
        const rows = (username === null ? listAll.all() : listByUser.all(username)) as TokenRow[]
        return rows.map((row) => tokenFromRow(row))
      }, anyToken)
    },
    async usernames() {
      return reader(
        () => (usernames.all() as Array<{ username: string }>).map((row) => row.username),
        anyToken,
      )
    },
    async touch(id, usedAt, address) {
      await write(() => touch.run(usedAt, address, id), [tokenKey(id), ANY_TOKEN])
    },
    async delete(id) {
      return write(() => remove.run(id).changes > 0, [tokenKey(id), ANY_TOKEN])
    },
    async deleteByUser(username) {
      return write(() => deleteByUser.run(username).changes, [ANY_TOKEN])
    },
    async deleteExpired(now, limit) {
      return write(() => deleteExpired.run(now, limit).changes, [ANY_TOKEN])
    },
    async countLive(now) {
      const live = { session: 0, api: 0 }
      for (const row of countLive.all(now) as Array<{ kind: TokenKind; live: number | bigint }>) {
        live[row.kind] = Number(row.live)
      }
      return live
    },
  }
}
