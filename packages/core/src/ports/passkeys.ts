// Passkeys (WebAuthn): people's credentials, shared by every instance on the store so that a
// counter only grows, whichever instance is asked; and the verifier of the ceremonies (the
// server's, with @simplewebauthn/server). The challenges of the ceremonies are carried by the
// browser, not stored (see carried-challenges). Times are milliseconds since the Unix epoch,
// always passed in: adapters never read a clock.

/** A person's passkey as the store keeps it. Never a private key: the authenticator keeps that. */
export interface PasskeyCredential {
  /** The credential id (base64url), as the authenticator made it; unique across people. */
  id: string
  username: string
  /** The name the person gave it (1–64 characters). */
  name: string
  /** The credential's public key (COSE, base64url). */
  publicKey: string
  /** The authenticator's signature counter at its last use; 0 for authenticators that keep none. */
  counter: number
  /** How the browser may reach the authenticator (`internal`, `usb`, `hybrid`, …), as it said. */
  transports: string[]
  /** Whether the credential is backed up (synced) by its provider, as its last use said. */
  backedUp: boolean
  createdAt: number
  /** Its last sign-in, or null when it signed in never. */
  lastUsedAt: number | null
}

export interface PasskeyStore {
  /** Saves a new passkey; a credential with the same id (of anyone) is replaced. */
  save(credential: PasskeyCredential): Promise<void>
  /** The person's passkeys, oldest first. */
  list(username: string): Promise<PasskeyCredential[]>
  /** The passkey with this credential id, or null. */
  find(id: string): Promise<PasskeyCredential | null>
  /**
   * Records a use of the passkey: its counter becomes `counter`, its last use `now`, its backup
   * state `backedUp`, as one compare-and-set, atomic across processes: true when recorded; false
   * (nothing changed) when there is no such passkey, or the stored counter is not lower than
   * `counter` while either is not 0 (an authenticator whose counter did not grow: a clone). Of
   * two calls with the same non-zero counter, at most one is true.
   */
  updateUse(id: string, counter: number, backedUp: boolean, now: number): Promise<boolean>
  /** Deletes the person's passkey with this id; true when it was there (and theirs). */
  delete(username: string, id: string): Promise<boolean>
  /** Deletes every passkey of the person; returns how many. */
  deleteAll(username: string): Promise<number>
}

/** A passkey as its registration made it, verified: what the store keeps of it. */
export interface RegisteredPasskey {
  id: string
  publicKey: string
  counter: number
  transports: string[]
  backedUp: boolean
}

/**
 * The WebAuthn ceremonies (the server implements it with @simplewebauthn/server; a fake in tests).
 * Options and answers are the browser's JSON, opaque to the core. Nothing here throws for what a
 * browser sent: an answer that does not verify is null.
 */
export interface WebAuthn {
  /**
   * Options for `navigator.credentials.create()` carrying `challenge` (base64url, as the browser's
   * answer will carry it back): a discoverable credential for `username`, never one of `exclude`
   * (credential ids the person has already).
   */
  registrationOptions(
    username: string,
    exclude: readonly PasskeyCredential[],
    challenge: string,
  ): Promise<{ options: unknown }>
  /**
   * Verifies a registration answer against `challenge`, the configured origins and relying party:
   * the new passkey, or null.
   */
  verifyRegistration(response: unknown, challenge: string): Promise<RegisteredPasskey | null>
  /**
   * Options for `navigator.credentials.get()` carrying `challenge` (base64url), with no credential
   * listed: the browser offers the person's. User verification is asked for (`required`).
   */
  authenticationOptions(challenge: string): Promise<{ options: unknown }>
  /**
   * Verifies a sign-in answer of `credential` against `challenge`, the configured origins and
   * relying party: the counter and backup state it reports, or null. The counter is not compared
   * here: the store's compare-and-set does that, once for every instance.
   */
  verifyAuthentication(
    response: unknown,
    challenge: string,
    credential: PasskeyCredential,
  ): Promise<{ counter: number; backedUp: boolean } | null>
}
