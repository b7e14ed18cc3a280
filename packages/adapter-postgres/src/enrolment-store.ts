import type { EnrolmentStore, InstanceCredential } from '@flowadmin/core'
import {
  CREDENTIAL_COLUMNS,
  type CredentialRow,
  credentialFromRow,
  credentialValues,
  ENROLMENT_COLUMNS,
  type EnrolmentRow,
  enrolmentFromRow,
} from '@flowadmin/store-support'
import type { Database } from './database.js'
import { FLEET_CHANNEL } from './fleet-state.js'
import { createHeardCache, type HeardCache } from './heard-cache.js'

const ENROLMENTS = 'flowadmin_fleet_enrolments'
const CREDENTIALS = 'flowadmin_fleet_credentials'

/**
 * A change of an instance's credential, announced on FLEET_CHANNEL when its transaction commits
 * (`credential:<instance>`), so that every flowadmin sharing the database forgets what it kept.
 */
const announced = (change: string) =>
  `WITH changed AS (${change} RETURNING instance) SELECT pg_notify('${FLEET_CHANNEL}', 'credential:' || instance) FROM changed`

/** The statements of the enrolment store. */
export const ENROLMENT_SQL = {
  save: `INSERT INTO ${ENROLMENTS} (${ENROLMENT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10)`,
  find: `SELECT ${ENROLMENT_COLUMNS} FROM ${ENROLMENTS} WHERE hash = $1`,
  list: `SELECT ${ENROLMENT_COLUMNS} FROM ${ENROLMENTS} ORDER BY created_at, id`,
  delete: `DELETE FROM ${ENROLMENTS} WHERE id = $1`,
  deleteSpent: `DELETE FROM ${ENROLMENTS} WHERE id IN (
                  SELECT id FROM ${ENROLMENTS} WHERE expires_at <= $1 OR uses_left <= 0 LIMIT $2)`,
  // Enrolments of one resource server, one at a time: its count of instances holds.
  lock: `SELECT pg_advisory_xact_lock(hashtext('flowadmin_fleet_enrol:' || $1))`,
  spendable: `SELECT 1 FROM ${ENROLMENTS} WHERE hash = $1 AND uses_left > 0 AND expires_at > $2`,
  spend: `UPDATE ${ENROLMENTS} SET uses_left = uses_left - 1 WHERE hash = $1 AND uses_left > 0 AND expires_at > $2`,
  live: `SELECT count(*) AS n FROM ${CREDENTIALS} WHERE resource_server = $1 AND revoked_at IS NULL`,
  // Takes the id when it is free or revoked; a live credential of it stays.
  put: `INSERT INTO ${CREDENTIALS} (${CREDENTIAL_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7 = 1, $8, $9)
        ON CONFLICT (instance) DO UPDATE SET resource_server = excluded.resource_server,
          secret_hash = excluded.secret_hash, next_hash = excluded.next_hash, enrolled_at = excluded.enrolled_at,
          enrolled_by = excluded.enrolled_by, rotate_asked = excluded.rotate_asked,
          rotated_at = excluded.rotated_at, revoked_at = excluded.revoked_at
        WHERE ${CREDENTIALS}.revoked_at IS NOT NULL`,
  credential: `SELECT ${CREDENTIAL_COLUMNS} FROM ${CREDENTIALS} WHERE instance = $1`,
  credentials: `SELECT ${CREDENTIAL_COLUMNS} FROM ${CREDENTIALS} ORDER BY instance`,
  announce: `SELECT pg_notify('${FLEET_CHANNEL}', 'credential:' || $1)`,
  setNext: announced(`UPDATE ${CREDENTIALS} SET next_hash = $2 WHERE instance = $1 AND revoked_at IS NULL`),
  promote:
    announced(`UPDATE ${CREDENTIALS} SET secret_hash = next_hash, next_hash = NULL, rotate_asked = false,
                        rotated_at = $3
                      WHERE instance = $1 AND next_hash = $2 AND revoked_at IS NULL`),
  askRotate: announced(
    `UPDATE ${CREDENTIALS} SET rotate_asked = true WHERE instance = $1 AND revoked_at IS NULL`,
  ),
  revoke: announced(`UPDATE ${CREDENTIALS} SET revoked_at = $2, next_hash = NULL, rotate_asked = false
                     WHERE instance = $1 AND revoked_at IS NULL`),
  revokeUnknown: announced(`INSERT INTO ${CREDENTIALS} (${CREDENTIAL_COLUMNS})
                            VALUES ($1, $2, '', NULL, $3, NULL, false, NULL, $3)
                            ON CONFLICT (instance) DO NOTHING`),
} as const

/** What the store keeps of the credentials it read: a record, or that the instance has none. */
export type CredentialCache = HeardCache<InstanceCredential | null>

/** A credential cache that keeps nothing until its channel is heard (see watchFleet). */
export const createCredentialCache = (): CredentialCache =>
  createHeardCache<InstanceCredential | null>({ copy: (record) => (record === null ? null : { ...record }) })

/**
 * Enrolment tokens and instance credentials; an enrolment is one transaction. Each change of a
 * credential is announced (`credential:<instance>`), and `cache` answers lookups of credentials
 * from memory while the fleet's channel is heard.
 */
export function createEnrolmentStore(
  db: Database,
  cache: CredentialCache = createCredentialCache(),
): EnrolmentStore {
  const changed = (result: { rowCount: number | null }) => (result.rowCount ?? 0) > 0
  /** Runs a change of `instance`'s credential; what was kept of it is forgotten once it is done. */
  const change = async <T>(instance: string, run: () => Promise<T>): Promise<T> => {
    try {
      return await run()
    } finally {
      cache.forget(instance)
    }
  }
  return {
    async saveEnrolment(record) {
      await db.query(ENROLMENT_SQL.save, [
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
      ])
    },
    async findEnrolment(hash) {
      const row = (await db.query<EnrolmentRow>(ENROLMENT_SQL.find, [hash])).rows[0]
      return row === undefined ? null : enrolmentFromRow(row)
    },
    async enrolments() {
      return (await db.query<EnrolmentRow>(ENROLMENT_SQL.list)).rows.map(enrolmentFromRow)
    },
    async deleteEnrolment(id) {
      return changed(await db.query(ENROLMENT_SQL.delete, [id]))
    },
    async deleteSpentEnrolments(now, limit) {
      return (await db.query(ENROLMENT_SQL.deleteSpent, [now, limit])).rowCount ?? 0
    },
    async enrol(hash, credential, max, now) {
      return db
        .transaction(async (client) => {
          await client.query(ENROLMENT_SQL.lock, [credential.resourceServer])
          if ((await client.query(ENROLMENT_SQL.spendable, [hash, now])).rows.length === 0) return 'spent'
          const held = (await client.query<CredentialRow>(ENROLMENT_SQL.credential, [credential.instance]))
            .rows[0]
          if (held !== undefined && held.revoked_at === null) return 'conflict'
          const live = (await client.query<{ n: string }>(ENROLMENT_SQL.live, [credential.resourceServer]))
            .rows[0]
          if (Number(live?.n ?? 0) >= max) return 'full'
          // The row lock of the update decides between racing enrolments of one token's last use.
          if (!changed(await client.query(ENROLMENT_SQL.spend, [hash, now]))) return 'spent'
          if (!changed(await client.query(ENROLMENT_SQL.put, [...credentialValues(credential)]))) {
            // Another resource server's enrolment took the id meanwhile: the use is not spent.
            throw new ConflictRollback()
          }
          await client.query(ENROLMENT_SQL.announce, [credential.instance])
          return 'enrolled'
        })
        .catch((error: unknown) => {
          if (error instanceof ConflictRollback) return 'conflict' as const
          throw error
        })
        .finally(() => cache.forget(credential.instance))
    },
    async credential(instance) {
      const kept = cache.get(instance)
      if (kept !== undefined) return kept.value
      const generation = cache.generation
      const row = (await db.query<CredentialRow>(ENROLMENT_SQL.credential, [instance])).rows[0]
      const record = row === undefined ? null : credentialFromRow(row)
      cache.keep(instance, record, generation)
      return record
    },
    async credentials() {
      return (await db.query<CredentialRow>(ENROLMENT_SQL.credentials)).rows.map(credentialFromRow)
    },
    setNext: (instance, nextHash) =>
      change(instance, async () => changed(await db.query(ENROLMENT_SQL.setNext, [instance, nextHash]))),
    promote: (instance, nextHash, now) =>
      change(instance, async () => changed(await db.query(ENROLMENT_SQL.promote, [instance, nextHash, now]))),
    askRotate: (instance) =>
      change(instance, async () => changed(await db.query(ENROLMENT_SQL.askRotate, [instance]))),
    revoke: (instance, resourceServer, now) =>
      change(instance, async () => {
        if (changed(await db.query(ENROLMENT_SQL.revoke, [instance, now]))) return true
        return changed(await db.query(ENROLMENT_SQL.revokeUnknown, [instance, resourceServer, now]))
      }),
  }
}

/** Rolls an enrolment's transaction back when its id was taken meanwhile. */
class ConflictRollback extends Error {}
