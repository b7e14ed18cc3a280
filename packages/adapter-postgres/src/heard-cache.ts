/**
 * Lookups kept in memory while a channel on which every instance announces its changes is heard.
 * While the channel is not heard (before it is first heard, after its connection is lost, or when
 * its heartbeat is late) nothing is kept and every lookup reads the database; when it is heard
 * again, it starts empty.
 *
 * A lookup that read the database keeps what it read only if no announcement or local change
 * arrived since it began (`generation`): a read that raced a change could return what the change
 * replaced. Values are kept and handed out as `copy` makes them, so no caller shares one.
 */
export interface HeardCache<V> {
  /** The value kept for this key (a copy), or undefined when none is, or nothing may be kept now. */
  get(key: string): { value: V } | undefined
  /** The value kept for this key itself (for a change in place), whether or not it may be used now. */
  peek(key: string): V | undefined
  /** The moment a lookup begins: pass it to `keep`. */
  readonly generation: number
  /** Keeps what a lookup begun at `generation` read, unless something changed since; whether it did. */
  keep(key: string, value: V, generation: number): boolean
  /** The value of this key changed or went: forget it. */
  forget(key: string): void
  /** Something changed whose key is not known here: lookups under way keep nothing. */
  changed(): void
  /** Drops what is kept for this key, without counting it as a change. */
  drop(key: string): void
  /** The channel is heard from now on (a fresh connection): start empty, keep again. */
  listening(): void
  /** A heartbeat was sent on the channel's connection at `now`. */
  beat(now: number): void
  /** The channel's connection answered (the last heartbeat came back). */
  alive(): void
  /** The channel is lost: forget everything, keep nothing until it is heard again. */
  lost(): void
  /** How many values are kept now. */
  readonly size: number
  /**
   * How long a heartbeat may go unanswered while kept values are still used: past it, the
   * connection may be dead without having said so, and lookups read the database. A heartbeat not
   * sent (a busy process sends it late) is no sign of anything and costs nothing.
   */
  staleMs: number
}

export interface HeardCacheOptions<V> {
  /** A value that shares nothing with the one given. */
  copy: (value: V) => V
  /** At most this many values are kept; the next one past it starts afresh. Default 10,000. */
  max?: number
  /** Called whenever everything kept is dropped. */
  onClear?: () => void
  /** The clock. Default Date.now. */
  now?: () => number
}

/** A cache that keeps nothing until `listening` is called. */
export function createHeardCache<V>(options: HeardCacheOptions<V>): HeardCache<V> {
  const { copy, onClear } = options
  const max = options.max ?? 10_000
  const now = options.now ?? Date.now
  const kept = new Map<string, V>()
  let heard = false
  /** When the heartbeat that has not come back yet was sent; null when none is out. */
  let beatSince: number | null = null
  let generation = 0
  const usable = () => heard && (beatSince === null || now() - beatSince <= cache.staleMs)
  const clear = () => {
    kept.clear()
    onClear?.()
    generation++
  }
  const cache: HeardCache<V> = {
    staleMs: 3000,
    get(key) {
      if (!usable() || !kept.has(key)) return undefined
      return { value: copy(kept.get(key) as V) }
    },
    peek: (key) => kept.get(key),
    get generation() {
      return generation
    },
    keep(key, value, at) {
      if (at !== generation || !usable()) return false
      if (kept.size >= max) clear()
      kept.set(key, copy(value))
      return true
    },
    forget(key) {
      generation++
      kept.delete(key)
    },
    changed() {
      generation++
    },
    drop(key) {
      kept.delete(key)
    },
    listening() {
      clear()
      heard = true
      beatSince = null
    },
    beat(at) {
      beatSince ??= at
    },
    alive() {
      beatSince = null
    },
    lost() {
      heard = false
      clear()
    },
    get size() {
      return kept.size
    },
  }
  return cache
}
