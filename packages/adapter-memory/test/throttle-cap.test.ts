import { createMemoryStores, DEFAULT_MAX_THROTTLE_ENTRIES } from '@flowadmin/adapter-memory'
import { describeStoreContract } from '@flowadmin/testkit'
import { describe, expect, it } from 'vitest'

const T0 = Date.UTC(2026, 0, 1)
const WINDOW = 900_000

/** How many counters the store holds: deleting everything reports it (the store is spent after). */
const countAll = (stores: ReturnType<typeof createMemoryStores>) =>
  stores.throttle.deleteExpired(Number.MAX_SAFE_INTEGER, Number.POSITIVE_INFINITY)

// The cap must not change what the port promises.
describeStoreContract('memory, throttle capped at 64', async () =>
  createMemoryStores({ maxThrottleEntries: 64 }),
)

describe('the throttle entry cap', () => {
  it('keeps at most the default 100 000 counters through a spray of 200 000 usernames', async () => {
    const stores = createMemoryStores()
    expect(DEFAULT_MAX_THROTTLE_ENTRIES).toBe(100_000)
    // The keys the core makes: one per username and address, one per address. Each address
    // stays under the per-address limit by moving on after 20 usernames.
    const addressOf = (i: number) => `198.18.${(i / 20 / 256) | 0}.${((i / 20) | 0) % 256}`
    const now = (i: number) => T0 + i
    for (let i = 0; i < 200_000; i++) {
      const address = addressOf(i)
      await stores.throttle.hit([`user ${address} user-${i}`, `addr ${address}`], now(i), WINDOW)
    }
    const last = 199_999
    // The newest counters are intact; the oldest were dropped.
    expect(
      await stores.throttle.peek(
        [`user ${addressOf(last)} user-${last}`, `addr ${addressOf(last)}`, `user ${addressOf(0)} user-0`],
        now(last),
      ),
    ).toEqual([
      { count: 1, resetAt: now(last) + WINDOW },
      { count: 20, resetAt: now(199_980) + WINDOW },
      null,
    ])
    expect(await countAll(stores)).toBe(100_000)
  })

  it('drops counters whose window ended before live ones', async () => {
    const stores = createMemoryStores({ maxThrottleEntries: 4 })
    const throttle = stores.throttle
    await throttle.hit(['a', 'b'], T0, 1_000)
    await throttle.hit(['c', 'd'], T0 + 500, 1_000)
    // a and b ended at T0 + 1000: they make room, c and d stay.
    await throttle.hit(['e', 'f'], T0 + 1_200, 1_000)
    expect(await throttle.peek(['c', 'd', 'e', 'f'], T0 + 1_200)).toEqual([
      { count: 1, resetAt: T0 + 1_500 },
      { count: 1, resetAt: T0 + 1_500 },
      { count: 1, resetAt: T0 + 2_200 },
      { count: 1, resetAt: T0 + 2_200 },
    ])
    expect(await countAll(stores)).toBe(4)
  })

  it('then drops the oldest live counters, keeping the ones being counted', async () => {
    const stores = createMemoryStores({ maxThrottleEntries: 3 })
    const throttle = stores.throttle
    await throttle.hit(['old'], T0, WINDOW)
    await throttle.hit(['middle'], T0 + 1, WINDOW)
    await throttle.hit(['new'], T0 + 2, WINDOW)
    // Counting on an existing key takes no room.
    expect(await throttle.hit(['old'], T0 + 3, WINDOW)).toEqual([{ count: 2, resetAt: T0 + WINDOW }])
    await throttle.hit(['newest'], T0 + 4, WINDOW)
    expect(await throttle.peek(['old', 'middle', 'new', 'newest'], T0 + 4)).toEqual([
      null,
      { count: 1, resetAt: T0 + 1 + WINDOW },
      { count: 1, resetAt: T0 + 2 + WINDOW },
      { count: 1, resetAt: T0 + 4 + WINDOW },
    ])
  })

  it('moves a counter whose window restarted to the young end', async () => {
    const stores = createMemoryStores({ maxThrottleEntries: 2 })
    const throttle = stores.throttle
    await throttle.hit(['a'], T0, 100)
    await throttle.hit(['b'], T0 + 50, 1_000)
    // a's window ended; this hit starts a new one, younger than b's.
    await throttle.hit(['a'], T0 + 200, 1_000)
    await throttle.hit(['c'], T0 + 300, 1_000)
    expect(await throttle.peek(['a', 'b', 'c'], T0 + 300)).toEqual([
      { count: 1, resetAt: T0 + 1_200 },
      null,
      { count: 1, resetAt: T0 + 1_300 },
    ])
  })

  it.each([0, -1, 1.5, Number.NaN])('refuses maxThrottleEntries %s', (max) => {
    expect(() => createMemoryStores({ maxThrottleEntries: max })).toThrow(RangeError)
  })
})
