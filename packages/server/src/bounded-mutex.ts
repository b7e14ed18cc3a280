/**
 * One task at a time; a task that cannot start within `waitMs` is answered `busy` without running.
 */
export function createBoundedMutex(waitMs: number) {
  let tail: Promise<void> = Promise.resolve()
  return {
    async run<T>(task: () => Promise<T>): Promise<T | { ok: false; error: { code: 'busy' } }> {
      const previous = tail
      let release = () => {}
      tail = new Promise<void>((resolve) => {
        release = resolve
      })
      let timer: NodeJS.Timeout | undefined
      const turn = await Promise.race([
        previous.then(() => true),
        new Promise<false>((resolve) => {
          timer = setTimeout(() => resolve(false), waitMs)
        }),
      ])
      clearTimeout(timer)
      if (!turn) {
        // Give up the place in line once the task before it is done.
        previous.then(release)
        return { ok: false as const, error: { code: 'busy' as const } }
      }
      try {
        return await task()
      } finally {
        release()
      }
    },
  }
}
