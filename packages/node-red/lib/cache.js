'use strict'

/** Enough for every open editor of an instance; a flood of distinct tokens cannot grow it further. */
const MAX_ENTRIES = 10000

/**
 * Active introspections kept for `cacheMs` (never past the token's own expiry), and the
 * introspections in flight, shared by requests for the same token (the editor sends a dozen at
 * once when it opens). Inactive tokens and failures are never kept. With `cacheMs` 0 it keeps and
 * shares nothing: every request asks flowadmin.
 *
 * @param {{cacheMs: number, now: () => number}} settings
 */
function createTokenCache({ cacheMs, now }) {
  /** @type {Map<string, {user: object, until: number}>} */
  const entries = new Map()
  /** @type {Map<string, Promise<object | null>>} */
  const inFlight = new Map()
  // Bumped by every forget(): an introspection that began before it may not store its answer.
  let generation = 0

  /** Drops expired entries from the oldest, then the oldest ones while there is no room. */
  function makeRoom() {
    const time = now()
    for (const [token, entry] of entries) {
      if (entries.size < MAX_ENTRIES && entry.until > time) break
      entries.delete(token)
    }
  }

  return {
    /** The user of a fresh entry, or undefined. */
    get(token) {
      const entry = entries.get(token)
      if (entry === undefined) return undefined
      if (entry.until > now()) return entry.user
      entries.delete(token)
      return undefined
    },

    /**
     * What `introspect` resolves to, asked once for all concurrent callers of the same token.
     * `introspect` receives `keep(user, expiresAt)` to store an active answer.
     * @param {string} token
     * @param {(keep: (user: object, expiresAt: number | null) => void) => Promise<object | null>} introspect
     */
    share(token, introspect) {
      if (cacheMs === 0) return introspect(() => {})
      const pending = inFlight.get(token)
      if (pending !== undefined) return pending
      const begun = generation
      const keep = (user, expiresAt) => {
        const until = Math.min(now() + cacheMs, expiresAt ?? Number.POSITIVE_INFINITY)
        if (begun !== generation || until <= now()) return
        makeRoom()
        entries.set(token, { user, until })
      }
      const promise = introspect(keep).finally(() => {
        if (inFlight.get(token) === promise) inFlight.delete(token)
      })
      inFlight.set(token, promise)
      return promise
    },

    /** Forgets a token (it was revoked here): the next request for it asks flowadmin. */
    forget(token) {
      generation += 1
      entries.delete(token)
      inFlight.delete(token)
    },
  }
}

module.exports = { createTokenCache }
