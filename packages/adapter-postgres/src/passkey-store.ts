import type { PasskeyStore } from '@flowadmin/core'
import type { PasskeyRow } from '@flowadmin/store-support'
import { PASSKEY_COLUMNS as COLUMNS, passkeyFromRow } from '@flowadmin/store-support'
import type { Database } from './database.js'
import { fromStored, storedKey } from './stored-text.js'

/** The statements of the passkey store. */
export const PASSKEY_SQL = {
  save: `INSERT INTO flowadmin_passkeys (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (id) DO UPDATE SET username = excluded.username, name = excluded.name,
           public_key = excluded.public_key, counter = excluded.counter, transports = excluded.transports,
           backed_up = excluded.backed_up, created_at = excluded.created_at, last_used_at = excluded.last_used_at`,
  list: `SELECT ${COLUMNS} FROM flowadmin_passkeys WHERE username = $1 ORDER BY created_at, id`,
  find: `SELECT ${COLUMNS} FROM flowadmin_passkeys WHERE id = $1`,
  // The compare-and-set: one statement. Of two instances updating the row at once, the second
  // waits for the first to commit, then checks its condition again on the row the first left.
  updateUse: `UPDATE flowadmin_passkeys SET counter = $2, backed_up = $3, last_used_at = $4
              WHERE id = $1 AND ((counter = 0 AND $2 = 0) OR counter < $2)`,
  delete: 'DELETE FROM flowadmin_passkeys WHERE username = $1 AND id = $2',
  deleteAll: 'DELETE FROM flowadmin_passkeys WHERE username = $1',
} as const

/** A passkey's names were written by storedKey. */
const credentialOf = (row: PasskeyRow) => passkeyFromRow(row, fromStored)

/** Passkeys, shared by every instance on the database. */
export function createPasskeyStore(db: Database): PasskeyStore {
  return {
    async save(credential) {
      await db.query(PASSKEY_SQL.save, [
        storedKey(credential.id),
        storedKey(credential.username),
        storedKey(credential.name),
        credential.publicKey,
        credential.counter,
        credential.transports.map(storedKey),
        credential.backedUp,
        credential.createdAt,
        credential.lastUsedAt,
      ])
    },
    async list(username) {
      const { rows } = await db.query<PasskeyRow>(PASSKEY_SQL.list, [storedKey(username)])
      return rows.map(credentialOf)
    },
    async find(id) {
      const { rows } = await db.query<PasskeyRow>(PASSKEY_SQL.find, [storedKey(id)])
      const [row] = rows
      return row === undefined ? null : credentialOf(row)
    },
    async updateUse(id, counter, backedUp, now) {
      const { rowCount } = await db.query(PASSKEY_SQL.updateUse, [storedKey(id), counter, backedUp, now])
      return (rowCount ?? 0) > 0
    },
    async delete(username, id) {
      const { rowCount } = await db.query(PASSKEY_SQL.delete, [storedKey(username), storedKey(id)])
      return (rowCount ?? 0) > 0
    },
    async deleteAll(username) {
      return (await db.query(PASSKEY_SQL.deleteAll, [storedKey(username)])).rowCount ?? 0
    },
  }
}
