// Waiting for the fleet's desired state to change, for the instances' long polls: one check for
// every waiting instance, at once when told of a change here, else every `intervalMs` (a change
// made by another flowadmin instance on the same store).

export interface FleetChanges {
  /** How many times `notify` was called: read before reading the version a wait then names. */
  generation(): number
  /**
   * Resolves once the desired state's version is no longer `known`, after `ms`, or when `signal`
   * aborts, whichever comes first; at once when `notify` was called since generation `since`
   * (a change made between reading `known` and waiting). Resolves `true` when the wait is over
   * for good (`ms` passed, `signal` aborted, or closed), `false` when something may have changed.
   * Never rejects.
   */
  wait(known: string, ms: number, signal?: AbortSignal, since?: number): Promise<boolean>
  /**
   * Something may have changed: check now. Given the version it changed to (a notice from the
   * store), nothing is checked when that is the version the last check read.
   */
  notify(version?: string): void
  /** How many polls are waiting now. */
  waiting(): number
  /** Ends every wait and stops checking; later waits end at once. */
  close(): void
}

interface Waiter {
  known: string
  done(over: boolean): void
}

/** Default milliseconds between checks while polls wait. */
export const FLEET_CHECK_MS = 1000

/** `version()` reads the desired state's version; a failure to read it is retried at the next check. */
export function createFleetChanges(
  version: () => Promise<string>,
  intervalMs = FLEET_CHECK_MS,
): FleetChanges {
  const waiters = new Set<Waiter>()
  let timer: ReturnType<typeof setInterval> | null = null
  let checking = false
  let again = false
  let closed = false
  let generation = 0
  /** The version the last check read. */
  let seen: string | null = null

  const stopTimer = () => {
    if (timer !== null) clearInterval(timer)
    timer = null
  }
  async function check(): Promise<void> {
    if (checking) {
      again = true
      return
    }
    checking = true
    try {
      do {
        again = false
        if (waiters.size === 0) break
        let current: string
        try {
          current = await version()
        } catch {
          break
        }
        seen = current
        for (const waiter of [...waiters]) if (waiter.known !== current) waiter.done(false)
      } while (again)
    } finally {
      checking = false
    }
  }

  return {
    generation: () => generation,
    wait(known, ms, signal, since) {
      return new Promise<boolean>((resolve) => {
        if (closed || signal?.aborted) return resolve(true)
        if (since !== undefined && since !== generation) return resolve(false)
        const abort = () => waiter.done(true)
        const waiter: Waiter = {
          known,
          done: (over) => {
            clearTimeout(timeout)
            signal?.removeEventListener('abort', abort)
            waiters.delete(waiter)
            if (waiters.size === 0) stopTimer()
            resolve(over)
          },
        }
        const timeout = setTimeout(abort, ms)
        signal?.addEventListener('abort', abort, { once: true })
        waiters.add(waiter)
        if (timer === null) {
          timer = setInterval(() => void check(), intervalMs)
          ;(timer as { unref?: () => void }).unref?.()
        }
      })
    },
    notify(changed) {
      if (changed !== undefined && changed === seen) return
      generation++
      void check()
    },
    waiting: () => waiters.size,
    close() {
      closed = true
      for (const waiter of [...waiters]) waiter.done(true)
      stopTimer()
    },
  }
}
