// Every port the core needs. Adapters implement these; the core never reaches past them.
// Times are milliseconds since the Unix epoch, always passed in: adapters never read a clock.

/** A stored access token. The token itself is never stored, only `hash` (SHA-256, lowercase hex). */
export interface TokenRecord {
  hash: string
  username: string
  clientId: string
  /** The granted permissions; they govern what the token may do, not the user's. */
  scope: string[]
  createdAt: number
  expiresAt: number
}

export interface TokenStore {
  /** Saves a new record. Saving a hash that exists replaces that record. */
  save(record: TokenRecord): Promise<void>
  /** The record for this hash, or null. Does not check expiry: the core does. */
  findByHash(hash: string): Promise<TokenRecord | null>
  /** Deletes it; true when a record was there (exactly one of racing deletes sees true). */
  delete(hash: string): Promise<boolean>
  /** Deletes all records of a user; returns how many. */
  deleteByUser(username: string): Promise<number>
  /** Deletes up to `limit` records that expired at or before `now`; returns how many. */
  deleteExpired(now: number, limit: number): Promise<number>
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

/** A fixed-window failure counter. */
export interface ThrottleCounter {
  count: number
  /** When the window ends and the counter starts again from zero. */
  resetAt: number
}

export interface ThrottleStore {
  /**
   * Adds one failure to each key and returns each key's counter, in order. A key whose window has
   * ended (resetAt <= now) or that is new starts a window of `windowMs` with count 1. Atomic per key.
   */
  hit(keys: string[], now: number, windowMs: number): Promise<ThrottleCounter[]>
  /** Each key's live counter (null when absent or its window ended at or before `now`), in order. */
  peek(keys: string[], now: number): Promise<Array<ThrottleCounter | null>>
  /** Forgets a key. */
  clear(key: string): Promise<void>
  /** Deletes up to `limit` counters whose window ended at or before `now`; returns how many. */
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
 * What to install: a package from the registry (`version` a semver range; absent, the newest), or
 * the tarball at `url`, which must hold the package named `module`.
 */
export type InstallRequest =
  | { module: string; version?: string | undefined; url?: undefined }
  | { module: string; url: string; version?: undefined }

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
  | ({ type: 'permission.denied'; at: number; permission: string } & Actor)
  | ({ type: 'token.revoked'; at: number; owner: string } & Actor)
  | ({ type: 'module.enabled'; at: number; module: string; sets: string[] } & Actor)
  | ({ type: 'module.disabled'; at: number; module: string; sets: string[] } & Actor)
  | ({ type: 'module.installed'; at: number; module: string; version: string } & Actor)
  | ({ type: 'module.removed'; at: number; module: string; version: string } & Actor)

export interface EventSink {
  /** Receives an event. Must not throw; a slow sink should buffer. */
  emit(event: DomainEvent): void
}
