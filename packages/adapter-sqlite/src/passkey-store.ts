import type { PasskeyStore } from '@flowadmin/core'
import { PASSKEY_COLUMNS as COLUMNS, type PasskeyRow, passkeyFromRow } from '@flowadmin/store-support'
import type { SqliteDatabase } from './driver.js'
import { createReader } from './reader.js'
import { prepareAll } from './statements.js'
import { createTransaction } from './transaction.js'

/** The statements of the passkey store. */
export const PASSKEY_SQL = {
  save: `INSERT OR REPLACE INTO passkeys (${COLUMNS})
         VALUES (@id, @username, @name, @publicKey, @counter, @transports, @backedUp, @createdAt, @lastUsedAt)`,
  list: `SELECT ${COLUMNS} FROM passkeys WHERE username = ? ORDER BY created_at, id`,
  find: `SELECT ${COLUMNS} FROM passkeys WHERE id = ?`,
  // The compare-and-set: one statement, so a counter is recorded once.
  updateUse: `UPDATE passkeys SET counter = @counter, backed_up = @backedUp, last_used_at = @now
              WHERE id = @id AND ((counter = 0 AND @counter = 0) OR counter < @counter)`,
  delete: 'DELETE FROM passkeys WHERE username = ? AND id = ?',
  deleteAll: 'DELETE FROM passkeys WHERE username = ?',
} as const

/** Passkeys, each change one change of the group commit. */
export function createPasskeyStore(db: SqliteDatabase): PasskeyStore {
  const transaction = createTransaction(db)
  const read = createReader(db)
  const sql = prepareAll(db, PASSKEY_SQL)
  return {
    save(credential) {
      const row = {
        ...credential,
        transports: JSON.stringify(credential.transports),
        backedUp: credential.backedUp ? 1 : 0,
      }
      return transaction(() => {
        sql.save.run(row)
      })
    },
    list(username) {
      return read(() =>
        (sql.list.all(username) as PasskeyRow[]).map((row) => ({ ...passkeyFromRow(row), username })),
      )
    },
    find(id) {
      return read(() => {
        const row = sql.find.get(id) as PasskeyRow | undefined
        return row === undefined ? null : { ...passkeyFromRow(row), id }
      })
    },
    updateUse(id, counter, backedUp, now) {
      return transaction(
        () => sql.updateUse.run({ id, counter, backedUp: backedUp ? 1 : 0, now }).changes > 0,
      )
    },
    delete(username, id) {
      return transaction(() => sql.delete.run(username, id).changes > 0)
    },
    deleteAll(username) {
      return transaction(() => Number(sql.deleteAll.run(username).changes))
    },
  }
}
