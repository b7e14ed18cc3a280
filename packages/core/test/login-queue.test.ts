import { DEFAULT_LOGIN_QUEUE } from '@flowadmin/core'
import { describe, expect, it } from 'vitest'
import { createLoginQueue } from '../src/auth/login-queue.js'

/** Work that ends when the test says so, recording when it started. */
function heldWork(started: string[]) {
  const releases: Array<() => void> = []
  return {
    work: (name: string) => () => {
      started.push(name)
      return new Promise<string>((resolve) => releases.push(() => resolve(name)))
    },
    releaseOne: async () => {
      releases.shift()?.()
      await new Promise((resolve) => setTimeout(resolve, 0))
    },
  }
}

describe('the login queue', () => {
  it('runs at most `concurrency` at once, refuses at once when a lane is full, and serves the known lane first', async () => {
    const gate = createLoginQueue({ concurrency: 2, maxWaiting: 2, maxWaitingKnown: 1, retryAfter: 2 })
    const started: string[] = []
    const { work, releaseOne } = heldWork(started)
    const runs = ['g1', 'g2', 'g3', 'g4'].map((name) => gate.run('general', work(name)))
    expect(gate.run('general', work('g5'))).toBeNull()
    const known = gate.run('known', work('k1'))
    expect(gate.run('known', work('k2'))).toBeNull()
    await new Promise((resolve) => setTimeout(resolve, 0))
    expect(started).toEqual(['g1', 'g2'])
    expect(gate.load()).toEqual({ running: 2, known: 1, general: 2 })
    await releaseOne()
    // The known attempt, though it came last, goes before the waiting general ones.
    expect(started).toEqual(['g1', 'g2', 'k1'])
    for (let i = 0; i < 5; i++) await releaseOne()
    expect(started).toEqual(['g1', 'g2', 'k1', 'g3', 'g4'])
    expect(await Promise.all([...runs, known])).toEqual(['g1', 'g2', 'g3', 'g4', 'k1'])
    expect(gate.load()).toEqual({ running: 0, known: 0, general: 0 })
  })

  it('frees its slot when the work fails', async () => {
    const gate = createLoginQueue({ ...DEFAULT_LOGIN_QUEUE, concurrency: 1, maxWaiting: 0 })
    await expect(gate.run('general', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom')
    expect(await gate.run('general', async () => 'next')).toBe('next')
  })

  it.each([{ concurrency: 0 }, { maxWaiting: -1 }, { maxWaitingKnown: 1.5 }, { retryAfter: 0 }])(
    'refuses %o',
    (bad) => {
      expect(() => createLoginQueue({ ...DEFAULT_LOGIN_QUEUE, ...bad })).toThrow(RangeError)
    },
  )
})

describe('resizing the verifier queue', () => {
  it('applies new bounds to the next attempts, keeps the waiting ones, and refuses a bad bound', async () => {
    const gate = createLoginQueue({ concurrency: 1, maxWaiting: 1, maxWaitingKnown: 0, retryAfter: 1 })
    const started: string[] = []
    const { work, releaseOne } = heldWork(started)
    const runs = [gate.run('general', work('g1')), gate.run('general', work('g2'))]
    expect(gate.run('general', work('g3'))).toBeNull()
    expect(gate.run('known', work('k1'))).toBeNull()
    gate.resize({ maxWaiting: 2, maxWaitingKnown: 1 })
    runs.push(gate.run('general', work('g3')), gate.run('known', work('k1')))
    expect(gate.run('general', work('g4'))).toBeNull()
    expect(gate.load()).toEqual({ running: 1, known: 1, general: 2 })
    // Shrinking keeps who waits, and refuses newcomers until the lane is below its bound.
    gate.resize({ maxWaiting: 0 })
    expect(gate.run('general', work('g5'))).toBeNull()
    expect(gate.load()).toEqual({ running: 1, known: 1, general: 2 })
    expect(() => gate.resize({ maxWaiting: -1 })).toThrow(RangeError)
    expect(() => gate.resize({ maxWaitingKnown: 0.5 })).toThrow(RangeError)
    await new Promise((resolve) => setTimeout(resolve, 0))
    expect(started).toEqual(['g1'])
    for (let i = 0; i < 4; i++) await releaseOne()
    expect(started).toEqual(['g1', 'k1', 'g2', 'g3'])
    expect(await Promise.all(runs)).toEqual(['g1', 'g2', 'g3', 'k1'])
  })
})
