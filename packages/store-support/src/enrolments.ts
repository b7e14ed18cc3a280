// Rows of the fleet's enrolment tokens and instance credentials, as SQLite and PostgreSQL give
// them (numbers may come as bigint or text), and their records.
import type { EnrolmentRecord, InstanceCredential } from '@flowadmin/core'

type Whole = number | bigint | string

export const ENROLMENT_COLUMNS =
  'id, hash, resource_server, uses, uses_left, created_at, expires_at, instance, groups, created_by'

export interface EnrolmentRow {
  id: string
  hash: string
  resource_server: string
  uses: Whole
  uses_left: Whole
  created_at: Whole
  expires_at: Whole
  instance: string | null
  /** A JSON array of names (text in SQLite, jsonb in PostgreSQL). */
  groups: string | string[]
  created_by: string | null
}

export const enrolmentFromRow = (row: EnrolmentRow): EnrolmentRecord => ({
  id: row.id,
  hash: row.hash,
  resourceServer: row.resource_server,
  uses: Number(row.uses),
  left: Number(row.uses_left),
  createdAt: Number(row.created_at),
  expiresAt: Number(row.expires_at),
  instance: row.instance,
  groups: typeof row.groups === 'string' ? (JSON.parse(row.groups) as string[]) : [...row.groups],
  createdBy: row.created_by,
})

export const CREDENTIAL_COLUMNS =
  'instance, resource_server, secret_hash, next_hash, enrolled_at, enrolled_by, rotate_asked, rotated_at, revoked_at'

export interface CredentialRow {
  instance: string
  resource_server: string
  secret_hash: string
  next_hash: string | null
  enrolled_at: Whole
  enrolled_by: string | null
  rotate_asked: Whole | boolean
  rotated_at: Whole | null
  revoked_at: Whole | null
}

const orNull = (value: Whole | null) => (value === null ? null : Number(value))

export const credentialFromRow = (row: CredentialRow): InstanceCredential => ({
  instance: row.instance,
  resourceServer: row.resource_server,
  secretHash: row.secret_hash,
  nextHash: row.next_hash,
  enrolledAt: Number(row.enrolled_at),
  enrolledBy: row.enrolled_by,
  rotateAsked: row.rotate_asked === true || Number(row.rotate_asked) === 1,
  rotatedAt: orNull(row.rotated_at),
  revokedAt: orNull(row.revoked_at),
})

/** A credential's values in CREDENTIAL_COLUMNS order (`rotate_asked` as 0 or 1). */
export const credentialValues = (credential: InstanceCredential) =>
  [
    credential.instance,
    credential.resourceServer,
    credential.secretHash,
    credential.nextHash,
    credential.enrolledAt,
    credential.enrolledBy,
    credential.rotateAsked ? 1 : 0,
    credential.rotatedAt,
    credential.revokedAt,
  ] as const
