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

  it('keeps at most the default 100 000 counters through a spray of 200 000 usernames', async () => {
    const stores = createMemoryStores()
    expect(DEFAULT_MAX_THROTTLE_ENTRIES).toBe(100_000)
    // The keys the core makes: one per username and address, one per address. Each address
    // stays under the per-address limit by moving on after 20 usernames.
    const rules = policy(WINDOW, 5, 20)
    const addressOf = (i: number) => `198.18.${(i / 20 / 256) | 0}.${((i / 20) | 0) % 256}`
    const now = (i: number) => T0 + i
    for (let i = 0; i < 200_000; i++)
      await fail(stores.throttle, attempt(`user-${i}`, addressOf(i)), now(i), rules)
    const last = 199_999
    // The newest counters are intact (the last address holds its 20 failures); the oldest were dropped.
    expect(await stores.throttle.begin(attempt('someone', addressOf(last)), rules, now(last))).toEqual(
      closedUntil(now(199_980) + WINDOW),
    )
    expect(await countAll(stores)).toBe(100_000)
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

  it('then drops the oldest live counters, keeping the ones being counted', async () => {
    const stores = createMemoryStores({ maxThrottleEntries: 4 })
    const throttle = stores.throttle
    const rules = policy(WINDOW, 2, 2)
    await fail(throttle, attempt('old', 'A'), T0, rules)
    await fail(throttle, attempt('new', 'B'), T0 + 1, rules)
    // Counting on existing keys takes no room.
    await fail(throttle, attempt('old', 'A'), T0 + 2, rules)
    await fail(throttle, attempt('newest', 'C'), T0 + 3, rules)
    await fail(throttle, attempt('newest', 'C'), T0 + 4, rules)
    expect(await throttle.begin(attempt('newest', 'C'), rules, T0 + 4)).toEqual(closedUntil(T0 + 3 + WINDOW))
    // old and A went first, though they were counted last but one.
    expect(await throttle.begin(attempt('old', 'A'), rules, T0 + 4)).toMatchObject({ outcome: 'proceed' })
  })

  it('moves a counter whose window restarted to the young end', async () => {
    const stores = createMemoryStores({ maxThrottleEntries: 4 })
    const throttle = stores.throttle
    await fail(throttle, attempt('a', 'A'), T0, policy(100))
    await fail(throttle, attempt('b', 'B'), T0 + 50, policy(1_000))
    // a's window ended; this failure starts a new one, younger than b's.
    await fail(throttle, attempt('a', 'A'), T0 + 200, policy(1_000))
    await fail(throttle, attempt('c', 'C'), T0 + 300, policy(1_000))
    expect(await throttle.begin(attempt('a', 'A'), policy(1_000), T0 + 300)).toEqual(closedUntil(T0 + 1_200))
    expect(await throttle.begin(attempt('c', 'C'), policy(1_000), T0 + 300)).toEqual(closedUntil(T0 + 1_300))
    expect(await throttle.begin(attempt('b', 'B'), policy(1_000), T0 + 300)).toMatchObject({
      outcome: 'proceed',
    })
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
