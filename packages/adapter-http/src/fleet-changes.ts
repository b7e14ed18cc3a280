// Waiting for the fleet's desired state to change, for the instances' long polls: one check for
// every waiting instance, at once when told of a change here, else every `intervalMs` (a change
// made by another flowadmin instance on the same store).

export interface FleetChanges {
  /**
   * Resolves once the desired state's version is no longer `known`, after `ms`, or when `signal`
   * aborts, whichever comes first. Never rejects.
   */
  wait(known: string, ms: number, signal?: AbortSignal): Promise<void>
  /** Something may have changed: check now. */
  notify(): void
  /** How many polls are waiting now. */
  waiting(): number
  /** Ends every wait and stops checking; later waits end at once. */
  close(): void
}

interface Waiter {
  known: string
  done(): void
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
        for (const waiter of [...waiters]) if (waiter.known !== current) waiter.done()
      } while (again)
    } finally {
      checking = false
    }
  }

  return {
    wait(known, ms, signal) {
      return new Promise<void>((resolve) => {
        if (closed || signal?.aborted) return resolve()
        const waiter: Waiter = {
          known,
          done: () => {
            clearTimeout(timeout)
            signal?.removeEventListener('abort', waiter.done)
            waiters.delete(waiter)
            if (waiters.size === 0) stopTimer()
            resolve()
          },
        }
        const timeout = setTimeout(waiter.done, ms)
        signal?.addEventListener('abort', waiter.done, { once: true })
        waiters.add(waiter)
        if (timer === null) {
          timer = setInterval(() => void check(), intervalMs)
          ;(timer as { unref?: () => void }).unref?.()
        }
      })
    },
    notify() {
      void check()
    },
    waiting: () => waiters.size,
    close() {
      closed = true
      for (const waiter of [...waiters]) waiter.done()
      stopTimer()
    },
  }
}
