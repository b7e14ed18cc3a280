// The fleet's identities: enrolment tokens (an operator's one-time or N-time tokens, kept by hash
// only) and each enrolled instance's credential (its machine secret's hash only).

/** An enrolment token as kept: never the token, only its SHA-256. */
export interface EnrolmentRecord {
  /** The public name of the record: safe to show, list and cancel by; unrelated to the token. */
  id: string
  /** SHA-256 of the token, lowercase hex. */
  hash: string
  /** The resource server the instances it enrols join. */
  resourceServer: string
  /** How many instances it may enrol in all. */
  uses: number
  /** How many it may still enrol. */
  left: number
  createdAt: number
  expiresAt: number
  /** The instance id it enrols (then `uses` is 1), or null: the instance names itself. */
  instance: string | null
  /** The groups its instances are to join (kept for later; no effect yet). */
  groups: string[]
  /** Who made it: a username, or null from the command line. */
  createdBy: string | null
}

/** An enrolled instance's credential: its id is its own, bound to the secret's hash. */
export interface InstanceCredential {
  instance: string
  resourceServer: string
  /** SHA-256 of its secret, lowercase hex; '' for a record made by a revocation alone. */
  secretHash: string
  /**
   * A rotation's new secret's hash, handed out and not used yet: both are accepted until it is,
   * then the old one stops. null when none waits.
   */
  nextHash: string | null
  enrolledAt: number
  /** Who made the enrolment token it used (null: the command line, or a revocation alone). */
  enrolledBy: string | null
  /** An operator asked it to rotate its secret, and it has not since. */
  rotateAsked: boolean
  /** When its secret last changed by a rotation; null when never. */
  rotatedAt: number | null
  /** When it was revoked; null while it is not. */
  revokedAt: number | null
}

/**
 * How an enrolment went: `enrolled`, or nothing changed because the token has no use left, expired
 * or is gone (`spent`), the instance holds a credential not revoked (`conflict`), or the resource
 * server holds as many credentials not revoked as it may (`full`).
 */
export type EnrolOutcome = 'enrolled' | 'spent' | 'conflict' | 'full'

export interface EnrolmentStore {
  /** Saves a new enrolment token's record. */
  saveEnrolment(record: EnrolmentRecord): Promise<void>
  /** The record of this token hash, or null. Does not check expiry or uses: the core does. */
  findEnrolment(hash: string): Promise<EnrolmentRecord | null>
  /** Every enrolment record, oldest first (by createdAt, then id). */
  enrolments(): Promise<EnrolmentRecord[]>
  /** Deletes the record with this id (a cancellation); true when it was there. */
  deleteEnrolment(id: string): Promise<boolean>
  /** Deletes up to `limit` records that expired at or before `now`, or have no use left; returns how many. */
  deleteSpentEnrolments(now: number, limit: number): Promise<number>
  /**
   * Atomically: spends one use of the token with hash `hash` (it has a use left and expires after
   * `now`) and saves `credential` (replacing a revoked credential of that instance), unless the
   * instance holds a credential not revoked (`conflict`) or `credential.resourceServer` holds
   * `max` credentials not revoked (`full`). Nothing changes unless `enrolled`; of racing calls
   * for a token's last use, exactly one is `enrolled`.
   */
  enrol(hash: string, credential: InstanceCredential, max: number, now: number): Promise<EnrolOutcome>
  /** The instance's credential (revoked or not), or null. */
  credential(instance: string): Promise<InstanceCredential | null>
  /** Every credential, sorted by instance. */
  credentials(): Promise<InstanceCredential[]>
  /** Sets the `nextHash` of a credential not revoked (replacing one waiting); false otherwise. */
  setNext(instance: string, nextHash: string): Promise<boolean>
  /**
   * When `nextHash` is the credential's waiting one: it becomes its secret (the old one stops),
   * `rotateAsked` false and `rotatedAt` `now`. True when it did.
   */
  promote(instance: string, nextHash: string, now: number): Promise<boolean>
  /** Sets `rotateAsked` of a credential not revoked; false otherwise. */
  askRotate(instance: string): Promise<boolean>
  /**
   * Revokes the instance's credential at `now` (its waiting secret too); an instance without one
   * gets a revoked record of `resourceServer`. True when it was not revoked before.
   */
  revoke(instance: string, resourceServer: string, now: number): Promise<boolean>
}
