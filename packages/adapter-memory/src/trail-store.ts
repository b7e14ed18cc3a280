import type { TrailEntry, TrailEvent, TrailFilter, TrailStore } from '@flowadmin/core'

function matches(event: TrailEvent, filter: TrailFilter): boolean {
  const { source } = filter
  if (source !== undefined) {
    if (event.server !== source.server) return false
    if (source.instance !== undefined && event.instance !== source.instance) return false
  }
  if (filter.actor !== undefined && event.actor !== filter.actor) return false
  if (filter.eventPrefix !== undefined && !event.event.startsWith(filter.eventPrefix)) return false
  if (filter.outcome !== undefined && event.outcome !== filter.outcome) return false
  if (filter.since !== undefined && event.time < filter.since) return false
  if (filter.until !== undefined && event.time >= filter.until) return false
  if (filter.receivedSince !== undefined && event.received < filter.receivedSince) return false
  if (filter.receivedUntil !== undefined && event.received >= filter.receivedUntil) return false
  return true
}

/** A deep copy of JSON-like data: what a caller does with it changes nothing kept. */
const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T
const copyOf = (event: TrailEvent): TrailEvent => clone(event)

/** Received first, first; ties: taken first. */
const byReceipt = (a: TrailEvent, b: TrailEvent) => a.received - b.received || a.seq - b.seq

/** The trail in an array, kept newest first (the last taken first). */
export function createTrailStore(): TrailStore {
  let events: TrailEvent[] = []
  let seq = 0
  /** Each reporter whose events were appended, with the time up to which its allowance is spent. */
  const spent = new Map<string, number>()

  const add = (entries: readonly TrailEntry[]) => {
    const added = entries.map((entry) => ({ ...clone(entry), seq: ++seq })).reverse()
    events = [...added, ...events]
    for (const entry of entries) {
      if (entry.reporter !== null && !spent.has(entry.reporter)) spent.set(entry.reporter, 0)
    }
  }
  /** Deletes the first received `count` events of `reporter` among those `doomed` picks. */
  const remove = (reporter: string | null, count: number, doomed: (event: TrailEvent) => boolean) => {
    if (count <= 0) return 0
    const gone = new Set(
      events
        .filter((event) => event.reporter === reporter && doomed(event))
        .sort(byReceipt)
        .slice(0, count)
        .map((event) => event.seq),
    )
    events = events.filter((event) => !gone.has(event.seq))
    return gone.size
  }

  return {
    async append(entries) {
      add(entries)
    },
    async appendReport(reporter, entries, pace, now) {
      const next = Math.max(spent.get(reporter) ?? now, now) + pace.costMs
      if (next - pace.burstMs > now) return { appended: false, retryAt: next - pace.burstMs }
      add(entries)
      spent.set(reporter, next)
      return { appended: true }
    },
    async reporters() {
      return [...spent.keys()]
    },
    async search(filter, limit, after) {
      const found: TrailEvent[] = []
      for (const event of events) {
        if (found.length >= limit) break
        if (after !== null && event.seq >= after.seq) continue
        if (matches(event, filter)) found.push(copyOf(event))
      }
      return found
    },
    async deleteBefore(reporter, before, limit) {
      return remove(reporter, limit, (event) => event.received < before)
    },
    async deleteBeyond(reporter, keep, limit) {
      const count = events.filter((event) => event.reporter === reporter).length
      return remove(reporter, Math.min(count - keep, limit), () => true)
    },
  }
}
