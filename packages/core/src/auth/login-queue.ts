import { createTaskQueue } from '../concurrency.js'

/**
 * The login queue: password verification is the scarce resource of a login (and of a resource
 * server's first call), so at most `concurrency` run at once and the others wait in one of two
 * lanes, each bounded; an attempt that finds its lane full is refused at once rather than left to
 * wait. When a verification ends, the known-client lane goes first: attempts for a username from
 * an address where it logged in recently, which a flood of guesses cannot join. Correctness never
 * depends on this queue (the throttle store decides who may try); it decides who waits, and how
 * long. Settings: `adminAuth.loginQueue`.
 */
export interface LoginQueueOptions {
  /** Verifications at once. Default 4; the server uses one fewer than the cores. */
  concurrency: number
  /** Attempts that may wait in the general lane; more are refused. Default 64. */
  maxWaiting: number
  /** Attempts that may wait in the known-client lane; more are refused. Default 64. */
  maxWaitingKnown: number
  /** Seconds a refused attempt is told to wait (Retry-After). Default 2. */
  retryAfter: number
}

export const DEFAULT_LOGIN_QUEUE: LoginQueueOptions = {
  concurrency: 4,
  maxWaiting: 64,
  maxWaitingKnown: 64,
  retryAfter: 2,
}

export type Lane = 'known' | 'general'

export type LoginQueueBounds = Partial<Pick<LoginQueueOptions, 'maxWaiting' | 'maxWaitingKnown'>>

/** Verifications running, and attempts waiting in each lane. */
export interface LoginQueueLoad {
  running: number
  known: number
  general: number
}

const LEASTS = { concurrency: 1, maxWaiting: 0, maxWaitingKnown: 0, retryAfter: 1 } as const

function check(options: Partial<LoginQueueOptions>): void {
  for (const [name, least] of Object.entries(LEASTS)) {
    if (!(name in options)) continue
    const value = options[name as keyof LoginQueueOptions]
    if (!Number.isSafeInteger(value) || (value as number) < least) {
      throw new RangeError(`loginQueue ${name} must be a whole number from ${least}`)
    }
  }
}

export function createLoginQueue(options: LoginQueueOptions) {
  check(options)
  // The known lane is listed first: it is served first.
  const queue = createTaskQueue<Lane>({
    concurrency: options.concurrency,
    lanes: { known: options.maxWaitingKnown, general: options.maxWaiting },
  })
  return {
    /** Seconds a refused attempt is told to wait. */
    retryAfter: options.retryAfter,

    /**
     * Runs `work` when a verification slot is free, or answers null at once (running nothing)
     * when it would have to wait and its lane is full.
     */
    run<T>(lane: Lane, work: () => Promise<T>): Promise<T> | null {
      return queue.run(work, { lane })
    },

    /**
     * Sets new bounds for the lanes (e.g. once the verify rate is measured). Attempts already
     * waiting keep their place; new ones are refused while a lane holds its bound or more.
     */
    resize(bounds: LoginQueueBounds): void {
      const given = Object.fromEntries(Object.entries(bounds).filter(([, value]) => value !== undefined))
      check(given)
      queue.resize({ general: bounds.maxWaiting, known: bounds.maxWaitingKnown })
    },

    /** Verifications running and attempts waiting, for tests and metrics. */
    load(): LoginQueueLoad {
      const { running, waiting } = queue.load()
      return { running, ...waiting }
    },
  }
}

export type LoginQueue = ReturnType<typeof createLoginQueue>
