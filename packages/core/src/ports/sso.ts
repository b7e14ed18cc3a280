// The single sign-on store: what every instance sharing the store must agree on about the people
// the identity provider vouches for, and about the sign-ins under way. Keys are opaque to the
// store (hashes the core derives). Times are milliseconds since the Unix epoch, always passed in:
// adapters never read a clock.
import type { PendingSignIn } from './identity.js'
import type { SignInMethod } from './tokens.js'

/**
 * A resource server's authorization request (`GET /auth/authorize`, RFC 6749 §4.1 with PKCE): a
 * Node-RED editor signing in through flowadmin. The adapter checked the client and the redirect
 * URI (registered, exact match) before the sign-in began.
 */
export interface AuthorizationRequest {
  clientId: string
  redirectUri: string
  /** The PKCE challenge, S256 (RFC 7636): base64url of the verifier's SHA-256. */
  codeChallenge: string
  /** The client's `state`, echoed back with the code. */
  state: string | null
}

/**
 * How a person of flowadmin's own users proved who they are on its sign-in page (single sign-on
 * is the provider's).
 */
export type LocalSignInMethod = Exclude<SignInMethod, 'provider'>

/** A sign-in sent to the provider and not yet back: what its callback needs to finish it. */
export interface StartedSignIn {
  /** The SHA-256 of the browser binding (the cookie's value): the binding itself is not stored. */
  key: string
  /** The scope of the client address that started it: what the per-address bound counts by. */
  address: string
  /** Its state, nonce and PKCE verifier: secrets, kept until `expiresAt` at most. */
  pending: PendingSignIn
  /** Where the console lands afterwards. */
  returnTo: string
  /** The resource server's request it began with, or null: the console's sign-in. */
  authorization: AuthorizationRequest | null
  expiresAt: number
}

/** A one-time code handed out at the end of a sign-in, waiting to be traded for a token. */
export interface IssuedCode {
  /** The SHA-256 of the code: the code itself is never stored. */
  key: string
  /** The scope of the client address it was handed to: what the per-address bound counts by. */
  address: string
  /** The SHA-256 of the browser binding (the console's codes), or null (a resource server's code). */
  binding: string | null
  /**
   * Who signed in. A person of the provider: what they may do and their tokens' fingerprint. One
   * of flowadmin's own users: `method` says how; the user's permissions and password are read
   * again when the code is traded.
   */
  owner: { username: string; permissions: string[]; fingerprint: string; method?: LocalSignInMethod }
  /** The resource server's request the sign-in began with (its client may trade the code), or null. */
  authorization: AuthorizationRequest | null
  expiresAt: number
}

/** How many sign-ins (and, apart, codes) may wait at once: from one address, and in the store. */
export interface WaitingBounds {
  perAddress: number
  total: number
}

/**
 * What saving a sign-in or a code did: `saved`, or nothing because its address has `perAddress`
 * live ones already (`address_full`), or the store has `total` (`full`). Nothing is ever evicted.
 */
export type WaitingSave = 'saved' | 'address_full' | 'full'

export interface SsoStore {
  /**
   * Binds `username` to `identity` (the provider's issuer and subject, as a keyed hash) when no
   * identity has it yet, atomically across processes, and returns the identity it is bound to now:
   * `identity` itself, or the one that had the name first. A binding is never undone by the store.
   */
  claimName(username: string, identity: string, now: number): Promise<string>
  /**
   * Remembers a back-channel logout token (its key) until `expiresAt`, atomically across
   * processes: true when it was not remembered (or its time had ended at or before `now`), false
   * when it is (a replay).
   */
  rememberLogout(key: string, expiresAt: number, now: number): Promise<boolean>
  /**
   * Forgets a remembered logout token (its key), so the provider's retry of a logout that could
   * not be carried out is taken as new. Forgetting an unknown key does nothing.
   */
  forgetLogout(key: string): Promise<void>
  /** Deletes up to `limit` remembered logout tokens whose time ended at or before `now`; returns how many. */
  deleteExpired(now: number, limit: number): Promise<number>
  /**
   * Saves a started sign-in unless its address has `bounds.perAddress` live ones (expiring after
   * `now`) or the store `bounds.total`; the count and the save are one step across processes.
   */
  saveSignIn(signIn: StartedSignIn, bounds: WaitingBounds, now: number): Promise<WaitingSave>
  /**
   * Takes the sign-in under `key`: deletes it and returns it when it is live at `now`, else null
   * (none, taken, or expired). Atomic across processes: of racing takers, one gets it.
   */
  takeSignIn(key: string, now: number): Promise<StartedSignIn | null>
  /** Saves a one-time code, under the same bounds as {@link saveSignIn} (codes counted apart). */
  saveCode(code: IssuedCode, bounds: WaitingBounds, now: number): Promise<WaitingSave>
  /** The code under `key` when it is live at `now`, else null; leaves it in place. */
  findCode(key: string, now: number): Promise<IssuedCode | null>
  /**
   * Takes the code under `key` when it is live at `now` and is the code of `clientId` (its
   * authorization request's client; null: a console code): deletes and returns it, else null and
   * nothing changes. Atomic across processes: of racing takers, one gets it.
   */
  takeCode(key: string, clientId: string | null, now: number): Promise<IssuedCode | null>
  /** Deletes up to `limit` sign-ins and codes that expired at or before `now`; returns how many. */
  deleteExpiredSignIns(now: number, limit: number): Promise<number>
}
