import type { Clock, LoginQueueBounds, LoginQueueOptions, PasswordVerifier } from '@flowadmin/core'

/** The longest a login should wait for its password check; the queue bounds derive from it. */
export const LOGIN_WAIT_TARGET_SECONDS = 2

/**
 * Verifications per second per hashing thread assumed until one is measured: a slow core at the
 * OWASP parameters, so the first bounds err on the side of shedding early.
 */
export const PROVISIONAL_RATE_PER_THREAD = 10

/** Weight of the newest verification in the running mean of their durations. */
const SMOOTHING = 0.2

/** The login queue's settings the core is given, and the rate its bounds derive from. */
export interface LoginQueueSizing extends LoginQueueOptions {
  /**
   * Verifications per second, from the durations of the verifications made so far; null before
   * the first, and when both bounds are configured.
   */
  measuredRate: number | null
}

export interface SizingOptions {
  /** Times the verifications; the real, monotonic clock unless a test drives its own. */
  clock?: Clock
}

/**
 * The real clock for timing: milliseconds since the epoch, as the core's Clock says, but read from
 * the monotonic performance clock so a wall-clock step cannot make a verification look negative.
 */
const monotonicClock: Clock = { now: () => performance.timeOrigin + performance.now() }

/**
 * The login queue's bounds: as configured, or as many attempts as the verify rate allows in
 * LOGIN_WAIT_TARGET_SECONDS, so the last one in line waits about that long. The rate is measured
 * on the verifications themselves (`measuring`), so it costs nothing at start and follows the
 * machine's load; until the first, the bounds assume PROVISIONAL_RATE_PER_THREAD.
 */
export function sizeLoginQueue(
  configured: LoginQueueBounds,
  concurrency: number,
  enabled: boolean,
  { clock = monotonicClock }: SizingOptions = {},
) {
  const derive = (rate: number) => Math.max(concurrency, Math.round(rate * LOGIN_WAIT_TARGET_SECONDS))
  const provisional = derive(PROVISIONAL_RATE_PER_THREAD * concurrency)
  const queue: LoginQueueSizing = {
    concurrency,
    maxWaiting: configured.maxWaiting ?? provisional,
    maxWaitingKnown: configured.maxWaitingKnown ?? provisional,
    retryAfter: LOGIN_WAIT_TARGET_SECONDS,
    measuredRate: null,
  }
  const measured =
    enabled && (configured.maxWaiting === undefined || configured.maxWaitingKnown === undefined)
  return {
    queue,
    /**
     * The same verifier, timing each verification; when the derived bounds change, `apply` gets
     * them (the core's `resizeLoginQueue`). Without derived bounds, the verifier as it is.
     */
    measuring(verifier: PasswordVerifier, apply: (bounds: LoginQueueBounds) => void): PasswordVerifier {
      if (!measured) return verifier
      let meanSeconds: number | null = null
      const record = (seconds: number) => {
        meanSeconds = meanSeconds === null ? seconds : meanSeconds + (seconds - meanSeconds) * SMOOTHING
        const rate = concurrency / Math.max(meanSeconds, 0.0001)
        queue.measuredRate = rate
        const next = {
          maxWaiting: configured.maxWaiting ?? derive(rate),
          maxWaitingKnown: configured.maxWaitingKnown ?? derive(rate),
        }
        if (next.maxWaiting === queue.maxWaiting && next.maxWaitingKnown === queue.maxWaitingKnown) return
        Object.assign(queue, next)
        apply(next)
      }
      return {
        dummyHash: verifier.dummyHash,
        ...(verifier.useHashes && { useHashes: (hashes) => verifier.useHashes?.(hashes) }),
        async verify(hash, password) {
          const started = clock.now()
          try {
            return await verifier.verify(hash, password)
          } finally {
            record((clock.now() - started) / 1000)
          }
        },
      }
    },
  }
}
