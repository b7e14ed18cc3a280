import { createHash } from 'node:crypto'
import type { ThrottleStore } from '@flowadmin/core'

/** Longest throttle key stored as it is. */
export const MAX_THROTTLE_KEY_LENGTH = 256

/**
 * A throttle store whose keys are at most MAX_THROTTLE_KEY_LENGTH characters long, so a spray of
 * huge usernames costs the store no more than short ones: a longer key is stored as the SHA-256
 * of its text. The core's keys start with a word and a space (`user `, `addr `); digests start with
 * `sha256 `, so a digest never meets a key stored as it is.
 */
export function withBoundedKeys(store: ThrottleStore): ThrottleStore {
  const bound = (key: string) =>
    key.length <= MAX_THROTTLE_KEY_LENGTH ? key : `sha256 ${createHash('sha256').update(key).digest('hex')}`
  return {
    hit: (keys, now, windowMs) => store.hit(keys.map(bound), now, windowMs),
    peek: (keys, now) => store.peek(keys.map(bound), now),
    clear: (key) => store.clear(bound(key)),
    deleteExpired: (now, limit) => store.deleteExpired(now, limit),
  }
}
