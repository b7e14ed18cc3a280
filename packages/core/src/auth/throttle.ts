import type {
  AttemptOutcome,
  Clock,
  Digest,
  LoginAttempt,
  ThrottlePolicy,
  ThrottleStore,
} from '../ports/index.js'
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

/** Times an attempt asks the store while attempts of its keys are in flight here, in this core. */
export const MAX_BUSY_ASKS = 16

/** Attempts that may wait for an in-flight attempt of one key to end; more are answered busy at once. */
const MAX_WAITING_PER_KEY = 64

/**
 * What an attempt proves: a password of one of flowadmin's own users, a second factor's code, or
 * a password the directory checks.
 */
export type ThrottleLane = 'password' | 'factor' | 'directory'

/** The prefixes of a lane's pair and known-client keys. */
const LANE_KEYS: Record<ThrottleLane, { pair: string; known: string }> = {
  password: { pair: 'user', known: 'known' },
  factor: { pair: 'factor', known: 'factorknown' },
  directory: { pair: 'dir', known: 'dirknown' },
}

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
  // A second factor's code is counted per user whatever the address (whoever types it knows the
  // password already, so only the user's own counter bounds the guesses), beside the address. So is
  // a password the directory checks: the directory locks an account out after so many failures
  // from anywhere, and flowadmin's counter of the account must close before that.
  const attemptOf = async (username: string, address: string, lane: ThrottleLane): Promise<LoginAttempt> => {
    const scope = addressScope(address)
    const pairScope = lane === 'password' ? `${scope} ` : ''
    const { pair, known } = LANE_KEYS[lane]
    return {
      pairKey:
        username.length <= MAX_KEYED_USERNAME
          ? `${pair} ${pairScope}${username}`
          : `${pair}hash ${pairScope}${await digest.sha256(username)}`,
      addressKey: `addr ${scope}`,
      knownKey: `${known} ${await digest.sha256(`${scope}\n${username}`)}`,
    }
  }

  // Attempts this process has in flight, and attempts waiting for one of them to end, by key.
  // A busy answer means attempts of the same key are being verified; when some of them are this
  // process's own, the attempt waits for one to end and asks the store again, so that many right
  // passwords at once from one address (an office behind NAT) mostly get through instead of 503.
  // The store still decides every attempt: this only chooses when to ask it again.
  const inFlight = new Map<string, number>()
  const waiting = new Map<string, Array<() => void>>()
  const count = (key: string, delta: number) => {
    const next = (inFlight.get(key) ?? 0) + delta
    if (next > 0) inFlight.set(key, next)
    else inFlight.delete(key)
  }
  const keysOf = (attempt: LoginAttempt) => [attempt.pairKey, attempt.addressKey]
  /** Resolves when an attempt of one of `keys` ends here; false (at once) when none is in flight here. */
  const ending = (keys: string[]): Promise<boolean> | false => {
    const mine = keys.filter(
      (key) => inFlight.has(key) && (waiting.get(key)?.length ?? 0) < MAX_WAITING_PER_KEY,
    )
    if (mine.length === 0) return false
    return new Promise<boolean>((resolve) => {
      for (const key of mine) waiting.set(key, [...(waiting.get(key) ?? []), () => resolve(true)])
    })
  }

  return {
    /**
     * Asks the store whether this attempt may be verified now; if so it counts as in flight. A
     * busy answer is asked again each time an attempt of its keys ends in this process, a few
     * times at most. The `factor` lane counts a user's second-factor codes: its pair is the user
     * from any address, its address counter the same as passwords'.
     */
    async begin(
      username: string,
      address: string,
      lane: ThrottleLane = 'password',
    ): Promise<ThrottleDecision> {
      const attempt = await attemptOf(username, address, lane)
      for (let asked = 1; ; asked++) {
        const now = clock.now()
        const decision = await store.begin(attempt, policy, now)
        if (decision.outcome === 'proceed') {
          for (const key of keysOf(attempt)) count(key, 1)
          return { outcome: 'proceed', known: decision.known, attempt }
        }
        if (decision.outcome === 'throttled') {
          return { outcome: 'throttled', retryAfter: Math.max(1, Math.ceil((decision.retryAt - now) / 1000)) }
        }
        const ended = asked < MAX_BUSY_ASKS ? ending(keysOf(attempt)) : false
        if (ended === false) return decision
        await ended
      }
    },

    /** Ends an attempt that `begin` let proceed. */
    async finish(attempt: LoginAttempt, outcome: AttemptOutcome): Promise<void> {
      try {
        await store.finish(attempt, outcome, policy, clock.now())
      } finally {
        for (const key of keysOf(attempt)) {
          count(key, -1)
          const woken = waiting.get(key)
          waiting.delete(key)
          for (const wake of woken ?? []) wake()
        }
      }
    },

    /** Deletes up to `limit` ended windows and forgotten known pairs. */
    sweep(limit: number): Promise<number> {
      return store.deleteExpired(clock.now(), limit)
    },
  }
}

export type Throttle = ReturnType<typeof createThrottle>
