// The single sign-on store: what every instance sharing the store must agree on about the people
// the identity provider vouches for. Keys are opaque to the store (keyed hashes the core derives).
// Times are milliseconds since the Unix epoch, always passed in: adapters never read a clock.

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
  /** Deletes up to `limit` remembered logout tokens whose time ended at or before `now`; returns how many. */
  deleteExpired(now: number, limit: number): Promise<number>
}
