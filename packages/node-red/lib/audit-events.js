'use strict'

const { MAX_BATCH } = require('./audit-options')

// The events flowadmin's trail is sent for Node-RED's audit messages, and their batches.

/** Node-RED's level number of audit messages. */
const AUDIT_LEVEL = 98
/**
 * Keys never forwarded, at any depth: passwords, tokens, secrets, cookies. The same as the core's
 * SECRET_KEY (packages/core/src/trail/trail.ts), which this plain JS cannot import; a test holds
 * them the same.
 */
const SECRET_KEY = /pass|token|secret|credential|authori[sz]ation|cookie|session|api.?key/i
/** Fields of Node-RED's message that are not details: said elsewhere, or Node-RED's own bookkeeping. */
const NOT_DETAILS = new Set(['level', 'timestamp', 'event', 'user', 'ip', 'msg'])
/** The largest details sent, as JSON characters; larger ones are replaced by their size. */
const MAX_DETAILS = 16 * 1024
const MAX_DEPTH = 6
/** What flowadmin takes in one report, in bytes of body. */
const MAX_BODY_BYTES = 1024 * 1024
/** The bytes of `{"events":[]}` around the events. */
const BODY_FRAME_BYTES = Buffer.byteLength('{"events":[]}')
/** Control characters: flowadmin refuses them in names and addresses. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it replaces.
const CONTROL = /[\u0000-\u001f\u007f]/g

/** True when `value` under `key` may hold a secret: text or an object under a secret-looking key. */
function isSecret(key, value) {
  return (typeof value === 'string' || (typeof value === 'object' && value !== null)) && SECRET_KEY.test(key)
}

/** A copy of `value` fit to send: JSON-safe, secret keys dropped, bounded in depth. */
function cleaned(value, depth, seen) {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return value
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value)
  if (typeof value === 'bigint') return value.toString()
  if (typeof value !== 'object') return undefined
  if (depth >= MAX_DEPTH || seen.has(value)) return '(omitted)'
  seen.add(value)
  if (value instanceof Error) return value.message
  if (Array.isArray(value)) return value.slice(0, 100).map((item) => cleaned(item, depth + 1, seen) ?? null)
  const copy = {}
  for (const key of Object.keys(value).slice(0, 100)) {
    if (isSecret(key, value[key])) continue
    const item = cleaned(value[key], depth + 1, seen)
    if (item !== undefined) copy[key] = item
  }
  return copy
}

const printable = (text, max) => text.replace(CONTROL, ' ').slice(0, max)

/**
 * The event flowadmin is sent for one of Node-RED's audit messages; `instance` is null while this
 * instance's name is not known yet (filled in before it is sent).
 */
function reportOf(msg, instance) {
  const details = {}
  for (const key of Object.keys(msg)) {
    if (NOT_DETAILS.has(key) || isSecret(key, msg[key])) continue
    const item = cleaned(msg[key], 0, new Set())
    if (item !== undefined) details[key] = item
  }
  const json = JSON.stringify(details)
  const user = msg.user
  const username =
    user !== null && typeof user === 'object' && typeof user.username === 'string'
      ? user.username
      : typeof msg.username === 'string'
        ? msg.username
        : null
  return {
    time: typeof msg.timestamp === 'number' && Number.isInteger(msg.timestamp) ? msg.timestamp : Date.now(),
    instance,
    actor: username === null || username === '' ? null : printable(username, 256),
    event: msg.event,
    address: typeof msg.ip === 'string' && msg.ip !== '' ? printable(msg.ip, 128) : null,
    details: json.length > MAX_DETAILS ? { truncated: true, size: json.length } : details,
  }
}

/**
 * Node-RED's bearer strategy looks a token up in its own sessions first and logs this, with no
 * user, address or anything else, for every token it did not issue itself: every flowadmin token,
 * on every request. Not a person's failed attempt: the helper says when flowadmin refuses a token.
 */
const isSessionMiss = (msg) => msg.event === 'auth.invalid-token' && msg.user == null && msg.ip === undefined

/** The size of each event as JSON, in bytes, computed once. */
const sizes = new WeakMap()
function bytesOf(report) {
  let size = sizes.get(report)
  if (size === undefined) {
    size = Buffer.byteLength(JSON.stringify(report))
    sizes.set(report, size)
  }
  return size
}

/** How many of `reports`, from the first, fit in one body beside `reserved` bytes (always one at least). */
function fitting(reports, most, reserved) {
  let bytes = BODY_FRAME_BYTES + reserved
  let count = 0
  for (const report of reports) {
    if (count >= most) break
    bytes += bytesOf(report) + (count > 0 || reserved > 0 ? 1 : 0)
    if (count > 0 && bytes > MAX_BODY_BYTES) break
    count++
  }
  return count
}

/** The note of events dropped while the buffer was full, as an event of its own. */
function dropNote(dropped, instance) {
  return {
    time: Date.now(),
    instance,
    actor: null,
    event: 'audit.dropped',
    address: null,
    details: { dropped, reason: 'the buffer was full while flowadmin could not be reached' },
  }
}

/**
 * The batches `events` go in, each at most `most` events (and MAX_BATCH) and under 1 MiB, the
 * note (if any) first in the first: `[{body, count}]`, count the events of `events` in it.
 */
function batchesOf(events, most, note) {
  const batches = []
  let rest = events
  let first = note
  while (rest.length > 0 || first !== null) {
    const room = Math.min(MAX_BATCH, first === null ? most : Math.max(1, most - 1))
    const count =
      rest.length === 0 ? 0 : fitting(rest.slice(0, room), room, first === null ? 0 : bytesOf(first))
    const body = JSON.stringify({ events: [...(first === null ? [] : [first]), ...rest.slice(0, count)] })
    batches.push({ body, count })
    rest = rest.slice(count)
    first = null
  }
  return batches
}

module.exports = {
  batchesOf,
  bytesOf,
  dropNote,
  fitting,
  isSessionMiss,
  reportOf,
  AUDIT_LEVEL,
  MAX_BATCH,
  SECRET_KEY,
}
