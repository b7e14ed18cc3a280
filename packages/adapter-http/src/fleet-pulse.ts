// Waiting for the next of something that happens (an instance's report saved, here or at another
// flowadmin sharing the store), for the answers of fleet changes that wait for the outcomes.

export interface FleetPulse {
  /** How many times `notify` was called: read before looking, then pass it to `next`. */
  generation(): number
  /**
   * Resolves `true` at the next `notify` after generation `since` (at once when there was one
   * since), `false` after `ms`, when `signal` aborts, or once closed. Never rejects.
   */
  next(since: number, ms: number, signal?: AbortSignal): Promise<boolean>
  /** It happened: every wait ends. */
  notify(): void
  /** Ends every wait; later waits end at once. */
  close(): void
}

export function createFleetPulse(): FleetPulse {
  const waiters = new Set<(news: boolean) => void>()
  let generation = 0
  let closed = false
  return {
    generation: () => generation,
    next(since, ms, signal) {
      return new Promise<boolean>((resolve) => {
        if (since !== generation) return resolve(true)
        if (closed || signal?.aborted) return resolve(false)
        const done = (news: boolean) => {
          clearTimeout(timeout)
          signal?.removeEventListener('abort', abort)
          waiters.delete(done)
          resolve(news)
        }
        const abort = () => done(false)
        const timeout = setTimeout(abort, ms)
        signal?.addEventListener('abort', abort, { once: true })
        waiters.add(done)
      })
    },
    notify() {
      generation++
      for (const done of [...waiters]) done(true)
    },
    close() {
      closed = true
      for (const done of [...waiters]) done(false)
    },
  }
}
