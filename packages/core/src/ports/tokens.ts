// The token store: access tokens as the core keeps them, by hash only.
// Times are milliseconds since the Unix epoch, always passed in: adapters never read a clock.

/** Who a token was issued to: someone who logged in, or a named token for automation. */
export type TokenKind = 'session' | 'api'

/**
 * How a session's person signed in: their password alone, their password and a TOTP code, their
 * password and a recovery code, a passkey, or the identity provider (single sign-on).
 */
export const SIGN_IN_METHODS = [
  'password',
  'password_totp',
  'password_recovery_code',
  'passkey',
  'provider',
] as const

export type SignInMethod = (typeof SIGN_IN_METHODS)[number]

/**
 * A stored access token. The token itself is never stored, only `hash` (SHA-256, lowercase hex),
 * nor the password hash of its user, only `fingerprint`.
 */
export interface TokenRecord {
  hash: string
  /** The public name of the record: safe to show, list and revoke by; unrelated to the token. */
  id: string
  kind: TokenKind
  /** The name an API token was given; null for a session. */
  name: string | null
  username: string
  clientId: string
  /**
   * Whom the token is for: `flowadmin` (its own API) or one resource server's id (that server
   * alone may learn of it by introspection). null only for a token saved before tokens had an
   * audience: the core reads it as its client's (see audienceOf) and writes that at start.
   */
  audience: string | null
  /** The granted permissions; what the token may do is this ∩ what its user may do now. */
  scope: string[]
  /**
   * A keyed hash of the credential the token was issued against (derived from the user's stored
   * password hash, never that hash itself): a token whose user's credential changed is invalid.
   */
  fingerprint: string
  createdAt: number
  /** null: never expires. */
  expiresAt: number | null
  /** When the token was last used, to the minute at best; null when never. */
  lastUsedAt: number | null
  /** The client address of that use; null when never. */
  lastAddress: string | null
  /**
   * What asked for the token, for people telling their tokens apart: a short description of the
   * browser or tool ("Firefox 133 on Linux", "curl 8.5.0"); null when unknown.
   */
  agent: string | null
  /**
   * How the person signed in for this session (see SignInMethod); null for an API token and for
   * a session saved before sessions recorded it.
   */
  signIn: SignInMethod | null
}

export interface TokenStore {
  /** Saves a new record. Saving a hash or an id that exists replaces that record. */
  save(record: TokenRecord): Promise<void>
  /** The record for this hash, or null. Does not check expiry: the core does. */
  findByHash(hash: string): Promise<TokenRecord | null>
  /** The record with this public id, or null. Does not check expiry. */
  findById(id: string): Promise<TokenRecord | null>
  /**
   * The records of one user, or of everyone when `username` is null, oldest first (by createdAt,
   * then id). Expired ones included: the core filters.
   */
  list(username: string | null): Promise<TokenRecord[]>
  /** Every username that holds at least one record, sorted, each once. */
  usernames(): Promise<string[]>
  /**
   * Records a use: sets lastUsedAt and lastAddress of the record with this id, nothing else.
   * One cheap write; nothing happens when the id is unknown.
   */
  touch(id: string, usedAt: number, address: string): Promise<void>
  /** Deletes the record with this id; true when it was there (exactly one of racing deletes sees true). */
  delete(id: string): Promise<boolean>
  /** Deletes all records of a user; returns how many. */
  deleteByUser(username: string): Promise<number>
  /** Deletes up to `limit` records that expired at or before `now`; returns how many. Never-expiring ones stay. */
  deleteExpired(now: number, limit: number): Promise<number>
  /**
   * How many records of each kind are live at `now` (expiring after it, or never), for
   * monitoring. A kind without any is 0.
   */
  countLive(now: number): Promise<Record<TokenKind, number>>
}
