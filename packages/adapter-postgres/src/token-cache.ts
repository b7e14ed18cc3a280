import type { TokenRecord } from '@flowadmin/core'
import { createHeardCache, type HeardCache } from './heard-cache.js'

/** The channel on which the hash of every token record changed or deleted is announced. */
export const TOKEN_CHANNEL = 'flowadmin_tokens'

/** At most this many records are kept; the next one past it starts afresh. */
const MAX_KEPT = 10_000

/** A record that shares nothing with `record`. */
const copyOf = (record: TokenRecord): TokenRecord => ({ ...record, scope: [...record.scope] })

/**
 * The token records this instance found by hash, kept while the token channel is heard: every
 * instance announces on it the hash of each record it changes or deletes, in the transaction that
 * does it, so the announcement arrives after the change is committed. While the channel is not
 * heard (before it is first heard, after its connection is lost, or when its heartbeat is late)
 * nothing is kept and every lookup reads the database; when it is heard again, it starts empty.
 *
 * A lookup that read the database keeps what it read only if no announcement or local change
 * arrived since it began (`generation`): a read that raced a revocation could return the record
 * the revocation deleted.
 */
export interface TokenCache
  extends Pick<
    HeardCache<TokenRecord>,
    'generation' | 'listening' | 'beat' | 'alive' | 'lost' | 'size' | 'staleMs'
  > {
  /** The kept record of this hash (a copy), or undefined when there is none or nothing may be kept. */
  get(hash: string): TokenRecord | undefined
  /** Keeps what a lookup begun at `generation` read, unless something changed since. */
  keep(record: TokenRecord, generation: number): void
  /** A record changed or went: forget it. */
  forget(hash: string): void
  /** The record with this id went (or may have): forget it. */
  forgetId(id: string): void
  /** This instance wrote a use of the record with this id: the kept copy says so too. */
  used(id: string, at: number, address: string): void
}

/** A cache that keeps nothing until `listening` is called; `now` is the clock. */
export function createTokenCache(now: () => number = Date.now): TokenCache {
  const hashOfId = new Map<string, string>()
  const kept = createHeardCache<TokenRecord>({
    copy: copyOf,
    max: MAX_KEPT,
    now,
    onClear: () => hashOfId.clear(),
  })
  const forget = (hash: string) => {
    const record = kept.peek(hash)
    kept.forget(hash)
    if (record !== undefined) hashOfId.delete(record.id)
  }
  return {
    get: (hash) => kept.get(hash)?.value,
    get generation() {
      return kept.generation
    },
    keep(record, at) {
      const previous = hashOfId.get(record.id)
      if (!kept.keep(record.hash, record, at)) return
      if (previous !== undefined && previous !== record.hash) kept.drop(previous)
      hashOfId.set(record.id, record.hash)
    },
    forget,
    forgetId(id) {
      const hash = hashOfId.get(id)
      if (hash === undefined) kept.changed()
      else forget(hash)
    },
    used(id, at, address) {
      const hash = hashOfId.get(id)
      const record = hash === undefined ? undefined : kept.peek(hash)
      if (record === undefined) return
      record.lastUsedAt = at
      record.lastAddress = address
    },
    listening: () => kept.listening(),
    beat: (at) => kept.beat(at),
    alive: () => kept.alive(),
    lost: () => kept.lost(),
    get size() {
      return kept.size
    },
    get staleMs() {
      return kept.staleMs
    },
    set staleMs(ms) {
      kept.staleMs = ms
    },
  }
}
