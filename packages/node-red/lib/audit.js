'use strict'

const { spawnSync } = require('node:child_process')
const os = require('node:os')
const { version } = require('../package.json')
const { request } = require('./http')

// Node-RED's audit events, forwarded to flowadmin's trail. Node-RED calls the handler
// synchronously for every log message: it must never throw (the caller would get it) and never
// return a rejected promise (Node-RED has no unhandledRejection handler and would end). So the
// handler only copies what it needs into a bounded buffer; sending happens later, off its call.

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
/** What flowadmin takes in one report: events, and bytes of body. */
const MAX_BATCH = 500
const MAX_BODY_BYTES = 1024 * 1024
/** The bytes of `{"events":[]}` around the events. */
const BODY_FRAME_BYTES = Buffer.byteLength('{"events":[]}')
/** Control characters: flowadmin refuses them in names and addresses. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it replaces.
const CONTROL = /[\u0000-\u001f\u007f]/g
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses.
const HAS_CONTROL = /[\u0000-\u001f\u007f]/

const AUDIT_KNOWN = ['instance', 'ignore', 'bufferSize', 'batchSize', 'delayMs', 'maxRetryMs']

/**
 * @typedef {object} AuditSettings
 * @property {string} instance
 * @property {RegExp[]} ignore
 * @property {number} bufferSize
 * @property {number} batchSize
 * @property {number} delayMs
 * @property {number} maxRetryMs
 */

function invalid(message) {
  return new Error(`@flowadmin/node-red: ${message}`)
}

/** `*.get` → /^[^]*\.get$/: `*` is any run of characters, everything else literal. */
function patternOf(glob) {
  return new RegExp(
    `^${glob
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  )
}

function whole(value, name, min, max, fallback) {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalid(`audit.${name} must be a whole number from ${min} to ${max}`)
  }
  return value
}

/**
 * `options.audit`, checked once when Node-RED loads its settings.
 * @returns {AuditSettings}
 */
function parseAuditOptions(value) {
  const audit = value ?? {}
  if (audit === null || typeof audit !== 'object' || Array.isArray(audit)) {
    throw invalid('audit must be an object: { instance, ignore, bufferSize }')
  }
  const unknown = Object.keys(audit).filter((key) => !AUDIT_KNOWN.includes(key))
  if (unknown.length > 0) {
    throw invalid(
      `unknown option audit.${String(unknown[0])}; the options of audit are ${AUDIT_KNOWN.join(', ')}`,
    )
  }
  const instance = audit.instance ?? os.hostname()
  if (
    typeof instance !== 'string' ||
    instance === '' ||
    instance.length > 128 ||
    HAS_CONTROL.test(instance) ||
    instance.includes('/')
  ) {
    throw invalid('audit.instance must be a name of 1 to 128 printable characters, without "/"')
  }
  const ignore = audit.ignore ?? ['*.get', 'comms.*']
  if (!Array.isArray(ignore) || !ignore.every((glob) => typeof glob === 'string' && glob !== '')) {
    throw invalid('audit.ignore must be a list of event names or patterns such as "*.get"')
  }
  return {
    instance,
    ignore: ignore.map(patternOf),
    bufferSize: whole(audit.bufferSize, 'bufferSize', 10, 1_000_000, 10_000),
    batchSize: whole(audit.batchSize, 'batchSize', 1, MAX_BATCH, 100),
    delayMs: whole(audit.delayMs, 'delayMs', 0, 60_000, 200),
    maxRetryMs: whole(audit.maxRetryMs, 'maxRetryMs', 100, 600_000, 30_000),
  }
}

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

/** The event flowadmin is sent for one of Node-RED's audit messages. */
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

/** The events still waiting when the process exits, sent by a child process it waits for. */
const SEND_AT_EXIT = `
let input = ''
process.stdin.on('data', (chunk) => { input += chunk })
process.stdin.on('end', async () => {
  const { url, authorization, agent, body, timeoutMs } = JSON.parse(input)
  try {
    const res = await fetch(url, { method: 'POST', body, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs),
      headers: { Authorization: authorization, 'Content-Type': 'application/json', 'User-Agent': agent } })
    process.exitCode = res.status === 200 ? 0 : 1
  } catch { process.exitCode = 1 }
})`

/** Every forwarder of this process, flushed at its exit. */
const forwarders = new Set()
let exitHooked = false

/**
 * @param {import('./options').Settings} settings
 * @param {AuditSettings} audit
 */
function createForwarder(settings, audit) {
  const { url, timeoutMs, log } = settings
  const authorization = `Basic ${Buffer.from(
    `${encodeURIComponent(settings.clientId)}:${encodeURIComponent(settings.clientSecret)}`,
  ).toString('base64')}`
  const endpoint = `${url}/audit/events`
  const agent = `flowadmin-node-red/${version}`
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

  const schedule = (ms) => {
    if (timer !== null) return
    timer = setTimeout(() => {
      timer = null
      send().catch(() => {})
    }, ms)
    timer.unref?.()
  }

  /**
   * The next batch: a note of what was dropped first, when something was; bounded in events and in
   * bytes, below what flowadmin takes.
   */
  function nextBatch() {
    const room = Math.min(dropped > 0 ? audit.batchSize - 1 : audit.batchSize, split ?? MAX_BATCH)
    const note =
      dropped > 0
        ? [
            {
              time: Date.now(),
              instance: audit.instance,
              actor: null,
              event: 'audit.dropped',
              address: null,
              details: { dropped, reason: 'the buffer was full while flowadmin could not be reached' },
            },
          ]
        : []
    const reserved = note.length > 0 ? bytesOf(note[0]) : 0
    const events = buffer.slice(0, fitting(buffer.slice(0, room), room, reserved))
    return { events, note, notedDrops: dropped }
  }

  function trouble(message) {
    if (!failing) log(message)
    failing = true
    schedule(retryMs + Math.floor(Math.random() * (retryMs / 4)))
    retryMs = Math.min(retryMs * 2, audit.maxRetryMs)
  }

  async function send() {
    if (sending) return
    sending = true
    try {
      while (buffer.length > 0 || dropped > 0) {
        const { events, note, notedDrops } = nextBatch()
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
        if (answer.status === 0) {
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
        trouble(
          status === 401
            ? `flowadmin at ${url} refused client ${JSON.stringify(settings.clientId)} for audit events (HTTP 401): check clientId and clientSecret; events wait`
            : `flowadmin at ${url} answers HTTP ${status} to audit events: they wait and are sent again`,
        )
        return
      }
    } finally {
      sending = false
    }
  }

  const forwarder = {
    /** Takes one of Node-RED's log messages; never throws. */
    take(msg) {
      try {
        if (msg === null || typeof msg !== 'object' || msg.level !== AUDIT_LEVEL) return
        const event = msg.event
        if (typeof event !== 'string' || !/^[A-Za-z0-9_.:-]{1,128}$/.test(event)) return
        if (audit.ignore.some((pattern) => pattern.test(event))) return
        buffer.push(reportOf(msg, audit.instance))
        if (buffer.length > audit.bufferSize) {
          buffer.shift()
          dropped++
          shifted++
        }
        if (!failing) schedule(buffer.length >= audit.batchSize ? 0 : audit.delayMs)
      } catch {
        // Nothing may reach Node-RED's caller; the event is lost, the instance goes on.
      }
    },
    /** Waiting events and drops not yet reported, for tests and the exit flush. */
    pending() {
      return { events: buffer.length, dropped }
    },
    /** Sends what waits now (tests; the exit flush uses a child process instead). */
    flush() {
      if (timer !== null) clearTimeout(timer)
      timer = null
      return send().catch(() => {})
    },
    /** At process exit: what still waits, sent by a child process the exit waits for (bounded). */
    sendAtExit() {
      if (buffer.length === 0 && dropped === 0) return
      const { note } = nextBatch()
      const room = MAX_BATCH - note.length
      const events = buffer.slice(
        0,
        fitting(buffer.slice(0, room), room, note.length > 0 ? bytesOf(note[0]) : 0),
      )
      const body = JSON.stringify({ events: [...note, ...events] })
      spawnSync(process.execPath, ['-e', SEND_AT_EXIT], {
        input: JSON.stringify({ url: endpoint, authorization, agent, body, timeoutMs }),
        timeout: timeoutMs + 2000,
        stdio: ['pipe', 'ignore', 'ignore'],
      })
    },
  }
  forwarders.add(forwarder)
  if (!exitHooked) {
    exitHooked = true
    process.on('exit', () => {
      for (const each of forwarders) {
        try {
          each.sendAtExit()
        } catch {
          // Exiting anyway.
        }
      }
    })
  }
  return forwarder
}

/**
 * Node-RED's custom logger (`logging: { flowadmin: auditLogger(options) }`): audit messages only
 * (`level: 'off'` leaves every other message to the console logger), forwarded to flowadmin.
 */
function createAuditLogger(settings, options) {
  const audit = parseAuditOptions(options.audit)
  let forwarder = null
  return {
    level: 'off',
    audit: true,
    handler() {
      forwarder ??= createForwarder(settings, audit)
      const own = forwarder
      return (msg) => own.take(msg)
    },
    /** The forwarder behind the handler (tests), null before Node-RED asked for the handler. */
    get forwarder() {
      return forwarder
    },
  }
}

module.exports = { createAuditLogger, parseAuditOptions, SECRET_KEY }
