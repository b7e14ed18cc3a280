// Throttle keys stay short whatever the username, so a spray of huge usernames costs the store
// (memory or disk) no more per counter than short ones.
import { createHash } from 'node:crypto'
import { createMemoryStores } from '@flowadmin/adapter-memory'
import { describe, expect, it } from 'vitest'
import { MAX_THROTTLE_KEY_LENGTH, withBoundedKeys } from '../src/throttle-keys.js'

const T0 = Date.UTC(2026, 0, 1)
const WINDOW = 60_000

describe('bounded throttle keys', () => {
  it('stores short keys as they are and long ones as their SHA-256', async () => {
    const raw = createMemoryStores().throttle
    const bounded = withBoundedKeys(raw)
    const short = `user 203.0.113.7 ${'a'.repeat(MAX_THROTTLE_KEY_LENGTH - 17)}`
    const long = `user 203.0.113.7 ${'a'.repeat(60_000)}`
    expect(short).toHaveLength(MAX_THROTTLE_KEY_LENGTH)

    await bounded.hit([short, long], T0, WINDOW)
    const digest = `sha256 ${createHash('sha256').update(long).digest('hex')}`
    expect(await raw.peek([short, long, digest], T0)).toEqual([
      { count: 1, resetAt: T0 + WINDOW },
      null,
      { count: 1, resetAt: T0 + WINDOW },
    ])
    expect(await bounded.peek([long], T0)).toEqual([{ count: 1, resetAt: T0 + WINDOW }])
    await bounded.clear(long)
    expect(await raw.peek([digest, short], T0)).toEqual([null, { count: 1, resetAt: T0 + WINDOW }])
  })

  it('keeps long keys that share a long prefix apart', async () => {
    const bounded = withBoundedKeys(createMemoryStores().throttle)
    const prefix = `user 203.0.113.7 ${'x'.repeat(1_000)}`
    await bounded.hit([`${prefix}1`], T0, WINDOW)
    await bounded.hit([`${prefix}1`], T0, WINDOW)
    await bounded.hit([`${prefix}2`], T0, WINDOW)
    expect((await bounded.peek([`${prefix}1`, `${prefix}2`], T0)).map((counter) => counter?.count)).toEqual([
      2, 1,
    ])
  })

  it('sweeps ended windows through to the store', async () => {
    const bounded = withBoundedKeys(createMemoryStores().throttle)
    await bounded.hit(['addr 203.0.113.7', `user 203.0.113.7 ${'y'.repeat(500)}`], T0, WINDOW)
    expect(await bounded.deleteExpired(T0 + WINDOW, 10)).toBe(2)
  })
})
