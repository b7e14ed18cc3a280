/**
 * The queue in front of password verification, the scarce resource of a login. It runs at most
 * `concurrency` verifications at once; attempts beyond wait in one of two lanes, each bounded,
 * and one that finds its lane full is refused at once rather than left to wait. When a
 * verification ends, the known-client lane goes first: attempts for a username from an address
 * where it logged in recently, which a flood of guesses cannot join. Correctness never depends on
 * this queue (the throttle store decides who may try); it decides who waits, and how long.
 */
export interface VerifierGateOptions {
  /** Verifications at once. Default 4; the server uses the number of cores. */
  concurrency: number
  /** Attempts that may wait in the general lane; more are refused. Default 64. */
  maxWaiting: number
  /** Attempts that may wait in the known-client lane; more are refused. Default 64. */
  maxWaitingKnown: number
  /** Seconds a refused attempt is told to wait (Retry-After). Default 2. */
  retryAfter: number
}

export const DEFAULT_VERIFIER_GATE: VerifierGateOptions = {
  concurrency: 4,
  maxWaiting: 64,
  maxWaitingKnown: 64,
  retryAfter: 2,
}

export type Lane = 'known' | 'general'

const LEASTS = { concurrency: 1, maxWaiting: 0, maxWaitingKnown: 0, retryAfter: 1 } as const

function check(options: Partial<VerifierGateOptions>): void {
  for (const [name, least] of Object.entries(LEASTS)) {
    if (!(name in options)) continue
    const value = options[name as keyof VerifierGateOptions]
    if (!Number.isSafeInteger(value) || (value as number) < least) {
      throw new RangeError(`loginQueue ${name} must be a whole number from ${least}`)
    }
  }
}

export function createVerifierGate(options: VerifierGateOptions) {
  check(options)
  const waiting: Record<Lane, Array<() => void>> = { known: [], general: [] }
  const bounds: Record<Lane, number> = { known: options.maxWaitingKnown, general: options.maxWaiting }
  let running = 0

  const next = () => {
    const start = waiting.known.shift() ?? waiting.general.shift()
    if (start) start()
    else running--
  }

  return {
    /** Seconds a refused attempt is told to wait. */
    retryAfter: options.retryAfter,

    /**
     * Runs `work` when a verification slot is free, or answers null at once (running nothing)
     * when it would have to wait and its lane is full.
     */
    run<T>(lane: Lane, work: () => Promise<T>): Promise<T> | null {
      let turn: Promise<void>
      if (running < options.concurrency) {
        running++
        turn = Promise.resolve()
      } else if (waiting[lane].length >= bounds[lane]) {
        return null
      } else {
        turn = new Promise<void>((resolve) => waiting[lane].push(resolve))
      }
      // A finished verification hands its slot on (next), so `running` counts slots in use.
      return turn.then(work).finally(next)
    },

    /**
     * Sets new bounds for the lanes (e.g. once the verify rate is measured). Attempts already
     * waiting keep their place; new ones are refused while a lane holds its bound or more.
     */
    resize(next: Partial<Pick<VerifierGateOptions, 'maxWaiting' | 'maxWaitingKnown'>>): void {
      const given = Object.fromEntries(Object.entries(next).filter(([, value]) => value !== undefined))
      check(given)
      if (next.maxWaiting !== undefined) bounds.general = next.maxWaiting
      if (next.maxWaitingKnown !== undefined) bounds.known = next.maxWaitingKnown
    },

    /** Verifications running and attempts waiting, for tests and metrics. */
    load(): { running: number; known: number; general: number } {
      return { running, known: waiting.known.length, general: waiting.general.length }
    },
  }
}

export type VerifierGate = ReturnType<typeof createVerifierGate>
