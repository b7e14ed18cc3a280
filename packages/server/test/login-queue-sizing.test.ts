import type { LoginQueueBounds, PasswordVerifier } from '@flowadmin/core'
import { createFixedClock, type FixedClock } from '@flowadmin/testkit'
import { describe, expect, it } from 'vitest'
import { sizeLoginQueue } from '../src/compose/login-queue-sizing.js'

/**
 * A verifier that takes `ms` on the queue's clock: the clock moves on while the check is under
 * way (after the queue has started timing it), so the measured rate is exact and nothing waits.
 */
const slowVerifier = (clock: FixedClock, ms: number): PasswordVerifier => ({
  dummyHash: 'dummy',
  async verify(hash, password) {
    await Promise.resolve()
    clock.advance(ms)
    return hash === password
  },
})

describe('the login queue bounds', () => {
  it('start provisional (10 verifications/s per hashing thread, two seconds of them), then follow the measured rate', async () => {
    const clock = createFixedClock()
    const { queue, measuring } = sizeLoginQueue({}, 2, true, { clock })
    expect(queue).toEqual({
      concurrency: 2,
      maxWaiting: 40,
      maxWaitingKnown: 40,
      retryAfter: 2,
      measuredRate: null,
    })
    const applied: LoginQueueBounds[] = []
    const verifier = measuring(slowVerifier(clock, 50), (bounds) => applied.push(bounds))
    expect(verifier.dummyHash).toBe('dummy')
    expect(await verifier.verify('a', 'a')).toBe(true)
    expect(await verifier.verify('a', 'b')).toBe(false)
    // 50 ms a verification: 40 per second on two slots, 80 attempts in two seconds.
    expect(queue.measuredRate).toBe(40)
    expect(queue.maxWaiting).toBe(80)
    expect(queue.maxWaitingKnown).toBe(80)
    // Applied once, when the first measurement changed the bounds; the second changed nothing.
    expect(applied).toEqual([{ maxWaiting: 80, maxWaitingKnown: 80 }])
  })

  it('follow later verifications through a running mean (the newest weighs a fifth)', async () => {
    const clock = createFixedClock()
    const { queue, measuring } = sizeLoginQueue({}, 2, true, { clock })
    const durations = [100, 600]
    const verifier = measuring(
      {
        dummyHash: 'd',
        async verify() {
          await Promise.resolve()
          clock.advance(durations.shift() as number)
          return true
        },
      },
      () => {},
    )
    await verifier.verify('a', 'a')
    expect(queue.measuredRate).toBe(20)
    await verifier.verify('a', 'a')
    // Mean 0.1 s + (0.6 s - 0.1 s) / 5 = 0.2 s: 10 per second on two slots, 20 in two seconds.
    expect(queue.measuredRate).toBeCloseTo(10, 10)
    expect(queue.maxWaiting).toBe(20)
  })

  it('never go below the concurrency, and a failing verification still counts', async () => {
    const clock = createFixedClock()
    const { queue, measuring } = sizeLoginQueue({}, 3, true, { clock })
    const verifier = measuring(
      {
        dummyHash: 'd',
        async verify() {
          await Promise.resolve()
          clock.advance(4000)
          throw new Error('x')
        },
      },
      () => {},
    )
    await expect(verifier.verify('h', 'p')).rejects.toThrow('x')
    // Three slots over 4 s: 0.75 per second, 1.5 (rounded to 2) in two seconds, raised to 3.
    expect(queue.measuredRate).toBe(0.75)
    expect(queue.maxWaiting).toBe(3)
    expect(queue.maxWaitingKnown).toBe(3)
  })

  it('keep a configured bound, derive the other, and measure nothing when both are set or auth is off', async () => {
    const clock = createFixedClock()
    const one = sizeLoginQueue({ maxWaiting: 5 }, 2, true, { clock })
    const applied: LoginQueueBounds[] = []
    await one.measuring(slowVerifier(clock, 5), (bounds) => applied.push(bounds)).verify('a', 'a')
    // 5 ms a verification on two slots: 400 per second, 800 in two seconds.
    expect(one.queue.measuredRate).toBe(400)
    expect(one.queue.maxWaiting).toBe(5)
    expect(one.queue.maxWaitingKnown).toBe(800)
    expect(applied).toEqual([{ maxWaiting: 5, maxWaitingKnown: 800 }])

    const verifier = slowVerifier(clock, 1)
    expect(
      sizeLoginQueue({ maxWaiting: 5, maxWaitingKnown: 6 }, 2, true, { clock }).measuring(verifier, () => {}),
    ).toBe(verifier)
    expect(sizeLoginQueue({}, 2, false, { clock }).measuring(verifier, () => {})).toBe(verifier)
  })

  it('time verifications on the monotonic clock when given none', async () => {
    const { queue, measuring } = sizeLoginQueue({}, 1, true)
    await measuring({ dummyHash: 'd', verify: async () => true }, () => {}).verify('a', 'a')
    expect(queue.measuredRate).toBeGreaterThan(0)
  })
})
