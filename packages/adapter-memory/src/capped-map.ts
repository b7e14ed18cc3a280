import { deleteEnded } from './expiring.js'

/**
 * A Map of at most `maxEntries` keys (see `restart` and `roomFor`). Map order is insertion order
 * and a restarted entry is moved to the end; entries of one kind all last alike, so the oldest,
 * at the front, are also the first to end. One live iterator walks the front, so each look at the
 * oldest costs O(1) however many entries were deleted before it (a fresh iterator would step over
 * every deleted slot of the table).
 */
export function createCappedMap<V>(
  maxEntries: number,
  endOf: (value: V) => number,
  spent: (value: V, now: number) => boolean = (value, now) => endOf(value) <= now,
) {
  const entries = new Map<string, V>()
  let front = entries.entries()
  // The oldest entry as the iterator last saw it; stale once deleted or set anew (moved to the end).
  let head: [string, V] | undefined
  /** The oldest entry, or undefined when there is none. */
  const oldest = (): [string, V] | undefined => {
    while (head === undefined || entries.get(head[0]) !== head[1]) {
      let next = front.next()
      if (next.done) {
        front = entries.entries()
        next = front.next()
      }
      if (next.done) return undefined
      head = next.value
    }
    return head
  }
  const dropOldest = () => {
    const entry = oldest()
    if (entry !== undefined) entries.delete(entry[0])
  }
  return {
    entries,
    /** Sets a key anew, at the end of the order, dropping the oldest entries to make room. */
    restart(key: string, value: V) {
      entries.delete(key)
      if (head?.[0] === key) head = undefined
      while (entries.size >= maxEntries) dropOldest()
      entries.set(key, value)
    },
    /**
     * Makes room for `count` new keys by dropping the oldest entries while they are `spent` at
     * `now`; false when the oldest is not (then nothing else was dropped). A dropped key that
     * `mine` claims is one more to make room for.
     */
    roomFor(count: number, now: number, mine: (key: string) => boolean = () => false): boolean {
      let needed = count
      while (entries.size + needed > maxEntries) {
        const entry = oldest()
        if (entry === undefined || !spent(entry[1], now)) return false
        entries.delete(entry[0])
        if (mine(entry[0])) needed++
      }
      return true
    },
    deleteExpired(now: number, limit: number) {
      return deleteEnded(entries, endOf, now, limit)
    },
  }
}
