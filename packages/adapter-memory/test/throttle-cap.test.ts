import {
  createMemoryStores,
  DEFAULT_MAX_THROTTLE_ENTRIES,
  type MemoryStores,
} from '@flowadmin/adapter-memory'
import type { LoginAttempt, ThrottlePolicy } from '@flowadmin/core'
import { describeStoreContract } from '@flowadmin/testkit'
import { describe, expect, it } from 'vitest'

const T0 = Date.UTC(2026, 0, 1)
const WINDOW = 900_000

/** How many counters the store holds: deleting everything reports it (the store is spent after). */
const countAll = (stores: ReturnType<typeof createMemoryStores>) =>
  stores.throttle.deleteExpired(Number.MAX_SAFE_INTEGER, Number.POSITIVE_INFINITY)

// The cap must not change what the port promises.
let capped: MemoryStores
describeStoreContract('memory, throttle capped at 64', {
  open: async () => {
    capped = createMemoryStores({ maxThrottleEntries: 64 })
    return capped
  },
  connect: async () => ({ ...capped, close: async () => {} }),
})

describe('the throttle entry cap', () => {
  // One failure closes a key, so whether a counter is still held shows in the next decision.
  const policy = (windowMs = WINDOW, pairLimit = 1, addressLimit = 1): ThrottlePolicy => ({
    pairLimit,
    addressLimit,
    windowMs,
    allowance: 1,
    leaseMs: 30_000,
    knownMs: WINDOW,
  })
  const attempt = (pair: string, address: string): LoginAttempt => ({
    pairKey: `user ${address} ${pair}`,
    addressKey: `addr ${address}`,
    knownKey: `known ${address} ${pair}`,
  })
  type Throttle = ReturnType<typeof createMemoryStores>['throttle']
  const fail = async (throttle: Throttle, at: LoginAttempt, now: number, rules = policy()) => {
    // A plain check, not expect: the spray below makes 200 000 of them.
    const decision = await throttle.begin(at, rules, now)
    if (decision.outcome !== 'proceed') throw new Error(`${at.pairKey}: ${decision.outcome}, not proceed`)
    await throttle.finish(at, 'failed', rules, now)
  }
  const closedUntil = (retryAt: number) => ({ outcome: 'throttled', retryAt })

  /** Begins an attempt and, when it may proceed, fails it; the decision either way. */
  const tryFail = async (throttle: Throttle, at: LoginAttempt, now: number, rules = policy()) => {
    const decision = await throttle.begin(at, rules, now)
    if (decision.outcome === 'proceed') await throttle.finish(at, 'failed', rules, now)
    return decision.outcome
  }

  it('keeps at most the default 100 000 counters through a spray of 200 000 usernames, dropping no live one', async () => {
    const stores = createMemoryStores()
    expect(DEFAULT_MAX_THROTTLE_ENTRIES).toBe(100_000)
    // The keys the core makes: one per username and address, one per address. Each address
    // stays under the per-address limit by moving on after 20 usernames.
    const rules = policy(WINDOW, 5, 20)
    const addressOf = (i: number) => `198.18.${(i / 20 / 256) | 0}.${((i / 20) | 0) % 256}`
    const now = (i: number) => T0 + i
    const outcomes = { proceed: 0, busy: 0, throttled: 0 }
    for (let i = 0; i < 200_000; i++)
      outcomes[await tryFail(stores.throttle, attempt(`user-${i}`, addressOf(i)), now(i), rules)]++
    // Once full, the newcomers wait: the oldest counters are intact (the first address holds its
    // 20 failures), and nobody's attempts were forgotten.
    expect(outcomes.busy).toBeGreaterThan(0)
    expect(outcomes.throttled).toBe(0)
    expect(await stores.throttle.begin(attempt('someone', addressOf(0)), rules, now(200_000))).toEqual(
      closedUntil(now(0) + WINDOW),
    )
    expect(await stores.throttle.begin(attempt('someone', addressOf(199_999)), rules, now(200_000))).toEqual({
      outcome: 'busy',
    })
    expect(await countAll(stores)).toBe(100_000)
  })

  it('keeps the counters of a target through a spray of more new keys than it holds', async () => {
    const stores = createMemoryStores({ maxThrottleEntries: 64 })
    const throttle = stores.throttle
    const rules = policy(WINDOW, 5, 20)
    const target = attempt('admin', '192.0.2.1')
    // Four wrong guesses of five on the target's pair, from its address.
    for (let i = 0; i < 4; i++) expect(await tryFail(throttle, target, T0 + i, rules)).toBe('proceed')
    // Failed logins for 1 000 other usernames from 1 000 other addresses, one each.
    const sprayed = new Set<string>()
    for (let i = 0; i < 1_000; i++)
      sprayed.add(
        await tryFail(throttle, attempt(`user-${i}`, `198.18.${i >> 8}.${i & 255}`), T0 + 10 + i, rules),
      )
    // The target's pair still holds its four: one more failure closes it until its window ends.
    expect(await tryFail(throttle, target, T0 + 2_000, rules)).toBe('proceed')
    expect(await throttle.begin(target, rules, T0 + 2_001)).toEqual(closedUntil(T0 + WINDOW))
    // The spray's newcomers waited once the store was full.
    expect(sprayed).toEqual(new Set(['proceed', 'busy']))
    // Once the sprayed windows end, new keys are held again.
    expect(await tryFail(throttle, attempt('late', '203.0.113.9'), T0 + 1_010 + WINDOW, rules)).toBe(
      'proceed',
    )
  })

  it('holds a new key once the attempts of a counter end with nothing recorded', async () => {
    const stores = createMemoryStores({ maxThrottleEntries: 2 })
    const throttle = stores.throttle
    const first = attempt('a', 'A')
    expect(await throttle.begin(first, policy(), T0)).toMatchObject({ outcome: 'proceed' })
    // Both places are taken by counters with an attempt in flight: a newcomer waits.
    expect(await throttle.begin(attempt('b', 'B'), policy(), T0)).toEqual({ outcome: 'busy' })
    // Abandoned, the attempt leaves counters that count nothing: they make room.
    await throttle.finish(first, 'abandoned', policy(), T0)
    expect(await tryFail(throttle, attempt('b', 'B'), T0, policy())).toBe('proceed')
    expect(await throttle.begin(attempt('b', 'B'), policy(), T0)).toEqual(closedUntil(T0 + WINDOW))
  })

  it('never holds more than its cap when the room made is the attempt’s own counter', async () => {
    const stores = createMemoryStores({ maxThrottleEntries: 3 })
    const throttle = stores.throttle
    // A success leaves the address counting nothing, the oldest; then a failure from elsewhere.
    expect(await throttle.begin(attempt('a', 'A'), policy(), T0)).toMatchObject({ outcome: 'proceed' })
    await throttle.finish(attempt('a', 'A'), 'succeeded', policy(), T0)
    expect(await tryFail(throttle, attempt('c', 'C'), T0 + 1, policy())).toBe('proceed')
    // Another user from A needs its pair and A's counter: only two places would be free.
    expect(await throttle.begin(attempt('d', 'A'), policy(), T0 + 2)).toEqual({ outcome: 'busy' })
    expect(await countAll(stores)).toBeLessThanOrEqual(3)
  })

  it('drops counters whose window ended before live ones', async () => {
    const stores = createMemoryStores({ maxThrottleEntries: 4 })
    const throttle = stores.throttle
    const rules = policy(1_000)
    await fail(throttle, attempt('a', 'A'), T0, rules)
    await fail(throttle, attempt('c', 'C'), T0 + 500, rules)
    // a and A ended at T0 + 1000: they make room, c and C stay.
    await fail(throttle, attempt('e', 'E'), T0 + 1_200, rules)
    expect(await throttle.begin(attempt('c', 'C'), rules, T0 + 1_200)).toEqual(closedUntil(T0 + 1_500))
    expect(await throttle.begin(attempt('e', 'E'), rules, T0 + 1_200)).toEqual(closedUntil(T0 + 2_200))
    expect(await countAll(stores)).toBe(4)
  })

  it('then refuses a new key rather than drop a live counter, until a window ends', async () => {
    const stores = createMemoryStores({ maxThrottleEntries: 4 })
    const throttle = stores.throttle
    const rules = policy(WINDOW, 2, 2)
    await fail(throttle, attempt('old', 'A'), T0, rules)
    await fail(throttle, attempt('new', 'B'), T0 + 1, rules)
    // Counting on existing keys takes no room.
    await fail(throttle, attempt('old', 'A'), T0 + 2, rules)
    expect(await throttle.begin(attempt('newest', 'C'), rules, T0 + 3)).toEqual({ outcome: 'busy' })
    expect(await throttle.begin(attempt('old', 'A'), rules, T0 + 3)).toEqual(closedUntil(T0 + WINDOW))
    expect(await throttle.begin(attempt('new', 'B'), rules, T0 + 3)).toMatchObject({ outcome: 'proceed' })
    // old and A's window ends first, and makes room.
    expect(await tryFail(throttle, attempt('newest', 'C'), T0 + WINDOW, rules)).toBe('proceed')
  })

  it('moves a counter whose window restarted to the young end', async () => {
    const stores = createMemoryStores({ maxThrottleEntries: 4 })
    const throttle = stores.throttle
    await fail(throttle, attempt('a', 'A'), T0, policy(100))
    await fail(throttle, attempt('b', 'B'), T0 + 50, policy(1_000))
    // a's window ended; this failure starts a new one, younger than b's.
    await fail(throttle, attempt('a', 'A'), T0 + 200, policy(1_000))
    // b's window ends first: it makes room, and a's stays.
    await fail(throttle, attempt('c', 'C'), T0 + 1_100, policy(1_000))
    expect(await throttle.begin(attempt('a', 'A'), policy(1_000), T0 + 1_100)).toEqual(
      closedUntil(T0 + 1_200),
    )
    expect(await throttle.begin(attempt('c', 'C'), policy(1_000), T0 + 1_100)).toEqual(
      closedUntil(T0 + 2_100),
    )
  })

  it('keeps at most as many known pairs, forgetting the oldest', async () => {
    const stores = createMemoryStores({ maxThrottleEntries: 2 })
    const throttle = stores.throttle
    const login = async (at: LoginAttempt, now: number) => {
      const decision = await throttle.begin(at, policy(), now)
      if (decision.outcome === 'proceed') await throttle.finish(at, 'succeeded', policy(), now)
      return decision
    }
    for (const [i, pair] of ['first', 'second', 'third'].entries()) await login(attempt(pair, 'A'), T0 + i)
    expect(await login(attempt('third', 'A'), T0 + 3)).toEqual({ outcome: 'proceed', known: true })
    expect(await login(attempt('second', 'A'), T0 + 4)).toEqual({ outcome: 'proceed', known: true })
    expect(await login(attempt('first', 'A'), T0 + 5)).toEqual({ outcome: 'proceed', known: false })
  })

  it.each([0, -1, 1.5, Number.NaN])('refuses maxThrottleEntries %s', (max) => {
    expect(() => createMemoryStores({ maxThrottleEntries: max })).toThrow(RangeError)
  })
})
