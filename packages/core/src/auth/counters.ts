import type { AttemptDecision, LoginAttempt, ThrottlePolicy } from '../ports/index.js'

/** A throttle counter in a live window, as a store reads it at `now`. */
export interface CounterState {
  /** Failures recorded in the window. */
  failures: number
  /** Attempts admitted and not finished, while their lease lasts (0 once it ended). */
  inFlight: number
  /** When the window ends. */
  resetAt: number
}

/** The two counters a login attempt is decided on, each with its limit: the pair's, then the address's. */
export const attemptCounters = (attempt: LoginAttempt, policy: ThrottlePolicy) => [
  { key: attempt.pairKey, limit: policy.pairLimit },
  { key: attempt.addressKey, limit: policy.addressLimit },
]

/**
 * How a throttle store refuses an attempt given its counters as they stand (`state` null or
 * undefined for a counter without a live window), or null when the attempt may proceed:
 * `throttled` until the last closed window ends when a counter's failures reached its limit, else
 * `busy` when a counter's failures and attempts in flight reached its limit plus `allowance`.
 * Every store decides by this one rule (see ThrottleStore.begin).
 */
export function throttleRefusal(
  counters: ReadonlyArray<{ limit: number; state: CounterState | null | undefined }>,
  allowance: number,
): Exclude<AttemptDecision, { outcome: 'proceed' }> | null {
  let retryAt: number | null = null
  for (const { limit, state } of counters) {
    if (state && state.failures >= limit) retryAt = Math.max(retryAt ?? state.resetAt, state.resetAt)
  }
  if (retryAt !== null) return { outcome: 'throttled', retryAt }
  const full = counters.some(
    ({ limit, state }) => state && state.failures + state.inFlight >= limit + allowance,
  )
  return full ? { outcome: 'busy' } : null
}
