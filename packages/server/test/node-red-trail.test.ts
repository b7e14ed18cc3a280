// One trail for the fleet: a real, stock Node-RED with the helper's auditLogger reports its audit
// events to the built `flowadmin` command, which keeps them beside its own. What an operator sees
// at GET /audit when people deploy, log in and fail to, and when flowadmin is away for a while.
import { randomBytes } from 'node:crypto'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashPassword } from '../src/adapters/argon2.js'
import { type BuiltServer, startBuiltServer, useServerFolder } from './cli-process.js'
import { type NodeRedRun, startNodeRed, stopNodeReds } from './node-red-process.js'
import { logIn } from './password-grant.js'

const HELPER = fileURLToPath(new URL('../../node-red/index.js', import.meta.url))
const CLIENT_ID = 'fleet'
const SECRET = randomBytes(24).toString('base64url')
const PASSWORD = 'admin password'
/** The longest an event may take to reach the trail in these tests, polled, never timed. */
const ARRIVAL_MS = 2000

const work = useServerFolder('trail')
let settingsFile: string
let flowadmin: BuiltServer
let port: number
let nodeRed: NodeRedRun
let admin: string

interface AuditEvent {
  time: string
  instance: string
  actor: string | null
  event: string
  outcome: string
  address: string | null
  address_reported: boolean
  details: Record<string, unknown>
}

beforeAll(async () => {
  settingsFile = path.join(work.dir, 'flowadmin', 'settings.json')
  const adminAuth = {
    type: 'credentials',
    users: [{ username: 'admin', password: await hashPassword(PASSWORD), permissions: '*' }],
    resourceServers: [{ id: CLIENT_ID, secret: await hashPassword(SECRET) }],
  }
  flowadmin = await startBuiltServer(settingsFile, {
    settings: { storage: 'sqlite', auditLog: 'stdout', adminAuth },
  })
  port = Number(new URL(flowadmin.url).port)
  nodeRed = await startNodeRed(
    path.join(work.dir, 'line-1'),
    {
      preamble: `
const flowadmin = require(${JSON.stringify(HELPER)})
const options = {
  url: ${JSON.stringify(flowadmin.url)},
  clientId: ${JSON.stringify(CLIENT_ID)},
  clientSecret: process.env.FLOWADMIN_SECRET,
  timeoutMs: 1000,
  audit: { instance: 'line-1', delayMs: 20, maxRetryMs: 500 },
}
`,
      adminAuth: 'flowadmin.adminAuth(options)',
      httpAdminMiddleware: 'flowadmin.httpAdminMiddleware(options)',
      logging: `{ console: { level: 'info', metrics: false, audit: false }, flowadmin: flowadmin.auditLogger(options) }`,
    },
    { FLOWADMIN_SECRET: SECRET },
  )
  admin = await flowadminToken()
})
afterAll(stopNodeReds)

async function flowadminToken(): Promise<string> {
  const res = await logIn(flowadmin.url, PASSWORD)
  expect(res.status).toBe(200)
  return ((await res.json()) as { access_token: string }).access_token
}

/** The editor's login form at Node-RED: flowadmin's token for the editor, or the refusal. */
function editorLogin(username: string, password: string): Promise<Response> {
  return fetch(`${nodeRed.url}/auth/token`, {
    method: 'POST',
    body: new URLSearchParams({
      client_id: 'node-red-editor',
      grant_type: 'password',
      scope: '',
      username,
      password,
    }),
  })
}

/** GET /audit with these filters, as an operator with `*`. */
async function trail(query: string): Promise<AuditEvent[]> {
  const res = await fetch(`${flowadmin.url}/audit?${query}`, {
    headers: { authorization: `Bearer ${admin}` },
  })
  expect(res.status).toBe(200)
  return ((await res.json()) as { events: AuditEvent[] }).events
}

/** Polls the trail until `check` holds for what it shows; fails, showing it, past `timeoutMs`. */
async function until(query: string, check: (events: AuditEvent[]) => boolean, timeoutMs = ARRIVAL_MS) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const events = await trail(query)
    if (check(events)) return events
    if (Date.now() > deadline) throw new Error(`the trail (${query}) still shows ${JSON.stringify(events)}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe('a Node-RED instance’s audit events in flowadmin’s trail', () => {
  it('a deploy by a person appears with their username and the instance', async () => {
    const login = await editorLogin('admin', PASSWORD)
    expect(login.status).toBe(200)
    const { access_token: token } = (await login.json()) as { access_token: string }
    const flows = [{ id: 'tab1', type: 'tab', label: 'Flow 1' }]
    const deploy = await fetch(`${nodeRed.url}/flows`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'Node-RED-Deployment-Type': 'full',
      },
      body: JSON.stringify(flows),
    })
    expect(deploy.status).toBe(204)
    const [event] = await until('instance=fleet/line-1&event=flows.set', (events) => events.length === 1)
    expect(event).toMatchObject({
      instance: 'fleet/line-1',
      actor: 'admin',
      event: 'flows.set',
      outcome: 'success',
      address_reported: true,
      details: { type: 'full' },
    })
    // The editor's login itself, as flowadmin checked the password for the instance.
    const own = await trail('instance=flowadmin&event=login.succeeded')
    expect(own.some((e) => e.actor === 'admin' && e.details.client === CLIENT_ID)).toBe(true)
    // Reads are noise: none of the editor's GETs is forwarded.
    await fetch(`${nodeRed.url}/flows`, { headers: { authorization: `Bearer ${token}` } })
    expect(await trail('instance=fleet/line-1&event=flows.get')).toEqual([])
  })

  it('another audited action: deleting a context value', async () => {
    const login = await editorLogin('admin', PASSWORD)
    const { access_token: token } = (await login.json()) as { access_token: string }
    const res = await fetch(`${nodeRed.url}/context/global/counter`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token}` },
    })
    expect(res.status).toBe(204)
    const [event] = await until('event=context.delete', (events) => events.length === 1)
    expect(event).toMatchObject({
      instance: 'fleet/line-1',
      actor: 'admin',
      details: { scope: 'global', key: 'counter' },
    })
  })

  it('a failed login: the instance’s event and flowadmin’s, both failures, no password anywhere', async () => {
    const refused = await editorLogin('mallory', 'guess-one')
    expect(refused.status).toBe(403)
    const [event] = await until('instance=fleet/line-1&actor=mallory', (events) => events.length === 1)
    expect(event).toMatchObject({ event: 'auth.login.fail.credentials', outcome: 'failure' })
    const own = await until('instance=flowadmin&actor=mallory', (events) => events.length === 1)
    expect(own[0]).toMatchObject({ event: 'login.failed', outcome: 'failure', address_reported: false })
    const csv = await fetch(`${flowadmin.url}/audit`, {
      headers: { authorization: `Bearer ${admin}`, accept: 'text/csv' },
    })
    expect(await csv.text()).not.toContain('guess-one')
  })

  it('while flowadmin is stopped, events wait in the instance; once it is back, none is lost', async () => {
    const before = nodeRed.stderr.length
    await flowadmin.stop()
    // Node-RED goes on: its logins are refused (flowadmin cannot be asked) and audited meanwhile.
    for (let i = 0; i < 5; i++) expect((await editorLogin(`away-${i}`, 'x')).status).toBe(403)
    const unreachable = () => nodeRed.stderr.slice(before).includes('audit events wait')
    const deadline = Date.now() + 10_000
    while (!unreachable() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    expect(nodeRed.stderr.slice(before)).toContain('audit events wait')
    expect(nodeRed.child.exitCode).toBeNull()
    expect((await fetch(`${nodeRed.url}/auth/login`)).status).toBe(200)

    flowadmin = await startBuiltServer(settingsFile, { port })
    admin = await flowadminToken()
    const back = await until(
      'instance=fleet/line-1&event=auth.login.fail',
      (events) => events.filter((e) => e.actor?.startsWith('away-')).length === 5,
      10_000,
    )
    expect(
      back
        .filter((e) => e.actor?.startsWith('away-'))
        .map((e) => e.actor)
        .sort(),
    ).toEqual(['away-0', 'away-1', 'away-2', 'away-3', 'away-4'])
    expect(nodeRed.child.exitCode).toBeNull()
  })

  it('the JSON-lines audit log still has flowadmin’s own events, as before', async () => {
    const lines = flowadmin.run.stdout.split('\n').filter((line) => line.startsWith('{'))
    expect(lines.map((line) => JSON.parse(line).event)).toContain('login.succeeded')
  })
})
