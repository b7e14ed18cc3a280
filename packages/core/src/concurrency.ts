/**
 * The one concurrency primitive of flowadmin: a queue that runs at most `concurrency` tasks at
 * once and keeps the others waiting, in arrival order, in lanes of bounded length. When a task
 * ends, the first lane (in the order the options list them) that has a task waiting goes next.
 *
 * Everything that limits work is built on it: the login queue (two lanes, a known client's first),
 * the password verifier's thread budget, one install at a time, and one change of a module at a
 * time (`createKeyedQueue`). Web-standard only (an AbortSignal to give up waiting), so the core stays pure.
 */
export interface TaskQueueOptions<Lane extends string> {
  /** Tasks running at once; a whole number from 1. */
  concurrency: number
  /**
   * How many tasks may wait in each lane (a whole number from 0, or Infinity); a task that finds
   * its lane full is refused at once. Listed in the order lanes are served.
   */
  lanes: Record<Lane, number>
}

/** The part of the Web platform's AbortSignal a wait listens to (the core has no DOM typings). */
export interface AbortSignalLike {
  readonly aborted: boolean
  readonly reason: unknown
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void
  removeEventListener(type: 'abort', listener: () => void): void
}

export interface RunOptions<Lane extends string> {
  /** The lane to wait in; the first lane of the options when absent. */
  lane?: Lane
  /** Gives up waiting: the task never runs and the promise rejects with the signal's reason. */
  signal?: AbortSignalLike
}

export interface TaskQueue<Lane extends string> {
  /**
   * Runs `task` when a slot is free. Returns null, running nothing, when it would have to wait and
   * its lane is full. A task that started holds its slot until its promise settles.
   */
  run<T>(task: () => Promise<T>, options?: RunOptions<Lane>): Promise<T> | null
  /** New bounds for lanes. Tasks already waiting keep their place; new ones are refused while a lane holds its bound or more. */
  resize(lanes: Partial<Record<Lane, number>>): void
  /** Tasks running and waiting per lane now, for metrics and tests. */
  load(): { running: number; waiting: Record<Lane, number> }
}

const isBound = (value: number) =>
  value === Number.POSITIVE_INFINITY || (Number.isSafeInteger(value) && value >= 0)

/** A queue; without options, one task at a time and any number waiting. */
export function createTaskQueue<Lane extends string = 'tasks'>(
  options?: TaskQueueOptions<Lane>,
): TaskQueue<Lane> {
  options ??= { concurrency: 1, lanes: { tasks: Number.POSITIVE_INFINITY } as Record<Lane, number> }
  if (!Number.isSafeInteger(options.concurrency) || options.concurrency < 1) {
    throw new RangeError('concurrency must be a whole number from 1')
  }
  const order = Object.keys(options.lanes) as Lane[]
  const bounds = { ...options.lanes }
  const waiting = Object.fromEntries(order.map((lane) => [lane, [] as Array<() => void>])) as Record<
    Lane,
    Array<() => void>
  >
  const resize = (next: Partial<Record<Lane, number>>) => {
    for (const [lane, bound] of Object.entries(next) as Array<[Lane, number | undefined]>) {
      if (bound === undefined) continue
      if (!(lane in bounds) || !isBound(bound)) throw new RangeError(`${lane}: must be a whole number from 0`)
      bounds[lane] = bound
    }
  }
  resize(options.lanes)
  let running = 0

  /** A finished task hands its slot to the next waiting one, so `running` counts slots in use. */
  const next = () => {
    for (const lane of order) {
      const start = waiting[lane].shift()
      if (start) return start()
    }
    running--
  }

  return {
    run<T>(
      task: () => Promise<T>,
      { lane = order[0] as Lane, signal }: RunOptions<Lane> = {},
    ): Promise<T> | null {
      if (running < options.concurrency) {
        running++
        return settle(task, next)
      }
      const line = waiting[lane]
      if (line.length >= bounds[lane]) return null
      if (signal?.aborted) return Promise.reject(signal.reason)
      return new Promise<void>((resolve, reject) => {
        const start = () => {
          signal?.removeEventListener('abort', giveUp)
          resolve()
        }
        const giveUp = () => {
          line.splice(line.indexOf(start), 1)
          reject(signal?.reason)
        }
        line.push(start)
        signal?.addEventListener('abort', giveUp, { once: true })
      }).then(() => settle(task, next))
    },
    resize,
    load() {
      const counts = Object.fromEntries(order.map((lane) => [lane, waiting[lane].length]))
      return { running, waiting: counts as Record<Lane, number> }
    },
  }
}

/** Runs `task` in a slot already taken, and gives the slot on however it ends. */
function settle<T>(task: () => Promise<T>, release: () => void): Promise<T> {
  let result: Promise<T>
  try {
    result = task()
  } catch (error) {
    result = Promise.reject(error)
  }
  return result.finally(release)
}

/**
 * One task at a time per key, in the order they were handed in: a task starts once every earlier
 * task of its key has settled. Keys are independent, and an idle key costs nothing.
 */
export function createKeyedQueue() {
  const queues = new Map<string, { queue: TaskQueue<'tasks'>; pending: number }>()
  return {
    run<T>(key: string, task: () => Promise<T>): Promise<T> {
      let entry = queues.get(key)
      if (entry === undefined) {
        entry = { queue: createTaskQueue(), pending: 0 }
        queues.set(key, entry)
      }
      const held = entry
      held.pending++
      // The lane is unbounded, so run never refuses.
      return (held.queue.run(task) as Promise<T>).finally(() => {
        if (--held.pending === 0) queues.delete(key)
      })
    },
  }
}
