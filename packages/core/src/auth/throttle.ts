import type { AttemptOutcome, Clock, Digest, LoginAttempt, ThrottlePolicy, ThrottleStore } from '../ports.js'
import { addressScope } from './address-scope.js'

/**
 * Failed logins are counted in fixed windows under two keys: the username *from this address*,
 * and the address whatever the username. Guessing one user's password from one address throttles
 * that pair only, so the real user still logs in from elsewhere; spraying usernames from one
 * address throttles the address. IPv6 addresses count by their /64 (see addressScope).
 *
 * The store decides each attempt before its password is checked and counts it as in flight until
 * it ends, so processes sharing a store together verify at most `limit + inFlightAllowance`
 * wrong guesses per key and window, whatever their number and however the attempts arrive.
 */
export interface ThrottleOptions {
  /** Seconds a window lasts; failures older than the window no longer count. Default 900. */
  windowSeconds: number
  /** Failures of one username from one address before that pair must wait. Default 5. */
  maxFailuresPerUser: number
  /** Failures from one address, any usernames, before the address must wait. Default 20. */
  maxFailuresPerAddress: number
  /**
   * Attempts that may be in flight on a key beyond its remaining failures; more are answered
   * "temporarily unavailable" (never "throttled") until some finish. Default 4.
   */
  inFlightAllowance: number
  /** Days a successful login keeps its username+address pair in the known-client lane. Default 30. */
  knownClientDays: number
}

export const DEFAULT_THROTTLE: ThrottleOptions = {
  windowSeconds: 900,
  maxFailuresPerUser: 5,
  maxFailuresPerAddress: 20,
  inFlightAllowance: 4,
  knownClientDays: 30,
}

/** Longest username kept as it is in a throttle key; longer ones are keyed by their SHA-256. */
export const MAX_KEYED_USERNAME = 128

/**
 * How long in-flight attempts of a key count when no attempt on it begins: long past any
 * verification, so only attempts whose process died are forgotten.
 */
export const IN_FLIGHT_LEASE_MS = 30_000

const DAY_MS = 86_400_000

export type ThrottleDecision =
  | { outcome: 'proceed'; known: boolean; attempt: LoginAttempt }
  | { outcome: 'throttled'; retryAfter: number }
  | { outcome: 'busy' }

export function createThrottle(store: ThrottleStore, clock: Clock, digest: Digest, options: ThrottleOptions) {
  for (const name of Object.keys(DEFAULT_THROTTLE) as Array<keyof ThrottleOptions>) {
    const value = options[name]
    const least = name === 'knownClientDays' ? 0 : 1
    if (!Number.isSafeInteger(value) || value < least) {
      throw new RangeError(`throttle ${name} must be a whole number from ${least}`)
    }
  }
  const policy: ThrottlePolicy = {
    pairLimit: options.maxFailuresPerUser,
    addressLimit: options.maxFailuresPerAddress,
    windowMs: options.windowSeconds * 1000,
    allowance: options.inFlightAllowance,
    leaseMs: IN_FLIGHT_LEASE_MS,
    knownMs: options.knownClientDays * DAY_MS,
  }
  // Keys stay short whatever the username, so a spray of huge usernames costs the store no more
  // per counter than short ones. A digest key has another prefix, so it never meets a plain one.
  // The known-client key is always a digest: the store never lists which usernames logged in.
  const attemptOf = async (username: string, address: string): Promise<LoginAttempt> => {
    const scope = addressScope(address)
    return {
      pairKey:
        username.length <= MAX_KEYED_USERNAME
          ? `user ${scope} ${username}`
          : `userhash ${scope} ${await digest.sha256(username)}`,
      addressKey: `addr ${scope}`,
      knownKey: `known ${await digest.sha256(`${scope}\n${username}`)}`,
    }
  }

  return {
    /** Asks the store whether this attempt may be verified now; if so it counts as in flight. */
    async begin(username: string, address: string): Promise<ThrottleDecision> {
      const attempt = await attemptOf(username, address)
      const now = clock.now()
      const decision = await store.begin(attempt, policy, now)
      switch (decision.outcome) {
        case 'proceed':
          return { outcome: 'proceed', known: decision.known, attempt }
        case 'throttled':
          return { outcome: 'throttled', retryAfter: Math.max(1, Math.ceil((decision.retryAt - now) / 1000)) }
        case 'busy':
          return decision
      }
    },

    /** Ends an attempt that `begin` let proceed. */
    finish(attempt: LoginAttempt, outcome: AttemptOutcome): Promise<void> {
      return store.finish(attempt, outcome, policy, clock.now())
    },

    /** Deletes up to `limit` ended windows and forgotten known pairs. */
    sweep(limit: number): Promise<number> {
      return store.deleteExpired(clock.now(), limit)
    },
  }
}

export type Throttle = ReturnType<typeof createThrottle>
