import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createPlainHasher, holdVerifications } from './doubles.js'
import { waitFor } from './waiting.js'

beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

describe('waitFor', () => {
  it('resolves once the condition holds', async () => {
    let ready = false
    const waiting = waitFor(() => ready, 'ready')
    await vi.advanceTimersByTimeAsync(10)
    ready = true
    await vi.advanceTimersByTimeAsync(10)
    await expect(waiting).resolves.toBeUndefined()
  })

  it('fails at its deadline, saying what it waited for and what it saw', async () => {
    let seen = 0
    const waiting = waitFor(
      () => seen >= 7,
      () => `7 shed logins (saw ${seen})`,
      { timeoutMs: 1000 },
    )
    const failed = expect(waiting).rejects.toThrow('Waited 1000 ms for 7 shed logins (saw 2)')
    seen = 2
    await vi.advanceTimersByTimeAsync(1000)
    await failed
  })
})

describe('holdVerifications', () => {
  it('started resolves once a verification has begun', async () => {
    const hasher = createPlainHasher()
    const hold = holdVerifications(hasher)
    const checking = hasher.verify(hasher.hash('pw'), 'pw')
    await expect(hold.started).resolves.toBeUndefined()
    hold.restore()
    expect(await checking).toBe(true)
  })

  it('started fails at its deadline when no verification begins, saying so', async () => {
    const hold = holdVerifications(createPlainHasher(), { timeoutMs: 1000 })
    const failed = expect(hold.started).rejects.toThrow('Waited 1000 ms for a held verification to begin')
    await vi.advanceTimersByTimeAsync(1000)
    await failed
    hold.restore()
  })
})
