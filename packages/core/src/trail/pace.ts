// How fast a reporter may add events to the trail: an allowance kept in the store, so that every
// flowadmin process sharing it counts the same events, and a note in this process of the
// refusals it has seen, so that a reporter told to wait is refused before its report is read.
import type { TrailPace } from '../ports/trail.js'

/** Events one reporter may add per minute unless told otherwise. */
export const DEFAULT_REPORTED_PER_MINUTE = 6000

/** A reporter may send up to a minute's worth of events at once. */
const BURST_MS = 60_000

/** The pace of reporters at `eventsPerMinute` each (a whole number from 1). */
export function createReporterPace(eventsPerMinute: number) {
  if (!Number.isSafeInteger(eventsPerMinute) || eventsPerMinute < 1) {
    throw new RangeError('reportedPerMinute must be a whole number from 1')
  }
  const msPerEvent = BURST_MS / eventsPerMinute
  /** When each reporter refused here may report again; forgotten once that time has come. */
  const refusedUntil = new Map<string, number>()
  return {
    /**
     * What `count` events cost. A batch larger than a minute's worth costs a minute's: it waits
     * for a whole allowance rather than forever.
     */
    of: (count: number): TrailPace => ({ costMs: Math.min(count * msPerEvent, BURST_MS), burstMs: BURST_MS }),
    /** Whole seconds `reporter` must still wait at `now` by a refusal seen here; null: none known. */
    waitOf(reporter: string, now: number): number | null {
      const until = refusedUntil.get(reporter)
      if (until === undefined) return null
      if (until <= now) {
        refusedUntil.delete(reporter)
        return null
      }
      return secondsUntil(until, now)
    },
    /** Notes that the store refused `reporter` until `retryAt`; returns the whole seconds to wait. */
    refused(reporter: string, retryAt: number, now: number): number {
      refusedUntil.set(reporter, retryAt)
      return secondsUntil(retryAt, now)
    },
  }
}

const secondsUntil = (at: number, now: number) => Math.max(1, Math.ceil((at - now) / 1000))

export type ReporterPace = ReturnType<typeof createReporterPace>
