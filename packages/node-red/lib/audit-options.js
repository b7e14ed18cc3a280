'use strict'

// `options.audit`, the audit logger's own options, checked once when Node-RED loads its settings.

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses.
const HAS_CONTROL = /[\u0000-\u001f\u007f]/
/** What flowadmin takes in one report. */
const MAX_BATCH = 500

const AUDIT_KNOWN = ['instance', 'ignore', 'bufferSize', 'batchSize', 'delayMs', 'maxRetryMs']

/**
 * @typedef {object} AuditSettings
 * @property {string | null} instance the name given, or null: the fleet id in fleet mode, else the host name
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

/** Whether `name` may name an instance in the trail. */
const isInstanceName = (name) =>
  typeof name === 'string' &&
  name !== '' &&
  name.length <= 128 &&
  !HAS_CONTROL.test(name) &&
  !name.includes('/')

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
  if (audit.instance !== undefined && !isInstanceName(audit.instance)) {
    throw invalid('audit.instance must be a name of 1 to 128 printable characters, without "/"')
  }
  const ignore = audit.ignore ?? ['*.get', 'comms.*']
  if (!Array.isArray(ignore) || !ignore.every((glob) => typeof glob === 'string' && glob !== '')) {
    throw invalid('audit.ignore must be a list of event names or patterns such as "*.get"')
  }
  return {
    instance: audit.instance ?? null,
    ignore: ignore.map(patternOf),
    bufferSize: whole(audit.bufferSize, 'bufferSize', 10, 1_000_000, 10_000),
    batchSize: whole(audit.batchSize, 'batchSize', 1, MAX_BATCH, 100),
    delayMs: whole(audit.delayMs, 'delayMs', 0, 60_000, 200),
    maxRetryMs: whole(audit.maxRetryMs, 'maxRetryMs', 100, 600_000, 30_000),
  }
}

module.exports = { isInstanceName, parseAuditOptions, MAX_BATCH }
