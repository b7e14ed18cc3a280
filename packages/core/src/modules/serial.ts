/**
 * Runs tasks one after another per key, in the order they were handed in: a task starts once
 * every earlier task of its key has settled. Keys are independent of each other.
 */
export function createSerialQueue() {
  const tails = new Map<string, Promise<unknown>>()
  return {
    run<T>(key: string, task: () => Promise<T>): Promise<T> {
      const previous = tails.get(key) ?? Promise.resolve()
      const result = previous.then(task, task)
      const tail = result.then(
        () => undefined,
        () => undefined,
      )
      tails.set(key, tail)
      // The last task of a key drops its entry, so idle keys cost nothing.
      void tail.then(() => {
        if (tails.get(key) === tail) tails.delete(key)
      })
      return result
    },
  }
}
