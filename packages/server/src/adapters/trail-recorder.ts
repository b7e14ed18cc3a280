import {
  type EventSink,
  isStoreUnavailable,
  messageOf,
  type TrailEntry,
  type TrailStore,
  trailEntryOf,
} from '@flowadmin/core'
import type { Log } from '../log.js'

export interface TrailRecorder extends EventSink {
  /** Appends what is waiting (one try) and stops taking events. */
  close(): Promise<void>
}

export interface TrailRecorderOptions {
  /** How long an event waits to join others in one append. Default 50 ms. */
  delayMs?: number
  /** Most events waiting; past it the oldest are dropped and counted. Default 100 000. */
  maxPending?: number
  /** Most events in one append. Default 500. */
  batchSize?: number
  /** The wait after a failed append, doubled each time up to 30 s. Default 1 s. */
  retryMs?: number
}

/**
 * flowadmin's own events into the trail: each one waits a moment to be appended with others,
 * off the request that caused it. While the store cannot take them (an outage) they wait in
 * bounded memory and are tried again with backoff; when the waiting list is full the oldest are
 * dropped, and the next append that works reports how many. The JSON-lines audit log, written
 * synchronously beside this, keeps every event regardless.
 */
export function createTrailRecorder(
  store: TrailStore,
  log: Log,
  options: TrailRecorderOptions = {},
): TrailRecorder {
  const { delayMs = 50, maxPending = 100_000, batchSize = 500, retryMs = 1000 } = options
  let pending: TrailEntry[] = []
  let dropped = 0
  /** Every event ever dropped from the front, to tell how much of a batch in flight was dropped. */
  let shifted = 0
  let failing = false
  let backoff = retryMs
  let timer: ReturnType<typeof setTimeout> | null = null
  let running: Promise<void> | null = null
  let open = true

  const schedule = (ms: number) => {
    if (timer !== null || !open) return
    timer = setTimeout(() => {
      timer = null
      running ??= flush().finally(() => {
        running = null
      })
    }, ms)
    timer.unref()
  }

  /**
   * Appends the entries of a batch one at a time, dropping (and logging) each the store refuses;
   * stops at an outage. Returns how many were dealt with, and the outage when one stopped it.
   */
  async function appendOneByOne(batch: readonly TrailEntry[]): Promise<{ done: number; outage?: unknown }> {
    for (const [index, entry] of batch.entries()) {
      try {
        await store.append([entry])
      } catch (error) {
        if (isStoreUnavailable(error)) return { done: index, outage: error }
        log('error', 'an audit event cannot be added to the trail; it is dropped', {
          reason: messageOf(error),
          event: entry.event,
          time: entry.time,
        })
      }
    }
    return { done: batch.length }
  }

  /** The store is away: the events wait, and are tried again after the backoff. */
  function wait(error: unknown) {
    if (!failing) {
      log('warning', 'audit events cannot be added to the trail now; they wait and are tried again', {
        reason: messageOf(error),
        waiting: pending.length,
      })
    }
    failing = true
    schedule(backoff)
    backoff = Math.min(backoff * 2, 30_000)
  }

  async function flush(): Promise<void> {
    while (pending.length > 0) {
      const batch = pending.slice(0, batchSize)
      const before = shifted
      try {
        await store.append(batch)
      } catch (error) {
        if (isStoreUnavailable(error)) return wait(error)
        // Not an outage: some entry the store refuses. Each is tried alone; those it refuses are
        // dropped and logged, so one bad event never holds back the rest.
        const { done, outage } = await appendOneByOne(batch)
        pending.splice(0, Math.max(0, done - (shifted - before)))
        if (outage !== undefined) return wait(outage)
        continue
      }
      // The batch is at the front, less what was dropped from it meanwhile.
      pending.splice(0, Math.max(0, batch.length - (shifted - before)))
      if (failing || dropped > 0) {
        log('info', 'audit events are added to the trail again', { dropped })
        failing = false
        dropped = 0
      }
      backoff = retryMs
    }
  }

  return {
    emit(event) {
      if (!open) return
      pending.push(trailEntryOf(event))
      if (pending.length > maxPending) {
        const excess = pending.length - maxPending
        pending = pending.slice(excess)
        dropped += excess
        shifted += excess
      }
      if (!failing) schedule(delayMs)
    },
    async close() {
      open = false
      if (timer !== null) clearTimeout(timer)
      timer = null
      await running
      failing = false
      await flush().catch(() => {})
    },
  }
}
