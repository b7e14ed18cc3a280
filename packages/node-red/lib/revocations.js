'use strict'

const { randomBytes } = require('node:crypto')
const { createLogoutFile } = require('./pending-logouts')

/**
 * Logouts whose revocation has not reached flowadmin yet: at most this many. A logout beyond it
 * is refused (503), never one already taken forgotten: that would let its token in again.
 */
const MAX_PENDING = 10000
/**
 * Logouts of tokens this instance cannot vouch for (neither cached nor found active by flowadmin:
 * it was unreachable) waiting for flowadmin apart: at most this many, the oldest dropped for a new
 * one. Anyone can send any bearer string while flowadmin is down, so these never fill the above.
 */
const MAX_UNVOUCHED = 1000
/** The first retry comes this long after the failed attempt; each failed round doubles it… */
const FIRST_RETRY_MS = 1000
/** …up to this. flowadmin back, the retry also starts at this instance's first good answer. */
const MAX_RETRY_MS = 15000
/** What a logout ticket starts with; never a flowadmin token, never sent to flowadmin. */
const TICKET_PREFIX = 'flowadmin-logout.'

/**
 * The tokens logged out here, refused on this instance until flowadmin has revoked them (or they
 * expire), and the revocations retried meanwhile; and the one-time tickets that let Node-RED run
 * its own logout for a token that is no longer good.
 *
 * A revocation is tried once during the logout. When it fails (flowadmin unreachable, 5xx) the
 * token stays refused here and the revocations are retried in rounds, one request at a time: a
 * round stops at the first failure and the next waits twice as long (1 s, 2 s, … 15 s), and a round
 * starts at once when flowadmin answers this instance again. A token leaves when flowadmin has
 * revoked it (200) or says it is no longer valid (401), or at its expiry, when known. Once
 * Node-RED's userDir is known (keepIn), what waits is kept there too (pending-logouts.js), so a
 * restart of Node-RED still refuses these tokens and still revokes them. Only tokens this instance
 * knows it accepted wait for sure; the others wait in a small bucket of their own that drops its
 * oldest (see MAX_UNVOUCHED).
 *
 * @param {import('./options').Settings} settings
 * @param {ReturnType<import('./client').createClient>} client
 */
function createRevocations(settings, client) {
  const { log, now, timeoutMs, url } = settings
  /** @type {Map<string, {expiresAt: number | null}>} token → when it expires, if known */
  const pending = new Map()
  /** @type {Map<string, {expiresAt: null}>} the same for tokens not vouched for, oldest first */
  const unvouched = new Map()
  /** @type {Map<string, object>} ticket → the user Node-RED's logout runs as */
  const tickets = new Map()
  let timer = null
  let running = false
  let delay = FIRST_RETRY_MS
  let fullLogged = false
  /** The userDir's file, once known. */
  let file = null

  /** Keeps what waits in the userDir, when it is known; resolves once it is written. */
  const persist = () =>
    file === null
      ? Promise.resolve()
      : file.save(() => ({
          pending: [...pending].map(([token, entry]) => [token, entry.expiresAt]),
          unvouched: [...unvouched.keys()],
        }))

  /** How many logouts wait, vouched for or not. */
  function waiting() {
    return pending.size + unvouched.size
  }

  /** Whether the entry is past its token's expiry: flowadmin no longer accepts it either. */
  function expired(entry) {
    return entry.expiresAt !== null && entry.expiresAt <= now()
  }

  function schedule() {
    if (timer !== null || running || waiting() === 0) return
    timer = setTimeout(() => {
      timer = null
      round()
    }, delay)
    // A retry never keeps Node-RED from exiting.
    timer.unref?.()
  }

  /** One round over the pending revocations, in order, until one fails. Never rejects. */
  async function round() {
    if (running) return
    running = true
    let failed = false
    const before = waiting()
    try {
      for (const kept of [pending, unvouched]) {
        for (const [token, entry] of kept) {
          if (!expired(entry)) {
            const outcome = await client.revoke(token, AbortSignal.timeout(timeoutMs))
            if (outcome === 'failed') {
              failed = true
              break
            }
          }
          kept.delete(token)
        }
        if (failed) break
      }
    } catch (error) {
      failed = true
      log(`retrying revocations failed unexpectedly (${String(error).split('\n')[0]})`)
    }
    running = false
    if (waiting() !== before) persist()
    delay = failed ? Math.min(delay * 2, MAX_RETRY_MS) : FIRST_RETRY_MS
    if (waiting() === 0 && !failed) {
      fullLogged = false
      log(`the logouts that waited for flowadmin at ${url} are revoked there`)
    }
    schedule()
  }

  /** Refuses the token here and revokes it now; when that fails, it waits in `kept`. */
  async function wait(kept, token, entry, signal) {
    const wasEmpty = waiting() === 0
    kept.set(token, entry)
    const outcome = await client.revoke(token, signal)
    if (outcome !== 'failed') {
      kept.delete(token)
      return 'revoked'
    }
    // Answered once it is kept where a restart finds it (or after timeoutMs: a slow disk does not
    // hold the logout longer than flowadmin would).
    await Promise.race([persist(), new Promise((resolve) => setTimeout(resolve, timeoutMs).unref?.())])
    if (wasEmpty) {
      log(
        `a logout could not be revoked at flowadmin at ${url}: its token is refused on this instance and the revocation is retried until flowadmin takes it`,
      )
    }
    schedule()
    return 'pending'
  }

  /** A token not vouched for waits in its bucket, whose oldest leaves for it when it is full. */
  function keepUnvouched(token, signal) {
    if (unvouched.size >= MAX_UNVOUCHED) {
      const oldest = unvouched.keys().next().value
      if (oldest !== undefined) unvouched.delete(oldest)
    }
    return wait(unvouched, token, { expiresAt: null }, signal)
  }

  /** Drops the pending revocations of expired tokens. */
  function sweep() {
    for (const [token, entry] of pending) if (expired(entry)) pending.delete(token)
  }

  return {
    /**
     * Keeps what waits in `<userDir>/.flowadmin-pending-logouts.json` from now on, and takes back
     * what it kept before a restart (refused again, and revoked at the next round). Once.
     */
    keepIn(userDir) {
      if (file !== null) return
      file = createLogoutFile(userDir, log)
      const kept = file.load({ pending: MAX_PENDING, unvouched: MAX_UNVOUCHED })
      let restored = 0
      for (const [token, expiresAt] of kept.pending) {
        if (pending.has(token) || pending.size >= MAX_PENDING) continue
        const entry = { expiresAt }
        if (expired(entry)) continue
        pending.set(token, entry)
        restored++
      }
      for (const token of kept.unvouched) {
        if (unvouched.has(token) || unvouched.size >= MAX_UNVOUCHED) continue
        unvouched.set(token, { expiresAt: null })
        restored++
      }
      if (restored > 0) {
        log(
          `${restored} logouts from before this start still wait for flowadmin at ${url} to revoke their tokens: they are refused here until it does`,
        )
      }
      persist()
      schedule()
    },

    /** Whether this instance refuses the token: logged out here, not yet revoked at flowadmin. */
    refuses(token) {
      if (unvouched.has(token)) return true
      const entry = pending.get(token)
      if (entry === undefined) return false
      if (!expired(entry)) return true
      pending.delete(token)
      return false
    },

    /**
     * Revokes a token at flowadmin now; when that fails, refuses it here and retries.
     * `signal` bounds the attempt made now.
     * @param {string} token
     * @param {number | null} expiresAt when the token expires (ms), if known
     * @param {AbortSignal} signal
     * @param {boolean} [vouched] whether this instance knows it accepted the token (cached, or
     *   found active by flowadmin); a token not vouched for waits in the small bucket, never 'full'
     * @returns {Promise<'revoked' | 'pending' | 'full'>} revoked: flowadmin has it revoked (or
     *   says it is no longer valid); pending: refused here, revocation retried; full: neither.
     */
    async revoke(token, expiresAt, signal, vouched = true) {
      if (pending.has(token) || unvouched.has(token)) return 'pending'
      if (!vouched) return keepUnvouched(token, signal)
      // Refused here from now on, even while the attempt below is on its way.
      if (pending.size >= MAX_PENDING) sweep()
      if (pending.size >= MAX_PENDING) {
        if (!fullLogged) {
          fullLogged = true
          log(
            `${MAX_PENDING} logouts wait for flowadmin at ${url} to revoke their tokens: further logouts are refused (503) until it answers`,
          )
        }
        return 'full'
      }
      return wait(pending, token, { expiresAt }, signal)
    },

    /** flowadmin answers again: a round now rather than at the end of the back-off. */
    recovered() {
      if (waiting() === 0 || running) return
      if (timer !== null) clearTimeout(timer)
      timer = null
      delay = FIRST_RETRY_MS
      round()
    },

    /** A one-time bearer token that Node-RED's `tokens` hook answers with `user`. */
    ticketFor(user) {
      const ticket = `${TICKET_PREFIX}${randomBytes(32).toString('base64url')}`
      tickets.set(ticket, user)
      return ticket
    },

    /** Whether `token` has the form of a ticket (then it is never asked about at flowadmin). */
    isTicket(token) {
      return token.startsWith(TICKET_PREFIX)
    },

    /** The ticket's user, once; undefined for an unknown or used ticket. */
    takeTicket(ticket) {
      const user = tickets.get(ticket)
      tickets.delete(ticket)
      return user
    },

    /** Forgets a ticket (its request has ended). */
    dropTicket(ticket) {
      tickets.delete(ticket)
    },
  }
}

module.exports = { createRevocations, MAX_PENDING, MAX_UNVOUCHED, FIRST_RETRY_MS, MAX_RETRY_MS }
