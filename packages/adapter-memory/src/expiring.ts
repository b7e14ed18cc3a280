// Entries that end at a time: what every store does with those whose time came.

/**
 * Deletes up to `limit` entries of `map` that ended at or before `now` (`endOf`; null: never), in
 * the map's order, with `remove` (the map's own delete unless given); returns how many.
 */
export function deleteEnded<V>(
  map: Map<string, V>,
  endOf: (value: V) => number | null,
  now: number,
  limit: number,
  remove: (key: string) => boolean = (key) => map.delete(key),
): number {
  let removed = 0
  for (const [key, value] of map) {
    if (removed >= limit) break
    const end = endOf(value)
    if (end !== null && end <= now && remove(key)) removed++
  }
  return removed
}

/** Takes the entry under `key` once: deletes it, and returns it unless it ended at or before `now`. */
export function takeLive<V extends { expiresAt: number }>(
  map: Map<string, V>,
  key: string,
  now: number,
): V | null {
  const value = map.get(key)
  map.delete(key)
  return value === undefined || value.expiresAt <= now ? null : value
}
