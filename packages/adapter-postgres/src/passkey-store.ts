import type { PasskeyStore, WaitingSave } from '@flowadmin/core'
import type { ChallengeRow, PasskeyRow, WaitingCount } from '@flowadmin/store-support'
import {
  PASSKEY_COLUMNS as COLUMNS,
  liveChallenge,
  passkeyFromRow,
  waitingVerdict,
} from '@flowadmin/store-support'
import type { Database } from './database.js'
import { deleteEnded } from './statements.js'
import { fromStored, storedKey } from './stored-text.js'

/**
 * The first half of the advisory locks of passkey sign-in addresses ('pkey' in ASCII); the second
 * is the address's hash.
 */
export const PASSKEY_SIGN_IN_LOCK_CLASS = 0x706b_6579

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
  // One address's sign-in challenges are saved in turn (an advisory lock until the transaction
  // ends), so its count and its save are one step across instances.
  lockAddress: `SELECT pg_advisory_xact_lock(${PASSKEY_SIGN_IN_LOCK_CLASS}, hashtext($1))`,
  countSignIns: `SELECT count(*) FILTER (WHERE address = $1) AS mine, count(*) AS total
                 FROM flowadmin_passkey_challenges WHERE purpose = 'sign_in' AND expires_at > $2`,
  saveChallenge: `INSERT INTO flowadmin_passkey_challenges (key, purpose, username, address, expires_at)
                  VALUES ($1, $2, $3, $4, $5)
                  ON CONFLICT (key) DO UPDATE SET purpose = excluded.purpose, username = excluded.username,
                    address = excluded.address, expires_at = excluded.expires_at`,
  // Taken once: of two instances deleting the row, one gets it back.
  takeChallenge: `DELETE FROM flowadmin_passkey_challenges WHERE key = $1
                  RETURNING purpose, username, address, expires_at`,
  deleteExpiredChallenges: deleteEnded('flowadmin_passkey_challenges'),
} as const

/** A passkey's names were written by storedKey. */
const credentialOf = (row: PasskeyRow) => passkeyFromRow(row, fromStored)

/** Passkeys and the challenges of their ceremonies, shared by every instance on the database. */
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
    async saveChallenge(key, { purpose, username, address, expiresAt }, bounds, now) {
      const stored = address === null ? null : storedKey(address)
      const params = [
        storedKey(key),
        purpose,
        username === null ? null : storedKey(username),
        stored,
        expiresAt,
      ]
      if (purpose !== 'sign_in') {
        await db.query(PASSKEY_SQL.saveChallenge, params)
        return 'saved'
      }
      // The total may be passed by as many saves as other addresses make at the same moment.
      return db.transaction(async (client): Promise<WaitingSave> => {
        await client.query(PASSKEY_SQL.lockAddress, [stored])
        const { rows } = await client.query<WaitingCount>(PASSKEY_SQL.countSignIns, [stored, now])
        const allowed = waitingVerdict(rows[0] ?? { mine: 0, total: 0 }, bounds)
        if (allowed === 'saved') await client.query(PASSKEY_SQL.saveChallenge, params)
        return allowed
      })
    },
    async takeChallenge(key, now) {
      const { rows } = await db.query<ChallengeRow>(PASSKEY_SQL.takeChallenge, [storedKey(key)])
      return liveChallenge(rows[0], now, fromStored)
    },
    async deleteExpiredChallenges(now, limit) {
      return (await db.query(PASSKEY_SQL.deleteExpiredChallenges, [now, limit])).rowCount ?? 0
    },
  }
}
