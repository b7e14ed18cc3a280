// Passkeys (WebAuthn): people's credentials and the challenges of their ceremonies, shared by every
// instance on the store so that a challenge serves once and a counter only grows, whichever
// instance is asked; and the verifier of the ceremonies (the server's, with @simplewebauthn/server).
// Times are milliseconds since the Unix epoch, always passed in: adapters never read a clock.
import type { WaitingBounds, WaitingSave } from './sso.js'

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

/** What a ceremony's challenge is for. */
export type PasskeyPurpose = 'register' | 'sign_in'

/** A challenge handed to a browser, awaiting its authenticator's answer: taken once. */
export interface PasskeyChallenge {
  purpose: PasskeyPurpose
  /** Who is registering; null for a sign-in (the passkey says who). */
  username: string | null
  /**
   * For a sign-in: the scope of the client address that asked for it (see `addressScope`), what
   * the per-address bound counts by. Null for a registration (it belongs to a signed-in person).
   */
  address: string | null
  expiresAt: number
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
  /**
   * Saves a challenge under `key` (a hash of the challenge, never the challenge itself). A
   * sign-in's challenge is saved unless its address has `bounds.perAddress` live sign-in challenges
   * (expiring after `now`) or the store `bounds.total`; the count and the save are one step across
   * processes, and nothing is evicted. A registration's challenge is saved regardless, and counted
   * in neither bound.
   */
  saveChallenge(
    key: string,
    challenge: PasskeyChallenge,
    bounds: WaitingBounds,
    now: number,
  ): Promise<WaitingSave>
  /**
   * Takes the challenge under `key`: deletes it and returns it, atomically across processes, so
   * that of two calls at most one gets it; null when there is none, or its time ended at or before
   * `now` (then it is deleted too).
   */
  takeChallenge(key: string, now: number): Promise<PasskeyChallenge | null>
  /** Deletes up to `limit` challenges whose time ended at or before `now`; returns how many. */
  deleteExpiredChallenges(now: number, limit: number): Promise<number>
}

/** A passkey as its registration made it, verified: what the store keeps of it. */
export interface RegisteredPasskey {
  id: string
  publicKey: string
  counter: number
  transports: string[]
  backedUp: boolean
}

/** Options for the browser's ceremony (JSON, opaque to the core) and the challenge in them. */
export interface CeremonyOptions {
  options: unknown
  /** The challenge (base64url) the options carry, as the browser's answer will carry it back. */
  challenge: string
}

/**
 * The WebAuthn ceremonies (the server implements it with @simplewebauthn/server; a fake in tests).
 * Options and answers are the browser's JSON, opaque to the core. Nothing here throws for what a
 * browser sent: an answer that does not verify is null.
 */
export interface WebAuthn {
  /**
   * Options for `navigator.credentials.create()`: a discoverable credential for `username`, never
   * one of `exclude` (credential ids the person has already).
   */
  registrationOptions(username: string, exclude: readonly PasskeyCredential[]): Promise<CeremonyOptions>
  /**
   * Verifies a registration answer against `challenge`, the configured origins and relying party:
   * the new passkey, or null.
   */
  verifyRegistration(response: unknown, challenge: string): Promise<RegisteredPasskey | null>
  /** Options for `navigator.credentials.get()` with no credential listed: the browser offers the person's. */
  authenticationOptions(): Promise<CeremonyOptions>
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
