import { describe, expect, it } from 'vitest'
import { createKeyedQueue, createTaskQueue } from '../src/concurrency.js'

/** Tasks that end when the test says so, recording the order they started in. */
function heldTasks() {
  const started: string[] = []
  const ends = new Map<string, (value: string) => void>()
  return {
    started,
    task: (name: string) => () => {
      started.push(name)
      return new Promise<string>((resolve) => ends.set(name, resolve))
    },
    /** Ends a running task and lets the queue hand its slot on. */
    end: async (name: string) => {
      ends.get(name)?.(name)
      for (let i = 0; i < 5; i++) await Promise.resolve()
    },
  }
}

describe('the task queue', () => {
  it('runs at most `concurrency` tasks, the others in arrival order, and serves the lanes in the order listed', async () => {
    const queue = createTaskQueue({ concurrency: 2, lanes: { known: 1, general: 2 } })
    const { started, task, end } = heldTasks()
    const runs = ['g1', 'g2', 'g3', 'g4'].map((name) => queue.run(task(name), { lane: 'general' }))
    expect(queue.run(task('g5'), { lane: 'general' })).toBeNull()
    const known = queue.run(task('k1'), { lane: 'known' })
    expect(queue.run(task('k2'), { lane: 'known' })).toBeNull()
    expect(started).toEqual(['g1', 'g2'])
    expect(queue.load()).toEqual({ running: 2, waiting: { known: 1, general: 2 } })
    await end('g1')
    // The known lane is listed first: its task goes before the general ones that came earlier.
    expect(started).toEqual(['g1', 'g2', 'k1'])
    for (const name of ['g2', 'k1', 'g3', 'g4']) await end(name)
    expect(started).toEqual(['g1', 'g2', 'k1', 'g3', 'g4'])
    expect(await Promise.all([...runs, known])).toEqual(['g1', 'g2', 'g3', 'g4', 'k1'])
    expect(queue.load()).toEqual({ running: 0, waiting: { known: 0, general: 0 } })
  })

  it('hands the slot on when a task throws or rejects', async () => {
    const queue = createTaskQueue()
    const thrown = queue.run(() => {
      throw new Error('sync')
    })
    const rejected = queue.run(() => Promise.reject(new Error('async')))
    const after = queue.run(async () => 'ran')
    await expect(thrown).rejects.toThrow('sync')
    await expect(rejected).rejects.toThrow('async')
    expect(await after).toBe('ran')
    expect(queue.load().running).toBe(0)
  })

  it('gives up waiting when the signal aborts: the task never runs and its place is freed', async () => {
    const queue = createTaskQueue({ concurrency: 1, lanes: { tasks: 1 } })
    const { started, task, end } = heldTasks()
    const first = queue.run(task('first'))
    const controller = new AbortController()
    const waiting = queue.run(task('waiting'), { signal: controller.signal })
    controller.abort(new Error('waited too long'))
    await expect(waiting).rejects.toThrow('waited too long')
    expect(queue.load().waiting.tasks).toBe(0)
    // Its place in the lane is free again, and an aborted signal given up front never waits.
    const next = queue.run(task('next'))
    expect(next).not.toBeNull()
    queue.resize({ tasks: 2 })
    await expect(queue.run(task('never'), { signal: AbortSignal.abort(new Error('late')) })).rejects.toThrow(
      'late',
    )
    await end('first')
    await end('next')
    expect(await Promise.all([first, next])).toEqual(['first', 'next'])
    expect(started).toEqual(['first', 'next'])
  })

  it('takes new lane bounds, keeping the tasks already waiting, and refuses bad numbers', async () => {
    const queue = createTaskQueue({ concurrency: 1, lanes: { tasks: 2 } })
    const { task, end } = heldTasks()
    const runs = [queue.run(task('a')), queue.run(task('b')), queue.run(task('c'))]
    queue.resize({ tasks: 0 })
    expect(queue.run(task('d'))).toBeNull()
    expect(queue.load().waiting.tasks).toBe(2)
    for (const name of ['a', 'b', 'c']) await end(name)
    expect(await Promise.all(runs)).toEqual(['a', 'b', 'c'])
    expect(() => queue.resize({ tasks: -1 })).toThrow(RangeError)
    expect(() => queue.resize({ tasks: 1.5 })).toThrow(RangeError)
    expect(() => createTaskQueue({ concurrency: 0, lanes: { tasks: 1 } })).toThrow(RangeError)
  })
})

describe('the keyed queue', () => {
  it('runs one task at a time per key, in order, keys independent, and forgets idle keys', async () => {
    const queue = createKeyedQueue()
    const { started, task, end } = heldTasks()
    const a1 = queue.run('a', task('a1'))
    const a2 = queue.run('a', task('a2'))
    const b1 = queue.run('b', task('b1'))
    await Promise.resolve()
    expect(started).toEqual(['a1', 'b1'])
    await end('a1')
    expect(started).toEqual(['a1', 'b1', 'a2'])
    await end('a2')
    await end('b1')
    expect(await Promise.all([a1, a2, b1])).toEqual(['a1', 'a2', 'b1'])
  })

  it('starts the next task of a key after a failed one', async () => {
    const queue = createKeyedQueue()
    const failed = queue.run('a', () => Promise.reject(new Error('no')))
    const next = queue.run('a', async () => 'yes')
    await expect(failed).rejects.toThrow('no')
    expect(await next).toBe('yes')
  })
})
