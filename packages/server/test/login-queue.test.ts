import type { PasswordVerifier } from '@flowadmin/core'
import { describe, expect, it } from 'vitest'
import { createLoginQueue, type LoginQueueBounds } from '../src/login-queue.js'

/** A verifier that takes about `ms` per verification. */
/** A verifier that takes at least `ms` on the clock the queue measures with (a timer may fire early). */
const slowVerifier = (ms: number): PasswordVerifier => ({
  dummyHash: 'dummy',
  async verify(hash, password) {
    const until = performance.now() + ms
    while (performance.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, Math.max(1, until - performance.now())))
    }
    return hash === password
  },
})

describe('the login queue bounds', () => {
  it('start provisional (10 verifications/s per hashing thread, two seconds of them), then follow the measured rate', async () => {
    const { queue, measuring } = createLoginQueue({}, 2, true)
    expect(queue).toEqual({
      concurrency: 2,
      maxWaiting: 40,
      maxWaitingKnown: 40,
      retryAfter: 2,
      measuredRate: null,
    })
    const applied: LoginQueueBounds[] = []
    const verifier = measuring(slowVerifier(50), (bounds) => applied.push(bounds))
    expect(verifier.dummyHash).toBe('dummy')
    expect(await verifier.verify('a', 'a')).toBe(true)
    expect(await verifier.verify('a', 'b')).toBe(false)
    // At least 50 ms a verification: at most 40 per second on two slots, 80 attempts in two seconds.
    const rate = queue.measuredRate as number
    expect(rate).toBeGreaterThan(2 / 0.5)
    expect(rate).toBeLessThanOrEqual(2 / 0.05)
    expect(queue.maxWaiting).toBe(Math.round(rate * 2))
    expect(queue.maxWaitingKnown).toBe(queue.maxWaiting)
    expect(applied.at(-1)).toEqual({ maxWaiting: queue.maxWaiting, maxWaitingKnown: queue.maxWaiting })
  })

  it('never go below the concurrency, and a failing verification still counts', async () => {
    const { queue, measuring } = createLoginQueue({}, 3, true)
    const verifier = measuring(
      {
        dummyHash: 'd',
        verify: () => new Promise((_, reject) => setTimeout(() => reject(new Error('x')), 1200)),
      },
      () => {},
    )
    await expect(verifier.verify('h', 'p')).rejects.toThrow('x')
    expect(queue.measuredRate).toBeLessThan(3)
    expect(queue.maxWaiting).toBe(Math.max(3, Math.round((queue.measuredRate as number) * 2)))
  })

  it('keep a configured bound, derive the other, and measure nothing when both are set or auth is off', async () => {
    const one = createLoginQueue({ maxWaiting: 5 }, 2, true)
    const applied: LoginQueueBounds[] = []
    await one.measuring(slowVerifier(5), (bounds) => applied.push(bounds)).verify('a', 'a')
    expect(one.queue.maxWaiting).toBe(5)
    expect(one.queue.maxWaitingKnown).toBe(Math.max(2, Math.round((one.queue.measuredRate as number) * 2)))
    expect(applied).toEqual([{ maxWaiting: 5, maxWaitingKnown: one.queue.maxWaitingKnown }])

    const verifier = slowVerifier(1)
    expect(
      createLoginQueue({ maxWaiting: 5, maxWaitingKnown: 6 }, 2, true).measuring(verifier, () => {}),
    ).toBe(verifier)
    expect(createLoginQueue({}, 2, false).measuring(verifier, () => {})).toBe(verifier)
  })
})
