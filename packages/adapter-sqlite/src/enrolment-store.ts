import type { EnrolmentStore } from '@flowadmin/core'
import {
  CREDENTIAL_COLUMNS,
  type CredentialRow,
  credentialFromRow,
  credentialValues,
  ENROLMENT_COLUMNS,
  type EnrolmentRow,
  enrolmentFromRow,
} from '@flowadmin/store-support'
import type { SqliteDatabase } from './driver.js'
import { createReader } from './reader.js'
import { prepareAll } from './statements.js'
import { createTransaction } from './transaction.js'

/** The statements of the enrolment store. */
export const ENROLMENT_SQL = {
  save: `INSERT OR REPLACE INTO fleet_enrolments (${ENROLMENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  find: `SELECT ${ENROLMENT_COLUMNS} FROM fleet_enrolments WHERE hash = ?`,
  list: `SELECT ${ENROLMENT_COLUMNS} FROM fleet_enrolments ORDER BY created_at, id`,
  delete: 'DELETE FROM fleet_enrolments WHERE id = ?',
  deleteSpent: `DELETE FROM fleet_enrolments WHERE id IN (
                  SELECT id FROM fleet_enrolments WHERE expires_at <= ? OR uses_left <= 0 LIMIT ?)`,
  // One use, when one is left and the token is live: the statement is the check.
  spend:
    'UPDATE fleet_enrolments SET uses_left = uses_left - 1 WHERE hash = ? AND uses_left > 0 AND expires_at > ?',
  credential: `SELECT ${CREDENTIAL_COLUMNS} FROM fleet_credentials WHERE instance = ?`,
  credentials: `SELECT ${CREDENTIAL_COLUMNS} FROM fleet_credentials ORDER BY instance`,
  live: 'SELECT count(*) AS n FROM fleet_credentials WHERE resource_server = ? AND revoked_at IS NULL',
  put: `INSERT OR REPLACE INTO fleet_credentials (${CREDENTIAL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  setNext: 'UPDATE fleet_credentials SET next_hash = ? WHERE instance = ? AND revoked_at IS NULL',
  promote: `UPDATE fleet_credentials SET secret_hash = next_hash, next_hash = NULL, rotate_asked = 0, rotated_at = ?
            WHERE instance = ? AND next_hash = ? AND revoked_at IS NULL`,
  askRotate: 'UPDATE fleet_credentials SET rotate_asked = 1 WHERE instance = ? AND revoked_at IS NULL',
  revoke: `UPDATE fleet_credentials SET revoked_at = ?, next_hash = NULL, rotate_asked = 0
           WHERE instance = ? AND revoked_at IS NULL`,
  revokeUnknown: `INSERT INTO fleet_credentials (${CREDENTIAL_COLUMNS}) VALUES (?, ?, '', NULL, ?, NULL, 0, NULL, ?)
                  ON CONFLICT (instance) DO NOTHING`,
} as const

const ENROLMENTS = 'fleet-enrolments'
const CREDENTIALS = 'fleet-credentials'

/** Enrolment tokens and instance credentials; an enrolment is one transaction. */
export function createEnrolmentStore(db: SqliteDatabase): EnrolmentStore {
  const transaction = createTransaction(db)
  const reader = createReader(db)
  const sql = prepareAll(db, ENROLMENT_SQL)
  const credentialsChanged = (touched: string) => touched === CREDENTIALS
  const enrolmentsChanged = (touched: string) => touched === ENROLMENTS
  const credentialOf = (instance: string) => {
    const row = sql.credential.get(instance) as CredentialRow | undefined
    return row === undefined ? null : credentialFromRow(row)
  }
  return {
    async saveEnrolment(record) {
      await transaction(() => {
        sql.save.run(
          record.id,
          record.hash,
          record.resourceServer,
          record.uses,
          record.left,
          record.createdAt,
          record.expiresAt,
          record.instance,
          JSON.stringify(record.groups),
          record.createdBy,
        )
      }, [ENROLMENTS])
    },
    async findEnrolment(hash) {
      return reader(() => {
        const row = sql.find.get(hash) as EnrolmentRow | undefined
        return row === undefined ? null : enrolmentFromRow(row)
      }, enrolmentsChanged)
    },
    async enrolments() {
      return reader(() => (sql.list.all() as EnrolmentRow[]).map(enrolmentFromRow), enrolmentsChanged)
    },
    async deleteEnrolment(id) {
      return transaction(() => sql.delete.run(id).changes > 0, [ENROLMENTS])
    },
    async deleteSpentEnrolments(now, limit) {
      return transaction(() => sql.deleteSpent.run(now, limit).changes, [ENROLMENTS])
    },
    async enrol(hash, credential, max, now) {
      return transaction(() => {
        const held = credentialOf(credential.instance)
        if (held !== null && held.revokedAt === null) {
          // Nothing spent unless the token could have enrolled: a spent one says so first.
          return spendable(hash, now) ? 'conflict' : 'spent'
        }
        const live = Number((sql.live.get(credential.resourceServer) as { n: number | bigint }).n)
        if (live >= max) return spendable(hash, now) ? 'full' : 'spent'
        if (sql.spend.run(hash, now).changes === 0) return 'spent'
        sql.put.run(...credentialValues(credential))
        return 'enrolled'
      }, [ENROLMENTS, CREDENTIALS])
    },
    async credential(instance) {
      return reader(() => credentialOf(instance), credentialsChanged)
    },
    async credentials() {
      return reader(
        () => (sql.credentials.all() as CredentialRow[]).map(credentialFromRow),
        credentialsChanged,
      )
    },
    async setNext(instance, nextHash) {
      return transaction(() => sql.setNext.run(nextHash, instance).changes > 0, [CREDENTIALS])
    },
    async promote(instance, nextHash, now) {
      return transaction(() => sql.promote.run(now, instance, nextHash).changes > 0, [CREDENTIALS])
    },
    async askRotate(instance) {
      return transaction(() => sql.askRotate.run(instance).changes > 0, [CREDENTIALS])
    },
    async revoke(instance, resourceServer, now) {
      return transaction(() => {
        if (sql.revoke.run(now, instance).changes > 0) return true
        return sql.revokeUnknown.run(instance, resourceServer, now, now).changes > 0
      }, [CREDENTIALS])
    },
  }

  /** Whether the token with this hash has a use left and is live at `now` (inside a transaction). */
  function spendable(hash: string, now: number): boolean {
    const row = sql.find.get(hash) as EnrolmentRow | undefined
    return row !== undefined && Number(row.uses_left) > 0 && Number(row.expires_at) > now
  }
}
