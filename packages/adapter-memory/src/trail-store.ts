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
  return true
}

/** A deep copy of JSON-like data: what a caller does with it changes nothing kept. */
const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T
const copyOf = (event: TrailEvent): TrailEvent => clone(event)

/** The trail in an array, kept newest first (the last taken first). */
export function createTrailStore(): TrailStore {
  let events: TrailEvent[] = []
  let seq = 0
  return {
    async append(entries: readonly TrailEntry[]) {
      const added = entries.map((entry) => ({ ...clone(entry), seq: ++seq })).reverse()
      events = [...added, ...events]
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
    async deleteBefore(before, limit) {
      // Taken first, first, as the SQL stores take them.
      const doomed = new Set(
        events
          .filter((event) => event.time < before)
          .slice(-limit)
          .map((event) => event.seq),
      )
      events = events.filter((event) => !doomed.has(event.seq))
      return doomed.size
    },
    async deleteBeyond(keep, limit) {
      const count = Math.min(Math.max(events.length - keep, 0), limit)
      events = events.slice(0, events.length - count)
      return count
    },
  }
}
