// How long the trail keeps events and how many: flowadmin's own apart from each reporter's, so
// that no report, however many, deletes one of flowadmin's own events.
import type { TrailStore } from '../ports/trail.js'

/** How long events of one source are kept and how many at most; null: no such bound. */
export interface TrailBounds {
  maxAgeMs: number | null
  maxEvents: number | null
}

/** The bounds of flowadmin's own events, and those of each reporter's, each reporter apart. */
export interface TrailRetention {
  own: TrailBounds
  reported: TrailBounds
}

const DAY_MS = 86_400_000

/** 90 days; 10 million of flowadmin's own events, a million of each reporter's. */
export const DEFAULT_TRAIL_RETENTION: TrailRetention = {
  own: { maxAgeMs: 90 * DAY_MS, maxEvents: 10_000_000 },
  reported: { maxAgeMs: 90 * DAY_MS, maxEvents: 1_000_000 },
}

/** How much one sweep does: batches of `batchSize`, at most `maxBatches` of each kind and source. */
export interface SweepLimits {
  batchSize?: number
  maxBatches?: number
}

/**
 * Applies `retention` at `now` to flowadmin's own events, then to each reporter's: events
 * received before the age bound go, then the first received beyond the count. Returns how many
 * events were deleted.
 */
export async function sweepTrail(
  store: TrailStore,
  retention: TrailRetention,
  now: number,
  { batchSize = 5000, maxBatches = 20 }: SweepLimits = {},
): Promise<number> {
  let deleted = 0
  const drain = async (step: () => Promise<number>) => {
    for (let i = 0; i < maxBatches; i++) {
      const removed = await step()
      deleted += removed
      if (removed < batchSize) break
    }
  }
  const sweep = async (reporter: string | null, { maxAgeMs, maxEvents }: TrailBounds) => {
    if (maxAgeMs !== null) await drain(() => store.deleteBefore(reporter, now - maxAgeMs, batchSize))
    if (maxEvents !== null) await drain(() => store.deleteBeyond(reporter, maxEvents, batchSize))
  }
  await sweep(null, retention.own)
  for (const reporter of await store.reporters()) await sweep(reporter, retention.reported)
  return deleted
}
