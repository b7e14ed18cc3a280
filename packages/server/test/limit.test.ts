import { describe, expect, it } from 'vitest'
import { createLimit } from '../src/limit.js'

/** A task that runs until released, recording when it starts. */
function gate(started: string[], name: string) {
  let release!: () => void
  const done = new Promise<void>((resolve) => {
    release = resolve
  })
  return {
    release: () => release(),
    task: async () => {
      started.push(name)
      await done
      return name
    },
  }
}

describe('createLimit', () => {
  it('runs at most max tasks at once, then the waiting ones in arrival order', async () => {
    const limit = createLimit(2)
    const started: string[] = []
    const a = gate(started, 'a')
    const b = gate(started, 'b')
    const c = gate(started, 'c')
    const d = gate(started, 'd')
    const results = [a, b, c, d].map((g) => limit(g.task))
    await Promise.resolve()
    expect(started).toEqual(['a', 'b'])
    b.release()
    await results[1]
    await new Promise((resolve) => setImmediate(resolve))
    expect(started).toEqual(['a', 'b', 'c'])
    a.release()
    c.release()
    d.release()
    expect(await Promise.all(results)).toEqual(['a', 'b', 'c', 'd'])
    expect(started).toEqual(['a', 'b', 'c', 'd'])
  })

  it('frees its place when a task fails', async () => {
    const limit = createLimit(1)
    await expect(limit(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom')
    expect(await limit(async () => 'next')).toBe('next')
  })
})
