// The factor store: people's second factors (a TOTP secret, recovery codes), shared by every
// instance on the store so that a code is accepted once whichever instance is asked.
// Times are milliseconds since the Unix epoch, always passed in: adapters never read a clock.

/** A person's TOTP factor as the store keeps it. */
export interface TotpFactor {
  username: string
  /** The secret as the TOTP verifier sealed it (encrypted): opaque to the store and the core. */
  secret: string
  /** When its enrolment began. */
  createdAt: number
  /** When one code confirmed it, or null while its enrolment awaits that code. */
  confirmedAt: number | null
  /**
   * Whether it was confirmed during a sign-in (the policy asked the person to enrol there, with
   * their password alone), rather than from a session of theirs; false while unconfirmed.
   */
  confirmedAtSignIn: boolean
  /** The last time step whose code was accepted, or null when none was. */
  lastStep: number | null
}

/**
 * A sign-in whose password was right and whose second factor is awaited: short-lived, taken once.
 * What it grants is decided again when it completes (the user's permissions then).
 */
export interface PasswordPassed {
  username: string
  clientId: string
  /** The scope asked for, as granted when the password was checked. */
  scope: string[]
  /** The address the password came from. */
  address: string
  /** What asked (see TokenRecord.agent). */
  agent: string | null
  /** When the password was checked. */
  createdAt: number
  expiresAt: number
}

export interface FactorStore {
  /**
   * Begins a TOTP enrolment: saves `secret` as the person's unconfirmed factor, replacing an
   * unconfirmed one. False, and nothing changed, when the person has a confirmed factor already.
   */
  startTotp(username: string, secret: string, now: number): Promise<boolean>
  /** The person's TOTP factor, confirmed or not, or null. */
  findTotp(username: string): Promise<TotpFactor | null>
  /**
   * Confirms the unconfirmed factor whose secret is `secret` (the one whose code was checked),
   * recording `step` as its last used step and whether it was confirmed during a sign-in,
   * atomically: false when the factor is confirmed already, was replaced by another enrolment, or
   * is gone.
   */
  confirmTotp(
    username: string,
    secret: string,
    step: number,
    now: number,
    atSignIn: boolean,
  ): Promise<boolean>
  /**
   * Records `step` as the confirmed factor's last used step when it is later than the last one,
   * atomically across processes (a compare-and-set): true when recorded, false when the step was
   * used already (or an earlier one is offered), or the person has no confirmed factor. Of two
   * calls with the same step, at most one is true.
   */
  useTotpStep(username: string, step: number): Promise<boolean>
  /** Replaces the person's recovery codes (their hashes) with these, atomically. */
  replaceRecoveryCodes(username: string, hashes: readonly string[], now: number): Promise<void>
  /**
   * Uses up the person's recovery code with this hash, atomically across processes: true when it
   * was there (and is now gone), false otherwise. Of two calls with the same code, at most one is true.
   */
  useRecoveryCode(username: string, hash: string): Promise<boolean>
  /** How many unused recovery codes the person has. */
  countRecoveryCodes(username: string): Promise<number>
  /** Deletes every factor of the person (TOTP, recovery codes); true when there was any. */
  deleteFactors(username: string): Promise<boolean>
  /** Saves a pending sign-in under `key` (a hash of the ticket its browser holds, never the ticket). */
  savePendingSignIn(key: string, pending: PasswordPassed): Promise<void>
  /**
   * Takes the pending sign-in under `key`: deletes it and returns it, atomically across processes,
   * so that of two calls at most one gets it; null when there is none, or its time ended at or
   * before `now` (then it is deleted too).
   */
  takePendingSignIn(key: string, now: number): Promise<PasswordPassed | null>
  /** Deletes up to `limit` pending sign-ins whose time ended at or before `now`; returns how many. */
  deleteExpiredSignIns(now: number, limit: number): Promise<number>
}
