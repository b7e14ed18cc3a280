'use strict'

const crypto = require('node:crypto')
const { isAgentMessage } = require('./agent-token')
const {
  bytesOf,
  dropNote,
  fitting,
  isSessionMiss,
  reportOf,
  AUDIT_LEVEL,
  MAX_BATCH,
} = require('./audit-events')
const { request } = require('./http')

// Node-RED's audit events, forwarded to flowadmin's trail. Node-RED calls the handler
// synchronously for every log message: it must never throw (the caller would get it) and never
// return a rejected promise (Node-RED has no unhandledRejection handler and would end). So the
// handler only copies what it needs into a bounded buffer; sending happens later, off its call.

/** The longest flowadmin's `Retry-After` is honoured for; beyond, this. */
const MAX_RETRY_AFTER_MS = 3600_000
/** One `auth.invalid-token` per token in this long, however often it is sent. */
const INVALID_TOKEN_EVERY_MS = 60_000
const MAX_INVALID_TOKENS = 1000

/** `Retry-After` (seconds, or an HTTP date) in ms, at least 1 s; null without one. */
function retryAfterMs(header, now = Date.now()) {
  const value = Array.isArray(header) ? header[0] : header
  if (typeof value !== 'string' || value.trim() === '') return null
  const ms = /^\d+$/.test(value.trim()) ? Number(value.trim()) * 1000 : Date.parse(value) - now
  if (!Number.isFinite(ms)) return null
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(1000, ms))
}

/**
 * @param {import('./options').Settings} settings
 * @param {import('./audit-options').AuditSettings} audit
 * @param {{now(): string | null, atExit(): string}} naming this instance's name in the trail: now
 *   (null while not known), and at exit (known or not)
 * @param {ReturnType<import('./credentials').createCredentials>} credentials the credential the
 *   events are sent with, asked at every request
 */
function createForwarder(settings, audit, naming, credentials) {
  const nameNow = () => naming.now()
  const { url, timeoutMs, log } = settings
  const endpoint = `${url}/audit/events`
  /** @type {object[]} */
  const buffer = []
  /** Dropped and not yet reported to flowadmin. */
  let dropped = 0
  /** Every event ever dropped from the front, to tell how much of a batch in flight was dropped. */
  let shifted = 0
  let sending = false
  let timer = null
  let retryMs = 1000
  let failing = false
  /** Most events in the next batch after flowadmin found one too large (413); null: no such bound. */
  let split = null
  /** Events dropped because flowadmin found each too large alone. */
  let tooLarge = 0
  /** Tokens told of lately (their digests), with when. */
  const invalidTokens = new Map()

  const schedule = (ms) => {
    if (timer !== null) return
    timer = setTimeout(() => {
      timer = null
      send().catch(() => {})
    }, ms)
    timer.unref?.()
  }

  /** This instance's name, given to the events that wait without one; null while not known. */
  function named() {
    const name = nameNow()
    if (name !== null) for (const report of buffer) if (report.instance === null) report.instance = name
    return name
  }

  /**
   * The next batch: a note of what was dropped first, when something was; bounded in events and in
   * bytes, below what flowadmin takes.
   */
  function nextBatch(name) {
    const room = Math.min(dropped > 0 ? audit.batchSize - 1 : audit.batchSize, split ?? MAX_BATCH)
    const note = dropped > 0 ? [dropNote(dropped, name)] : []
    const reserved = note.length > 0 ? bytesOf(note[0]) : 0
    const events = buffer.slice(0, fitting(buffer.slice(0, room), room, reserved))
    return { events, note, notedDrops: dropped }
  }

  /** A failure: `message` logged when it begins (null: told elsewhere); tried again later. */
  function trouble(message, waitMs = null) {
    if (!failing && message !== null) log(message)
    failing = true
    if (waitMs !== null) {
      schedule(waitMs)
      return
    }
    schedule(retryMs + Math.floor(Math.random() * (retryMs / 4)))
    retryMs = Math.min(retryMs * 2, audit.maxRetryMs)
  }

  async function send() {
    if (sending) return
    sending = true
    try {
      while (buffer.length > 0 || dropped > 0) {
        const name = named()
        // Sent once this instance's name is known (see audit.js), and it has a credential.
        const authorization = credentials.authorization()
        if (name === null || authorization === null) return
        const { events, note, notedDrops } = nextBatch(name)
        const before = shifted
        const answer = await request(endpoint, {
          method: 'POST',
          headers: {
            Authorization: authorization,
            'Content-Type': 'application/json',
            Accept: 'application/json',
          },
          body: JSON.stringify({ events: [...note, ...events] }),
          timeoutMs,
        })
        const status = answer.status
        if (status === 0) {
          const reason = answer.failure === 'timeout' ? `no answer within ${timeoutMs} ms` : answer.reason
          trouble(
            `flowadmin at ${url} is unreachable (${reason}): audit events wait (at most ${audit.bufferSize}) and are sent when it answers`,
          )
          return
        }
        if (status === 413 && events.length > 1) {
          // Too large for flowadmin after all: the same events again, in smaller batches.
          split = Math.ceil(events.length / 2)
          continue
        }
        if (status === 413 && events.length === 1) {
          // Too large alone: flowadmin will never take it.
          tooLarge++
          log(
            `flowadmin at ${url} refused an audit event ${JSON.stringify(events[0].event)} as too large (HTTP 413, ${bytesOf(events[0])} bytes); it is dropped (${tooLarge} so far)`,
          )
          buffer.splice(0, Math.max(0, 1 - (shifted - before)))
          continue
        }
        if (status === 429) {
          // flowadmin says when to come back: not before, and the events wait meanwhile.
          const wait = retryAfterMs(answer.headers['retry-after'])
          if (wait !== null) {
            trouble(
              `flowadmin at ${url} asks audit events to wait ${Math.ceil(wait / 1000)} s (HTTP 429): they wait (at most ${audit.bufferSize}) and are sent then`,
              wait,
            )
            return
          }
        }
        if (
          status === 200 ||
          (status >= 400 && status < 500 && status !== 401 && status !== 429 && status !== 408)
        ) {
          if (status !== 200) {
            // flowadmin will never take these: keeping them would block every later event.
            log(
              `flowadmin at ${url} refused ${events.length} audit events (HTTP ${status}); they are dropped`,
            )
          }
          buffer.splice(0, Math.max(0, events.length - (shifted - before)))
          if (buffer.length === 0) split = null
          dropped -= notedDrops
          if (notedDrops > 0)
            log(`${notedDrops} audit events were dropped (the oldest first) while the buffer was full`)
          if (failing) log(`flowadmin at ${url} takes audit events again`)
          failing = false
          retryMs = 1000
          continue
        }
        // This instance's own credential refused (revoked) is told by the credentials, once.
        const revoked = status === 401 && credentials.rejected()
        trouble(
          revoked
            ? null
            : status === 401
              ? `flowadmin at ${url} refused client ${JSON.stringify(credentials.clientId())} for audit events (HTTP 401): check clientId and clientSecret; events wait`
              : `flowadmin at ${url} answers HTTP ${status} to audit events: they wait and are sent again`,
        )
        return
      }
    } finally {
      sending = false
    }
  }

  /** Keeps an event (the oldest dropped past the buffer's size) and schedules its batch. */
  function push(msg) {
    buffer.push(reportOf(msg, nameNow()))
    if (buffer.length > audit.bufferSize) {
      buffer.shift()
      dropped++
      shifted++
    }
    if (!failing) schedule(buffer.length >= audit.batchSize ? 0 : audit.delayMs)
  }

  const pass = (event) =>
    typeof event === 'string' &&
    /^[A-Za-z0-9_.:-]{1,128}$/.test(event) &&
    !audit.ignore.some((pattern) => pattern.test(event))

  return {
    /** Takes one of Node-RED's log messages; never throws. */
    take(msg) {
      try {
        if (msg === null || typeof msg !== 'object' || msg.level !== AUDIT_LEVEL || !pass(msg.event)) return
        // Node-RED's own lookup of a token in its sessions, and the fleet agent's own requests: no
        // person did anything.
        if (isSessionMiss(msg) || isAgentMessage(msg)) return
        push(msg)
      } catch {
        // Nothing may reach Node-RED's caller; the event is lost, the instance goes on.
      }
    },
    /**
     * A token flowadmin says is not active was sent to this instance: `auth.invalid-token`, once a
     * minute per token at most. Never throws.
     */
    invalidToken(token) {
      try {
        if (!pass('auth.invalid-token')) return
        const digest = crypto.createHash('sha256').update(String(token)).digest('base64')
        const now = Date.now()
        const last = invalidTokens.get(digest)
        if (last !== undefined && now - last < INVALID_TOKEN_EVERY_MS) return
        invalidTokens.delete(digest)
        if (invalidTokens.size >= MAX_INVALID_TOKENS) invalidTokens.delete(invalidTokens.keys().next().value)
        invalidTokens.set(digest, now)
        push({
          level: AUDIT_LEVEL,
          event: 'auth.invalid-token',
          timestamp: now,
          reason: 'inactive at flowadmin',
        })
      } catch {
        // As take.
      }
    },
    /** Waiting events and drops not yet reported, for tests. */
    pending() {
      return { events: buffer.length, dropped }
    },
    /** Sends what waits now (tests; also once this instance's name is known). */
    flush() {
      if (timer !== null) clearTimeout(timer)
      timer = null
      return send().catch(() => {})
    },
    /** What still waits, for the exit flush: the events (named) and the drops not yet noted. */
    leftAtExit() {
      const name = naming.atExit()
      for (const report of buffer) if (report.instance === null) report.instance = name
      return { events: buffer.slice(), dropped, name, endpoint, authorization: credentials.authorization() }
    },
  }
}

module.exports = { createForwarder, retryAfterMs }
