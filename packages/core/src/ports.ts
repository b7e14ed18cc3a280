// Every port the core needs. Adapters implement these; the core never reaches past them.
// Times are milliseconds since the Unix epoch, always passed in: adapters never read a clock.

/** Who a token was issued to: someone who logged in, or a named token for automation. */
export type TokenKind = 'session' | 'api'

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

/** What discovery found of an installed module: the store keeps it with an `enabled` flag per set. */
export interface ModuleDescriptor {
  name: string
  version: string
  sets: Array<{ name: string; types: string[] }>
}

export interface NodeSetRecord {
  /** `<module>/<set name>` */
  id: string
  name: string
  module: string
  types: string[]
  enabled: boolean
}

export interface ModuleRecord {
  name: string
  version: string
  /** In the order discovery listed them. */
  sets: NodeSetRecord[]
}

export interface ModuleStore {
  /**
   * Records a discovered module: its version and node sets (order and types as given). Sets the
   * store already knows keep their `enabled` flag, new sets start enabled, sets no longer listed are
   * dropped. Atomic. Returns the stored module.
   */
  upsert(module: ModuleDescriptor): Promise<ModuleRecord>
  /** The module, or null. */
  find(name: string): Promise<ModuleRecord | null>
  /** Every module, sorted by name. */
  list(): Promise<ModuleRecord[]>
  /**
   * Sets the `enabled` flag of these node sets of one module, all of them or none. Returns the
   * module afterwards, or null when the module is unknown. Set names it does not have are ignored.
   */
  setEnabled(module: string, sets: string[], enabled: boolean): Promise<ModuleRecord | null>
  /** Forgets a module and its sets; true when it was there. */
  remove(name: string): Promise<boolean>
}

/**
 * The keys of one login attempt. Keys are opaque to the store; the core derives them so that none
 * tells which usernames exist (the known-client key is a digest of the pair).
 */
export interface LoginAttempt {
  /** Counts failures of one username from one address; a success clears it. */
  pairKey: string
  /** Counts failures from one address, whatever the username; a success leaves it. */
  addressKey: string
  /** Remembers the last success of the pair, for the known-client lane. */
  knownKey: string
}

/** The rules a throttle store applies, passed with every call so that the store holds no settings. */
export interface ThrottlePolicy {
  /** Recorded failures of a pair that close it until its window ends. */
  pairLimit: number
  /** Recorded failures of an address that close it until its window ends. */
  addressLimit: number
  /** How long a window lasts from its first attempt. */
  windowMs: number
  /**
   * Attempts that may be in flight on a counter beyond its remaining failures: a counter admits
   * an attempt only while `failures + inFlight < limit + allowance`, so all processes together
   * verify at most `limit + allowance` wrong guesses per counter and window.
   */
  allowance: number
  /**
   * How long in-flight attempts count without news: when no attempt on a counter began for this
   * long, its in-flight count starts again from zero (an attempt whose process died never finishes).
   */
  leaseMs: number
  /** How long a success keeps the pair known. */
  knownMs: number
}

export type AttemptDecision =
  /** Counted as in flight; `known` when the pair succeeded within `knownMs`. */
  | { outcome: 'proceed'; known: boolean }
  /** Recorded failures of the pair or the address reached the limit; when the last of those windows ends. */
  | { outcome: 'throttled'; retryAt: number }
  /** Below the limit, but attempts in flight fill the allowance: nothing recorded, try again shortly. */
  | { outcome: 'busy' }

/** How an admitted attempt ended. */
export type AttemptOutcome = 'failed' | 'succeeded' | 'abandoned'

export interface ThrottleStore {
  /**
   * Decides an attempt, atomically across every process that shares the store: `throttled` when
   * either counter's failures (in a live window) reached its limit, else `busy` when either
   * counter's failures plus in-flight attempts reached limit + allowance, else both counters count
   * one more attempt in flight and it may `proceed`. A counter whose window ended (or that is new)
   * starts a window of `windowMs` at `now`, with no failures and nothing in flight.
   */
  begin(attempt: LoginAttempt, policy: ThrottlePolicy, now: number): Promise<AttemptDecision>
  /**
   * Ends an attempt that `begin` let proceed, atomically: it leaves both counters' in flight
   * (never below zero). `failed` also records a failure on both; `succeeded` deletes the pair
   * counter and remembers the pair as known until `now + knownMs`; `abandoned` records nothing.
   */
  finish(attempt: LoginAttempt, outcome: AttemptOutcome, policy: ThrottlePolicy, now: number): Promise<void>
  /**
   * Deletes up to `limit` entries, counters whose window ended and known pairs whose time ended
   * at or before `now` alike; returns how many.
   */
  deleteExpired(now: number, limit: number): Promise<number>
}

/** The stores, as one adapter provides them. */
export interface Stores {
  tokens: TokenStore
  modules: ModuleStore
  throttle: ThrottleStore
}

export interface PasswordVerifier {
  /** True when `password` matches `hash`. Never throws for a wrong password or a malformed hash. */
  verify(hash: string, password: string): Promise<boolean>
  /**
   * A hash of a random secret, verified for unknown users so that they cost the same time as
   * known ones.
   */
  readonly dummyHash: string
}

/** A node set as the loader sees it. */
export interface NodeSetRef {
  id: string
  module: string
  name: string
}

export type LoadOutcome = { ok: true } | { ok: false; message: string }

export interface NodeSetLoader {
  /** Loads a node set's files. A failure is an outcome with a message fit to show, never a throw. */
  load(set: NodeSetRef): Promise<LoadOutcome>
}

/**
 * What to install: a package from the registry (`version` a semver range; absent, the newest), the
 * tarball at `url`, which must hold the package named `module`, or an uploaded tarball's bytes.
 */
export type InstallRequest =
  | { module: string; version?: string | undefined; url?: undefined; tarball?: undefined }
  | { module: string; url: string; version?: undefined; tarball?: undefined }
  | { tarball: Uint8Array; module?: undefined; version?: undefined; url?: undefined }

/** Why an install or removal did not happen. In every case nothing was changed. */
export type InstallFailure =
  /** The name, version or URL is not a valid package name, semver range or http(s) URL. */
  | { code: 'invalid_module_spec'; message: string }
  /** The settings do not allow it (the policy is decided before anything is fetched). */
  | { code: 'module_not_allowed'; message: string }
  /** The package manager failed, or the package is not a node module; `message` is fit to show. */
  | { code: 'install_failed'; message: string }
  /** The package manager ran past its time limit; what it did was undone. */
  | { code: 'install_timeout' }
  /** Another install or removal kept running past the wait allowed. */
  | { code: 'busy' }

export interface ModuleInstaller {
  /**
   * Installs a module, all or nothing, and makes its node sets loadable. Returns the installed
   * module as discovery sees it; on failure the runtime's modules are exactly as they were.
   */
  install(
    request: InstallRequest,
  ): Promise<{ ok: true; module: ModuleDescriptor } | { ok: false; error: InstallFailure }>
  /** Uninstalls an installed module, all or nothing. */
  remove(name: string): Promise<{ ok: true } | { ok: false; error: InstallFailure }>
}

export interface TypeUsage {
  /**
   * The node types the deployed flows use now, or null when the flows cannot be read (the adapter
   * reports why): the core then refuses every disable rather than risk removing a type in use.
   */
  typesInUse(): Promise<ReadonlySet<string> | null>
}

/** Measurements the core reports as they happen; each call must be cheap and must not throw. */
export interface CoreObserver {
  /** A login waited this many milliseconds in the verifier queue before its verification began. */
  verifierWait?(milliseconds: number): void
}

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number
}

export interface RandomSource {
  /** `length` bytes; in production from a CSPRNG. */
  bytes(length: number): Uint8Array
}

export interface Digest {
  /** SHA-256 of the UTF-8 text, as lowercase hex. */
  sha256(text: string): Promise<string>
  /** HMAC-SHA-256 of the UTF-8 text under the UTF-8 key, as lowercase hex. */
  hmacSha256(key: string, text: string): Promise<string>
}

/** Who did something, for events. Never a password or a token. */
export interface Actor {
  username: string | null
  clientId: string | null
  address: string | null
}

export type DomainEvent =
  | ({ type: 'login.succeeded'; at: number } & Actor)
  | ({ type: 'login.failed'; at: number } & Actor)
  | ({ type: 'login.throttled'; at: number; retryAfter: number } & Actor)
  /** An attempt answered "temporarily unavailable" without verifying its password. */
  | ({ type: 'login.shed'; at: number; retryAfter: number } & Actor)
  | ({ type: 'permission.denied'; at: number; permission: string } & Actor)
  | ({ type: 'token.revoked'; at: number; owner: string; id: string } & Actor)
  /** An API token was created; `owner` holds it, the actor created it. */
  | ({ type: 'token.created'; at: number; owner: string; id: string; name: string } & Actor)
  /** A token refused and deleted because its user is gone or its user's password changed. */
  | ({
      type: 'token.invalidated'
      at: number
      owner: string
      id: string
      reason: 'user_removed' | 'credential_changed'
    } & Actor)
  /** Every token of a user ended at once: by request, or because the user is no longer configured. */
  | ({
      type: 'tokens.revoked_all'
      at: number
      owner: string
      count: number
      reason: 'request' | 'user_removed'
    } & Actor)
  | ({ type: 'module.enabled'; at: number; module: string; sets: string[] } & Actor)
  | ({ type: 'module.disabled'; at: number; module: string; sets: string[] } & Actor)
  | ({ type: 'module.installed'; at: number; module: string; version: string } & Actor)
  | ({ type: 'module.removed'; at: number; module: string; version: string } & Actor)

export interface EventSink {
  /** Receives an event. Must not throw; a slow sink should buffer. */
  emit(event: DomainEvent): void
}
