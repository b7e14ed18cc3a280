// The single sign-on store: what every instance sharing the store must agree on about the people
// the identity provider vouches for, and about sign-ins (of every kind) under way: the key that
// authenticates the challenges browsers carry, the challenges answered, and the one-time codes
// that end sign-ins. Keys are opaque to the store (hashes the core derives). Times are
// milliseconds since the Unix epoch, always passed in: adapters never read a clock.
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

/** How many one-time codes may wait at once: from one address, and in the store. */
export interface WaitingBounds {
  perAddress: number
  total: number
}

/**
 * What saving a code did: `saved`, or nothing because its address has `perAddress` live ones
 * already (`address_full`), or the store has `total` (`full`). Nothing is ever evicted.
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
   * The key that authenticates the sign-in challenges browsers carry (see carried-challenges):
   * `candidate` is kept when there is none yet; the key kept first is the answer to every call,
   * from every process, ever after (atomic across processes). Never deleted by the store.
   */
  signInKey(candidate: string, now: number): Promise<string>
  /**
   * Spends the challenge under `key` until `expiresAt`, atomically across processes: true when it
   * was not spent (or its spending ended at or before `now`), false when it is (a replay). Of two
   * calls at once, at most one is true.
   */
  spendChallenge(key: string, expiresAt: number, now: number): Promise<boolean>
  /**
   * Saves a one-time code unless its address has `bounds.perAddress` live ones (expiring after
   * `now`) or the store `bounds.total`; the count and the save are one step across processes.
   */
  saveCode(code: IssuedCode, bounds: WaitingBounds, now: number): Promise<WaitingSave>
  /** The code under `key` when it is live at `now`, else null; leaves it in place. */
  findCode(key: string, now: number): Promise<IssuedCode | null>
  /**
   * Takes the code under `key` when it is live at `now` and is the code of `clientId` (its
   * authorization request's client; null: a console code): deletes and returns it, else null and
   * nothing changes. Atomic across processes: of racing takers, one gets it.
   */
  takeCode(key: string, clientId: string | null, now: number): Promise<IssuedCode | null>
  /**
   * Deletes up to `limit` spent challenges and codes whose time ended at or before `now`; returns
   * how many.
   */
  deleteExpiredSignIns(now: number, limit: number): Promise<number>
}
