import type { TokenRecord, TokenStore } from '../ports/index.js'

/** A token's last use is written at most this often (ms), so reads stay free of writes. */
export const LAST_USE_RESOLUTION_MS = 60_000
/** Most token uses this process remembers having written (see createRecentUses). */
const MAX_TOUCHED = 10_000

/**
 * When this process last wrote a token's use, so racing requests write it once, not each. Only
 * the moments around a write matter: once it is written the record says so itself, and a use
 * read after that writes nothing. So forgetting the oldest entries costs at most a repeated
 * write for a request that read its record before that write landed, never a write per request.
 * Two generations bound it: when the newer is full it becomes the older, and the older is
 * dropped whole (O(1), the uses written longest ago).
 */
export function createRecentUses(store: TokenStore) {
  let touched = new Map<string, number>()
  let touchedBefore = new Map<string, number>()
  return {
    /** True when this use should be written: the last one written is a minute old or more. */
    due(record: TokenRecord, now: number): boolean {
      if (record.lastUsedAt !== null && now - record.lastUsedAt < LAST_USE_RESOLUTION_MS) return false
      const last = touched.get(record.id) ?? touchedBefore.get(record.id)
      return last === undefined || now - last >= LAST_USE_RESOLUTION_MS
    },
    /** Writes the use of `record` from `address` at `now`, and remembers having written it. */
    async note(record: TokenRecord, address: string, now: number): Promise<void> {
      if (touched.size >= MAX_TOUCHED / 2) {
        touchedBefore = touched
        touched = new Map()
      }
      touched.set(record.id, now)
      await store.touch(record.id, now, address)
    },
    /** How many uses it remembers. */
    size: () => touched.size + touchedBefore.size,
  }
}
