import { attemptCounters, type ThrottleStore, throttleRefusal } from '@flowadmin/core'
import { createCappedMap } from './capped-map.js'

interface Counter {
  failures: number
  inFlight: number
  resetAt: number
  leaseUntil: number
}

/**
 * Throttle counters and known pairs in two capped maps. A live counter is never dropped to make
 * room for another: else a spray of new usernames or addresses would wipe the failures of the
 * key it targets. When live counters fill the map, an attempt that needs a new counter is
 * answered busy (nothing recorded, try again shortly) until a window ends. Only counters that
 * decide nothing make room: windows that ended, and oldest first, live ones that count nothing
 * (no failure, no attempt in flight), which a new window would replace alike. Known pairs only
 * choose a verifier lane: the oldest are forgotten to make room.
 */
export function createThrottleStore(maxEntries: number): ThrottleStore {
  const counters = createCappedMap<Counter>(
    maxEntries,
    (counter) => counter.resetAt,
    (counter, now) =>
      counter.resetAt <= now ||
      (counter.failures === 0 && (counter.inFlight === 0 || counter.leaseUntil <= now)),
  )
  const known = createCappedMap<number>(maxEntries, (expiresAt) => expiresAt)
  /** The live counter of a key, as it stands at `now`, or null. */
  const live = (key: string, now: number) => {
    const counter = counters.entries.get(key)
    if (!counter || counter.resetAt <= now) return null
    if (counter.leaseUntil <= now) counter.inFlight = 0
    return counter
  }
  /**
   * The live counter of a key, or a new window started at `now`, at the end of the order. It
   * takes the place of the key's ended window, or of counters that decide nothing; an attempt
   * ending while live ones fill the map records its failure even so, one place over (see `finish`).
   */
  const counterOf = (key: string, now: number, windowMs: number) => {
    const current = live(key, now)
    if (current) return current
    counters.entries.delete(key)
    counters.roomFor(1, now)
    const started = { failures: 0, inFlight: 0, resetAt: now + windowMs, leaseUntil: 0 }
    counters.entries.set(key, started)
    return started
  }

  // Each call runs in one synchronous pass, so no other call sees it half done.
  return {
    async begin(attempt, policy, now) {
      const keys = attemptCounters(attempt, policy)
      const seen = keys.map(({ key, limit }) => ({ limit, state: live(key, now) }))
      const refusal = throttleRefusal(seen, policy.allowance)
      if (refusal) return refusal
      // Ended windows give their place back first; then the new counters need room.
      const fresh = keys.filter((_, index) => seen[index]?.state === null)
      for (const { key } of fresh) counters.entries.delete(key)
      const mine = (key: string) => key === attempt.pairKey || key === attempt.addressKey
      if (!counters.roomFor(fresh.length, now, mine)) return { outcome: 'busy' }
      for (const { key } of keys) {
        const counter = counterOf(key, now, policy.windowMs)
        counter.inFlight++
        counter.leaseUntil = now + policy.leaseMs
      }
      return { outcome: 'proceed', known: (known.entries.get(attempt.knownKey) ?? 0) > now }
    },
    async finish(attempt, outcome, policy, now) {
      // A live counter is missing here only when a success of the pair deleted it meanwhile, or
      // when it counted nothing once this attempt's lease ran out and made room: the failure is
      // recorded all the same, so the map holds at most two counters more per attempt in flight,
      // and never forgets a failure.
      for (const { key } of attemptCounters(attempt, policy)) {
        const counter = counterOf(key, now, policy.windowMs)
        counter.inFlight = Math.max(0, counter.inFlight - 1)
        if (outcome === 'failed') counter.failures++
      }
      if (outcome === 'succeeded') {
        counters.entries.delete(attempt.pairKey)
        const until = Math.max(known.entries.get(attempt.knownKey) ?? 0, now + policy.knownMs)
        known.restart(attempt.knownKey, until)
      }
    },
    async deleteExpired(now, limit) {
      const removed = counters.deleteExpired(now, limit)
      return removed + known.deleteExpired(now, limit - removed)
    },
  }
}
