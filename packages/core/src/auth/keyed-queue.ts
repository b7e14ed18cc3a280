/**
 * Runs work one at a time per key, in arrival order. `run` answers null, without running the
 * work, when `maxWaiting` calls for that key are already waiting behind the one running.
 */
export function createKeyedQueue(maxWaiting: number) {
  const lanes = new Map<string, { tail: Promise<void>; waiting: number }>()

  return async function run<T>(key: string, work: () => Promise<T>): Promise<T | null> {
    const lane = lanes.get(key)
    if (lane !== undefined && lane.waiting >= maxWaiting) return null
    const previous = lane?.tail
    let release!: () => void
    const done = new Promise<void>((resolve) => {
      release = resolve
    })
    const tail = (previous ?? Promise.resolve()).then(() => done)
    const current = lane ?? { tail, waiting: 0 }
    current.tail = tail
    lanes.set(key, current)
    if (previous !== undefined) {
      current.waiting++
      await previous
      current.waiting--
    }
    try {
      return await work()
    } finally {
      release()
      // The last in line removes the lane, so idle keys cost nothing.
      if (current.tail === tail) lanes.delete(key)
    }
  }
}
