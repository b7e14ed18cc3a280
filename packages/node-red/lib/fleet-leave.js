'use strict'

const { spawnSync } = require('node:child_process')
const path = require('node:path')

// When Node-RED's process ends (SIGTERM, Ctrl-C, a restart through a service manager), the agent
// tells flowadmin that this instance leaves (`DELETE /fleet/instances/{id}/lease`), so it shows as
// disconnected at once even between two polls. At exit nothing asynchronous runs any more: a short
// child process sends it (through the same transport, so the same proxy) within a time budget.
// A process killed with SIGKILL says nothing: its held poll's connection closes, or its lease ends.

/** How long the exit waits for flowadmin's answer. */
const LEAVE_BUDGET_MS = 1000

const SEND_LEAVE = `
const { request } = require(${JSON.stringify(path.join(__dirname, 'http.js'))})
let input = ''
process.stdin.on('data', (chunk) => { input += chunk })
process.stdin.on('end', async () => {
  const { endpoint, authorization, timeoutMs } = JSON.parse(input)
  const answer = await request(endpoint, { method: 'DELETE', timeoutMs,
    headers: { Authorization: authorization, Accept: 'application/json' } })
  process.stdout.write(String(answer.status))
})`

/** Instances of this process that are to say they leave at its exit. */
const leaving = new Map()
let hooked = false

/**
 * Sends one leave, within the budget; the HTTP status, or 0 when there was no answer.
 * `authorization` is the header, or a function giving it at exit (the credential may be rotated).
 */
function sendLeave({ endpoint, authorization }, budgetMs = LEAVE_BUDGET_MS) {
  const header = typeof authorization === 'function' ? authorization() : authorization
  const run = spawnSync(process.execPath, ['-e', SEND_LEAVE], {
    input: JSON.stringify({ endpoint, authorization: header, timeoutMs: budgetMs }),
    timeout: budgetMs + 1000,
    stdio: ['pipe', 'pipe', 'ignore'],
  })
  const status = Number(run.stdout?.toString() || 0)
  return Number.isInteger(status) ? status : 0
}

/**
 * From now on, this instance says it leaves when the process exits; the returned function takes
 * that back (the agent stopped, so it is not connected anyway, or another agent took the key).
 * @param {string} key one per agent
 * @param {{endpoint: string, authorization: string | (() => string)}} leave
 */
function leaveAtExit(key, leave) {
  leaving.set(key, leave)
  if (!hooked) {
    hooked = true
    process.on('exit', () => {
      for (const each of leaving.values()) {
        try {
          sendLeave(each)
        } catch {
          // Exiting anyway.
        }
      }
    })
  }
  return () => {
    if (leaving.get(key) === leave) leaving.delete(key)
  }
}

module.exports = { leaveAtExit, sendLeave, LEAVE_BUDGET_MS }
