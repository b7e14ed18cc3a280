import type { TrailEntry, TrailEvent, TrailFilter, TrailPosition, TrailStore } from '@flowadmin/core'

/** Newest first: by time, then by seq. */
const newerFirst = (a: TrailPosition, b: TrailPosition) => b.time - a.time || b.seq - a.seq

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

/** The trail in an array, kept newest first. */
export function createTrailStore(): TrailStore {
  let events: TrailEvent[] = []
  let seq = 0
  return {
    async append(entries: readonly TrailEntry[]) {
      const added = entries.map((entry) => ({ ...clone(entry), seq: ++seq })).sort(newerFirst)
      // A merge of two lists kept newest first: linear, however long the trail.
      const merged: TrailEvent[] = []
      let [i, j] = [0, 0]
      while (i < events.length || j < added.length) {
        const take =
          j >= added.length ||
          (i < events.length && newerFirst(events[i] as TrailEvent, added[j] as TrailEvent) < 0)
        merged.push(take ? (events[i++] as TrailEvent) : (added[j++] as TrailEvent))
      }
      events = merged
    },
    async search(filter, limit, after) {
      const found: TrailEvent[] = []
      for (const event of events) {
        if (found.length >= limit) break
        if (after !== null && newerFirst(event, after) <= 0) continue
        if (matches(event, filter)) found.push(copyOf(event))
      }
      return found
    },
    async deleteBefore(before, limit) {
      // Oldest first, as the SQL stores take them.
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
