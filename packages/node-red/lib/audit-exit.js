'use strict'

const { spawnSync } = require('node:child_process')
const path = require('node:path')
const { batchesOf, dropNote } = require('./audit-events')

// At process exit nothing asynchronous runs any more: what still waits is handed to a short child
// process, which sends it in batches (through the same transport, so the same proxy) within a time
// budget; the exit waits for it. What it could not send is counted in the log.

/** How long the exit waits for the events to be sent, all batches together. */
const EXIT_BUDGET_MS = 3000

/** Sends the batches on stdin in order until one fails or the budget ends; prints how many went. */
const SEND_AT_EXIT = `
const { request } = require(${JSON.stringify(path.join(__dirname, 'http.js'))})
const { retryAfterMs } = require(${JSON.stringify(path.join(__dirname, 'audit-forwarder.js'))})
let input = ''
process.stdin.on('data', (chunk) => { input += chunk })
process.stdin.on('end', async () => {
  const { endpoint, authorization, bodies, budgetMs, timeoutMs } = JSON.parse(input)
  const deadline = Date.now() + budgetMs
  let sent = 0
  while (sent < bodies.length) {
    const left = deadline - Date.now()
    if (left <= 0) break
    const answer = await request(endpoint, { method: 'POST', body: bodies[sent], timeoutMs: Math.min(timeoutMs, left),
      headers: { Authorization: authorization, 'Content-Type': 'application/json', Accept: 'application/json' } })
    if (answer.status === 429) {
      const wait = retryAfterMs(answer.headers['retry-after'])
      if (wait !== null && wait < deadline - Date.now()) {
        await new Promise((resolve) => setTimeout(resolve, wait))
        continue
      }
    }
    if (answer.status !== 200) break
    sent++
  }
  process.stdout.write(String(sent))
})`

/**
 * Sends what `forwarder` still holds, within the budget; logs how many events are lost, if any.
 * @param {ReturnType<import('./audit-forwarder').createForwarder>} forwarder
 * @param {{batchSize: number}} audit
 * @param {{timeoutMs: number, url: string, log: (line: string) => void}} settings
 */
function sendAtExit(forwarder, audit, settings, budgetMs = EXIT_BUDGET_MS) {
  const { events, dropped, name, endpoint, authorization } = forwarder.leftAtExit()
  if (events.length === 0 && dropped === 0) return
  if (authorization === null) {
    settings.log(
      `${events.length} audit events could not be sent to flowadmin at ${settings.url}: this instance has no credential (it is not enrolled); they are lost`,
    )
    return
  }
  const batches = batchesOf(events, audit.batchSize, dropped > 0 ? dropNote(dropped, name) : null)
  const run = spawnSync(process.execPath, ['-e', SEND_AT_EXIT], {
    input: JSON.stringify({
      endpoint,
      authorization,
      bodies: batches.map((batch) => batch.body),
      budgetMs,
      timeoutMs: settings.timeoutMs,
    }),
    timeout: budgetMs + 2000,
    stdio: ['pipe', 'pipe', 'ignore'],
  })
  const sent = Number(run.stdout?.toString() || 0)
  const went = batches
    .slice(0, Number.isInteger(sent) ? sent : 0)
    .reduce((sum, batch) => sum + batch.count, 0)
  const lost = events.length - went + (sent > 0 ? 0 : dropped)
  if (lost > 0) {
    settings.log(
      `${lost} audit events could not be sent to flowadmin at ${settings.url} within ${budgetMs} ms of exit: they are lost`,
    )
  }
}

/** Every forwarder of this process, flushed at its exit. */
const forwarders = new Set()
let hooked = false

/** Flushes `forwarder` when the process exits. */
function flushAtExit(forwarder, audit, settings) {
  forwarders.add({ forwarder, audit, settings })
  if (hooked) return
  hooked = true
  process.on('exit', () => {
    for (const each of forwarders) {
      try {
        sendAtExit(each.forwarder, each.audit, each.settings)
      } catch {
        // Exiting anyway.
      }
    }
  })
}

module.exports = { flushAtExit, sendAtExit, EXIT_BUDGET_MS }
