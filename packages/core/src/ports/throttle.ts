// The throttle store: failed-login counters, decided atomically across processes.
// Times are milliseconds since the Unix epoch, always passed in: adapters never read a clock.

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
