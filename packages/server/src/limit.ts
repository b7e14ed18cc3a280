/**
 * Runs at most `max` tasks at once, the others in arrival order. `waiting` is how many wait for
 * their turn now.
 */
export function createLimit(max: number) {
  let running = 0
  const waiting: Array<() => void> = []
  const limit = async <T>(task: () => Promise<T>): Promise<T> => {
    if (running >= max) await new Promise<void>((resolve) => waiting.push(resolve))
    else running++
    try {
      return await task()
    } finally {
      const next = waiting.shift()
      if (next) next()
      else running--
    }
  }
  return Object.defineProperty(limit, 'waiting', { get: () => waiting.length }) as typeof limit & {
    readonly waiting: number
  }
}
