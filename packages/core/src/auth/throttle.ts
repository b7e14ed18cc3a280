import type { Clock, Digest, ThrottleStore } from '../ports.js'
import { addressScope } from './address-scope.js'

/**
 * Failed logins are counted in fixed windows under two keys: the username *from this address*,
 * and the address whatever the username. Guessing one user's password from one address throttles
 * that pair only, so the real user still logs in from elsewhere; spraying usernames from one
 * address throttles the address. IPv6 addresses count by their /64 (see addressScope).
 */
export interface ThrottleOptions {
  /** Seconds a window lasts; failures older than the window no longer count. Default 900. */
  windowSeconds: number
  /** Failures of one username from one address before that pair must wait. Default 5. */
  maxFailuresPerUser: number
  /** Failures from one address, any usernames, before the address must wait. Default 20. */
  maxFailuresPerAddress: number
}

export const DEFAULT_THROTTLE: ThrottleOptions = {
  windowSeconds: 900,
  maxFailuresPerUser: 5,
  maxFailuresPerAddress: 20,
}

/** Longest username kept as it is in a throttle key; longer ones are keyed by their SHA-256. */
export const MAX_KEYED_USERNAME = 128

export function createThrottle(store: ThrottleStore, clock: Clock, digest: Digest, options: ThrottleOptions) {
  const windowMs = options.windowSeconds * 1000
  // Keys stay short whatever the username, so a spray of huge usernames costs the store no more
  // per counter than short ones. A digest key has another prefix, so it never meets a plain one.
  const keysOf = async (username: string, address: string) => {
    const scope = addressScope(address)
    return [
      username.length <= MAX_KEYED_USERNAME
        ? `user ${scope} ${username}`
        : `userhash ${scope} ${await digest.sha256(username)}`,
      `addr ${scope}`,
    ]
  }
  const limits = [options.maxFailuresPerUser, options.maxFailuresPerAddress]

  return {
    /** Seconds to wait before this pair may try again, or 0 when it may try now. */
    async retryAfter(username: string, address: string): Promise<number> {
      const now = clock.now()
      const counters = await store.peek(await keysOf(username, address), now)
      let until = 0
      counters.forEach((counter, i) => {
        if (counter !== null && counter.count >= (limits[i] as number))
          until = Math.max(until, counter.resetAt)
      })
      return until === 0 ? 0 : Math.max(1, Math.ceil((until - now) / 1000))
    },

    async recordFailure(username: string, address: string): Promise<void> {
      await store.hit(await keysOf(username, address), clock.now(), windowMs)
    },

    /** A success clears the pair only: the address counter keeps counting sprayed usernames. */
    async recordSuccess(username: string, address: string): Promise<void> {
      await store.clear((await keysOf(username, address))[0] as string)
    },

    /** Deletes up to `limit` counters whose window has ended. */
    sweep(limit: number): Promise<number> {
      return store.deleteExpired(clock.now(), limit)
    },
  }
}

export type Throttle = ReturnType<typeof createThrottle>
