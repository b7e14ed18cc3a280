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
  wait(known: string, ms: number, signal?: WaitEnd, since?: number): Promise<boolean>
  /**
   * Something may have changed: check now. Given the version it changed to (a notice from the
   * store), nothing is checked when that is the version the last check read.
   */
  notify(version?: string): void
  /**
   * The version the last check read, when it began at most `intervalMs` ago and no change was told
   * of since: a poll of that version may be held on it without reading it again, since the next
   * check, or the notice of a change, ends its wait as it ends the wait of one that read it just
   * before the change. Null otherwise.
   */
  current(): string | null
  /** How many polls are waiting now. */
  waiting(): number
  /** Ends every wait and stops checking; later waits end at once. */
  close(): void
}

/**
 * What ends a wait early: an AbortSignal, or anything that tells of its end the same way (a held
 * poll, see fleet-held.ts). One listener at a time is enough here.
 */
export interface WaitEnd {
  readonly aborted: boolean
  addEventListener(type: 'abort', listener: { handleEvent(): void }): void
  removeEventListener(type: 'abort', listener: { handleEvent(): void }): void
}

/**
 * One waiting poll. Its own timer and end listener call it back (`handleEvent`, a timer argument),
 * so a wait allocates this object and its promise, and no closures: a thousand polls held make a
 * wait every few milliseconds.
 */
class Waiter {
  timeout: ReturnType<typeof setTimeout> | undefined
  constructor(
    readonly known: string,
    private readonly waiters: Set<Waiter>,
    private readonly resolve: (over: boolean) => void,
    private readonly signal: WaitEnd | undefined,
    private readonly emptied: () => void,
  ) {}
  /** Its end (the signal's abort event). */
  handleEvent() {
    this.done(true)
  }
  done(over: boolean) {
    if (!this.waiters.delete(this)) return
    clearTimeout(this.timeout)
    this.signal?.removeEventListener('abort', this)
    if (this.waiters.size === 0) this.emptied()
    this.resolve(over)
  }
}

const expire = (waiter: Waiter) => waiter.done(true)

const ENDED = Promise.resolve(true)
const MAY_HAVE_CHANGED = Promise.resolve(false)

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
  /** The version the last check read, when that read began and at which generation. */
  let seen: string | null = null
  let seenAt = 0
  let seenGeneration = -1

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
        const at = performance.now()
        const told = generation
        try {
          current = await version()
        } catch {
          break
        }
        seen = current
        seenAt = at
        seenGeneration = told
        for (const waiter of [...waiters]) if (waiter.known !== current) waiter.done(false)
      } while (again)
    } finally {
      checking = false
    }
  }

  return {
    generation: () => generation,
    wait(known, ms, signal, since) {
      if (closed || signal?.aborted) return ENDED
      if (since !== undefined && since !== generation) return MAY_HAVE_CHANGED
      return new Promise<boolean>((resolve) => {
        const waiter = new Waiter(known, waiters, resolve, signal, stopTimer)
        waiter.timeout = setTimeout(expire, ms, waiter)
        signal?.addEventListener('abort', waiter)
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
    // Only while the checks run (polls wait): a version read before they stopped may be older.
    current: () =>
      timer !== null &&
      seen !== null &&
      seenGeneration === generation &&
      performance.now() - seenAt <= intervalMs
        ? seen
        : null,
    waiting: () => waiters.size,
    close() {
      closed = true
      for (const waiter of [...waiters]) waiter.done(true)
      stopTimer()
    },
  }
}
