import { DEFAULT_VERIFIER_GATE } from '@flowadmin/core'
import { holdVerifications } from '@flowadmin/testkit'
import { describe, expect, it } from 'vitest'
import { createVerifierGate } from '../src/auth/verifier-gate.js'
import { ADDRESS, adminLogin, createTestCore, OTHER_ADDRESS } from './fixture.js'

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

describe('the verifier gate', () => {
  it('runs at most `concurrency` at once, refuses at once when a lane is full, and serves the known lane first', async () => {
    const gate = createVerifierGate({ concurrency: 2, maxWaiting: 2, maxWaitingKnown: 1, retryAfter: 2 })
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
    const gate = createVerifierGate({ ...DEFAULT_VERIFIER_GATE, concurrency: 1, maxWaiting: 0 })
    await expect(gate.run('general', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom')
    expect(await gate.run('general', async () => 'next')).toBe('next')
  })

  it.each([{ concurrency: 0 }, { maxWaiting: -1 }, { maxWaitingKnown: 1.5 }, { retryAfter: 0 }])(
    'refuses %o',
    (bad) => {
      expect(() => createVerifierGate({ ...DEFAULT_VERIFIER_GATE, ...bad })).toThrow(RangeError)
    },
  )
})

describe('logins beyond the verifier queue', () => {
  it('are answered temporarily_unavailable at once, recorded as shed, and not counted as failures', async () => {
    const { core, hasher, events } = createTestCore({
      loginQueue: { concurrency: 1, maxWaiting: 2, maxWaitingKnown: 2, retryAfter: 3 },
    })
    // The real user logged in before from her usual address.
    expect((await core.login(adminLogin(), OTHER_ADDRESS)).ok).toBe(true)

    const hold = holdVerifications(hasher)
    const flood = Array.from({ length: 10 }, (_, i) =>
      core.login(adminLogin({ password: 'guess' }), `10.0.0.${i}`),
    )
    // One verifies, two wait: seven are shed before any verification ends.
    await hold.started
    while (events.ofType('login.shed').length < 7) await new Promise((resolve) => setTimeout(resolve, 1))
    expect(events.ofType('login.shed')[0]).toMatchObject({ username: 'admin', retryAfter: 3 })
    // Her attempt from her known address takes the known lane, which the flood did not fill.
    const hers = core.login(adminLogin(), OTHER_ADDRESS)
    hold.restore()
    const results = await Promise.all(flood)
    expect((await hers).ok).toBe(true)
    const codes = results.map((result) => (result.ok ? 'ok' : result.error.code))
    expect(codes.filter((code) => code === 'temporarily_unavailable')).toHaveLength(7)
    expect(codes.filter((code) => code === 'invalid_credentials')).toHaveLength(3)
    for (const result of results) {
      if (!result.ok && result.error.code === 'temporarily_unavailable') {
        expect(result.error).toEqual({ code: 'temporarily_unavailable', retryAfter: 3 })
      }
    }
    // A shed attempt left nothing behind: its address may still try five guesses.
    const shedAddress = events.ofType('login.shed')[0]?.address as string
    for (let i = 0; i < 5; i++) {
      expect(await core.login(adminLogin({ password: 'guess' }), shedAddress)).toMatchObject({
        error: { code: 'invalid_credentials' },
      })
    }
    expect(await core.login(adminLogin(), shedAddress)).toMatchObject({ error: { code: 'throttled' } })
    expect(await core.login(adminLogin(), ADDRESS)).toMatchObject({ ok: true })
  })
})

describe('resizing the verifier queue', () => {
  it('applies new bounds to the next attempts, keeps the waiting ones, and refuses a bad bound', async () => {
    const gate = createVerifierGate({ concurrency: 1, maxWaiting: 1, maxWaitingKnown: 0, retryAfter: 1 })
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

  it('is what core.resizeLoginQueue does: a full lane takes more once resized', async () => {
    const { core, hasher } = createTestCore({
      loginQueue: { concurrency: 1, maxWaiting: 0, maxWaitingKnown: 0, retryAfter: 1 },
    })
    const hold = holdVerifications(hasher)
    const first = core.login(adminLogin({ password: 'guess' }), '10.0.0.1')
    await hold.started
    expect(await core.login(adminLogin({ password: 'guess' }), '10.0.0.2')).toMatchObject({
      error: { code: 'temporarily_unavailable' },
    })
    core.resizeLoginQueue({ maxWaiting: 1 })
    const second = core.login(adminLogin({ password: 'guess' }), '10.0.0.3')
    hold.restore()
    expect(await first).toMatchObject({ error: { code: 'invalid_credentials' } })
    expect(await second).toMatchObject({ error: { code: 'invalid_credentials' } })
    expect(() => core.resizeLoginQueue({ maxWaiting: -1 })).toThrow(RangeError)
  })
})
