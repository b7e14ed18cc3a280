// What a real, stock Node-RED 4.1 with the helper's audit logger does with the audit events still
// waiting when it stops (SIGTERM, as a service manager stops it): they are sent to the built
// flowadmin within the exit's time budget, or, when flowadmin does not answer in time, the exit
// does not wait longer and its log says how many were lost.
import * as path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BuiltServer, startBuiltServer, useServerFolder } from './cli-process.js'
import {
  CLIENT_ID,
  eventually,
  fleetAdminAuth,
  HELPER,
  operatorToken,
  SECRET,
  trailOf,
} from './fleet-setup.js'
import { type NodeRedRun, startNodeRed, stopNodeReds } from './node-red-process.js'

/** The helper's exit budget (audit-exit.js). */
const EXIT_BUDGET_MS = 3000

const work = useServerFolder('node-red-exit')
let flowadmin: BuiltServer

/** Node-RED whose audit events wait a minute before they are sent: at its exit they are all still there. */
function startLine(): Promise<NodeRedRun> {
  return startNodeRed(
    path.join(work.dir, 'line-9'),
    {
      preamble: `
const flowadmin = require(${JSON.stringify(HELPER)})
const options = {
  url: ${JSON.stringify(flowadmin.url)},
  clientId: ${JSON.stringify(CLIENT_ID)},
  clientSecret: process.env.FLOWADMIN_SECRET,
  timeoutMs: 1000,
  audit: { instance: 'line-9', delayMs: 60000 },
}
`,
      adminAuth: 'flowadmin.adminAuth(options)',
      httpAdminMiddleware: 'flowadmin.httpAdminMiddleware(options)',
      logging: `{ console: { level: 'info', metrics: false, audit: false }, flowadmin: flowadmin.auditLogger(options) }`,
    },
    { FLOWADMIN_SECRET: SECRET },
  )
}

/** Failed logins at the editor's form: one audit event each, waiting in the helper. */
async function failedLogins(run: NodeRedRun, names: string[]): Promise<void> {
  for (const username of names) {
    const res = await fetch(`${run.url}/auth/token`, {
      method: 'POST',
      body: new URLSearchParams({
        client_id: 'node-red-editor',
        grant_type: 'password',
        scope: '',
        username,
        password: 'wrong',
      }),
    })
    expect(res.status).toBe(403)
  }
}

beforeAll(async () => {
  const dir = path.join(work.dir, 'flowadmin')
  flowadmin = await startBuiltServer(path.join(dir, 'settings.json'), {
    settings: { storage: 'sqlite', userDir: dir, auditLog: 'off', adminAuth: await fleetAdminAuth() },
  })
}, 60_000)

afterAll(stopNodeReds)

describe('the audit events waiting when Node-RED stops', () => {
  it('are sent to flowadmin at exit', async () => {
    const run = await startLine()
    await failedLogins(run, ['exit-1', 'exit-2', 'exit-3'])
    run.child.kill('SIGTERM')
    expect(await run.exited).toBe(0)
    const admin = await operatorToken(flowadmin.url)
    const sent = await eventually(
      () => trailOf(flowadmin.url, admin, 'instance=fleet/line-9&event=auth.login.fail.credentials'),
      (events) => events.length === 3,
    )
    expect(sent.map((entry) => entry.actor).sort()).toEqual(['exit-1', 'exit-2', 'exit-3'])
  }, 60_000)

  it('flowadmin not answering: the exit waits no longer than its budget, and says how many were lost', async () => {
    const run = await startLine()
    await failedLogins(run, ['lost-1', 'lost-2'])
    // Stopped, not ended: connections are accepted, and nothing answers.
    flowadmin.run.child.kill('SIGSTOP')
    try {
      const stopping = Date.now()
      run.child.kill('SIGTERM')
      // It ends on its own (0), not killed by the test's stop deadline.
      expect(await run.exited).toBe(0)
      expect(Date.now() - stopping).toBeLessThan(EXIT_BUDGET_MS + 5000)
    } finally {
      flowadmin.run.child.kill('SIGCONT')
    }
    expect(run.stderr + run.stdout).toContain(
      `2 audit events could not be sent to flowadmin at ${flowadmin.url} within ${EXIT_BUDGET_MS} ms of exit: they are lost`,
    )
  }, 60_000)
})
