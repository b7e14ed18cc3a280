'use strict'

const { backoff, onceEach } = require('./timing')

// The fleet agent's reports (`POST /fleet/instances/{id}/report`): sent only when what they say
// changed since the last one flowadmin acknowledged (204), or when hand changes or their reverts
// wait to be told; never every round. Each carries `sequence`, strictly increasing, so a slow
// report never overwrites a newer one at flowadmin, and a repeat of one changes nothing.

/** The most hand changes, and reverts, in one report (flowadmin takes 100). */
const MAX_PER_REPORT = 100
/** The most kept while flowadmin cannot be told; past it the oldest go, and the log says so. */
const MAX_KEPT = 1000

// ESC [ … letter: a terminal's colour or cursor code (written from its code point, not as a literal).
const COLOUR_CODE = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*[A-Za-z]`, 'g')
/** A UTF-16 surrogate without its pair (String.prototype.toWellFormed is Node 20's). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

/**
 * A report's text as flowadmin takes it: npm's and Node-RED's messages may carry colour codes,
 * tabs or other control characters, which flowadmin refuses (400, the whole report). They become
 * spaces, colour codes go, and a lone surrogate becomes U+FFFD. A JSON.stringify replacer.
 */
function cleanText(_key, value) {
  if (typeof value !== 'string') return value
  return value
    .replace(COLOUR_CODE, '')
    .replace(/[\p{Cc}]/gu, ' ')
    .replace(LONE_SURROGATE, '\uFFFD')
}

/**
 * @param {object} parts
 * @param {(body: string) => Promise<{status: number, body: unknown, revoked?: boolean} | null>} parts.send
 * @param {() => {nodeRedVersion: string, modules: object[], typesInUse: string[]} | null} parts.facts
 *   what the watcher read; null before the first reading
 * @param {() => {applied: string | null, applying: boolean, failures: object[]}} parts.applier
 * @param {ReturnType<import('./timing').createStopper>} parts.stopper
 * @param {(line: string) => void} parts.log
 */
function createReporter({ send, facts, applier, stopper, log }) {
  let changes = []
  let reverted = []
  /** The last report flowadmin acknowledged, without its sequence and lists. */
  let acknowledged = null
  let acknowledgedApplying = false
  let sequence = 0
  let sending = false
  let due = false
  let retry = null
  let failures = 0
  let overflowTold = false
  const refusal = onceEach(log)

  /** Keeps `entries` after `list`, the oldest going past MAX_KEPT. */
  function keep(list, entries) {
    const all = [...list, ...entries]
    if (all.length <= MAX_KEPT) return all
    if (!overflowTold) {
      overflowTold = true
      log(
        `fleet: more than ${MAX_KEPT} hand changes wait to be reported to flowadmin: the oldest are dropped`,
      )
    }
    return all.slice(-MAX_KEPT)
  }

  async function flush() {
    sending = true
    try {
      while (due && !stopper.stopped) {
        due = false
        const read = facts()
        if (read === null) return
        const { applied, applying, failures: refused } = applier()
        // The first report says what the first desired state made of this instance (or that it is
        // under way): before it, the poll alone tells flowadmin the instance is there.
        if (applied === null && !applying) return
        const state = { ...read, applied, applying, failures: refused }
        const key = JSON.stringify(state, cleanText)
        const told = {
          changes: changes.slice(0, MAX_PER_REPORT),
          reverted: reverted.slice(0, MAX_PER_REPORT),
        }
        const telling = told.changes.length > 0 || told.reverted.length > 0
        if (key === acknowledged && !telling) continue
        // While the applier runs, flowadmin knows it (`applying`); what the run changes is told at its end.
        if (applying && acknowledgedApplying && !telling) continue
        sequence = Math.max(Date.now(), sequence + 1)
        const answer = await send(JSON.stringify({ sequence, ...state, ...told }, cleanText))
        if (answer?.status === 204) {
          acknowledged = key
          acknowledgedApplying = applying
          changes = changes.slice(told.changes.length)
          reverted = reverted.slice(told.reverted.length)
          if (changes.length > 0 || reverted.length > 0) due = true
          failures = 0
          refusal.clear()
          continue
        }
        // A credential of its own refused (revoked) is told by the credentials, once.
        if (answer !== null && !answer.revoked) {
          refusal.say(
            `fleet: flowadmin refused the report (HTTP ${answer.status})${typeof answer.body?.message === 'string' ? `: ${answer.body.message.split('\n')[0].slice(0, 500)}` : ''}`,
          )
        }
        failures += 1
        due = true
        retry = setTimeout(() => {
          retry = null
          if (!sending) flush().catch(() => {})
        }, backoff(failures))
        retry.unref?.()
        return
      }
    } finally {
      sending = false
    }
  }

  return {
    /** Something a report says may have changed: a report is sent if so. */
    update() {
      due = true
      if (!sending && retry === null) flush().catch(() => {})
    },
    /** Hand changes the watcher saw, for the next reports. */
    noteChanges(entries) {
      changes = keep(changes, entries)
      this.update()
    },
    /** Hand changes the applier undid, for the next reports. */
    noteReverted(entries) {
      reverted = keep(reverted, entries)
      this.update()
    },
    stop() {
      if (retry !== null) clearTimeout(retry)
      retry = null
    },
  }
}

module.exports = { cleanText, createReporter }
