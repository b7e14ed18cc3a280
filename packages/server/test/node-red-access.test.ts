// Who may do what, where, with real stock Node-RED 4.1 processes behind the built flowadmin: two
// enrolled instances in two groups, each with the @flowadmin/node-red helper on its own credential.
// alice is deployer on line-1 and viewer everywhere: her deploy succeeds on line-1's instance (204,
// Node-RED's v1 answer) and gets Node-RED's own refusal on line-2's (401: its answer to a live token
// without the permission), where she reads; carl, viewer on line-2 alone, is refused on line-1's; a grant
// removed from the settings (SIGHUP) counts at the instance's next check.
import { createHash, randomBytes } from 'node:crypto'
import * as path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashPassword } from '../src/adapters/argon2.js'
import { type BuiltServer, startBuiltServer, useServerFolder, writeSettings } from './cli-process.js'
import { eventually, HELPER } from './fleet-setup.js'
import { type NodeRedRun, startNodeRed, stopNodeReds } from './node-red-process.js'

const SECRET = randomBytes(24).toString('base64url')
const PASSWORD = 'access test password'
const work = useServerFolder('access')
let settingsFile: string
let flowadmin: BuiltServer
let press: NodeRedRun
let weld: NodeRedRun

/** The users' password hash, made once: a new one would end their tokens (a password change). */
let hash: string

async function writeFlowadminSettings(aliceGrants: unknown[]) {
  await writeSettings(settingsFile, {
    storage: 'sqlite',
    auditLog: 'off',
    fleet: { modules: true, groups: { 'line-1': ['press-*'], 'line-2': ['weld-*'] } },
    adminAuth: {
      type: 'credentials',
      users: [
        { username: 'admin', password: hash, permissions: '*' },
        { username: 'alice', password: hash, grants: aliceGrants },
        { username: 'carl', password: hash, grants: [{ role: 'viewer', on: 'line-2' }] },
      ],
      resourceServers: [
        { id: 'fleet', secret: `sha256:${createHash('sha256').update(SECRET).digest('hex')}`, fleet: true },
      ],
    },
  })
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })
  expect(res.status, await res.clone().text()).toBeLessThan(300)
  return res.json() as Promise<Record<string, string>>
}

/** Enrols `instance` with an admin's enrolment token: its own client id and secret. */
async function enrol(instance: string): Promise<{ clientId: string; clientSecret: string }> {
  const login = await fetch(`${flowadmin.url}/auth/token`, {
    method: 'POST',
    body: new URLSearchParams({
      client_id: 'service-admin',
      grant_type: 'password',
      scope: '*',
      username: 'admin',
      password: PASSWORD,
    }),
  })
  const { access_token: admin } = (await login.json()) as { access_token: string }
  const made = await post(
    `${flowadmin.url}/fleet/enrolments`,
    { resourceServer: 'fleet', instance },
    { authorization: `Bearer ${admin}` },
  )
  const enrolled = await post(`${flowadmin.url}/fleet/enrol`, { token: made.token })
  return { clientId: enrolled.clientId as string, clientSecret: enrolled.clientSecret as string }
}

/** The helper's settings on the instance's own credential (from the environment), no cache. */
function helperSettings(url: string, clientId: string) {
  return {
    preamble: `
const flowadmin = require(${JSON.stringify(HELPER)})
const options = {
  url: ${JSON.stringify(url)},
  clientId: ${JSON.stringify(clientId)},
  clientSecret: process.env.FLOWADMIN_SECRET,
  cacheMs: 0,
  timeoutMs: 5000,
}
`,
    adminAuth: 'flowadmin.adminAuth(options)',
    httpAdminMiddleware: 'flowadmin.httpAdminMiddleware(options)',
  }
}

beforeAll(async () => {
  settingsFile = path.join(work.dir, 'flowadmin', 'settings.json')
  hash = await hashPassword(PASSWORD)
  await writeFlowadminSettings([
    { role: 'deployer', on: 'line-1' },
    { role: 'viewer', on: 'everywhere' },
  ])
  flowadmin = await startBuiltServer(settingsFile)
  const [pressId, weldId] = [await enrol('press-1'), await enrol('weld-1')]
  ;[press, weld] = await Promise.all([
    startNodeRed(path.join(work.dir, 'press-1'), helperSettings(flowadmin.url, pressId.clientId), {
      FLOWADMIN_SECRET: pressId.clientSecret,
    }),
    startNodeRed(path.join(work.dir, 'weld-1'), helperSettings(flowadmin.url, weldId.clientId), {
      FLOWADMIN_SECRET: weldId.clientSecret,
    }),
  ])
})
afterAll(async () => {
  await stopNodeReds()
})

/** `username`'s login at the Node-RED instance (its login form asks flowadmin): the token. */
async function loginAt(run: NodeRedRun, username: string): Promise<string> {
  const res = await fetch(`${run.url}/auth/token`, {
    method: 'POST',
    body: new URLSearchParams({
      client_id: 'node-red-editor',
      grant_type: 'password',
      scope: '',
      username,
      password: PASSWORD,
    }),
  })
  expect(res.status).toBe(200)
  return ((await res.json()) as { access_token: string }).access_token
}

/** A full deployment of no flows, as the editor's Deploy button sends it: the status. */
async function deploy(run: NodeRedRun, token: string): Promise<number> {
  const res = await fetch(`${run.url}/flows`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      'Node-RED-Deployment-Type': 'full',
    },
    body: '[]',
  })
  await res.arrayBuffer()
  return res.status
}

async function readFlows(run: NodeRedRun, token: string): Promise<number> {
  const res = await fetch(`${run.url}/flows`, { headers: { authorization: `Bearer ${token}` } })
  await res.arrayBuffer()
  return res.status
}

describe('grants on groups of instances, enforced by stock Node-RED', () => {
  it("alice deploys on line-1's instance and gets Node-RED's refusal on line-2's, where she reads", async () => {
    const atPress = await loginAt(press, 'alice')
    const atWeld = await loginAt(weld, 'alice')
    expect(await deploy(press, atPress)).toBe(204)
    expect(await readFlows(weld, atWeld)).toBe(200)
    expect(await deploy(weld, atWeld)).toBe(401)
    // Her token is live there: what she may not do is deploy.
    expect(await readFlows(weld, atWeld)).toBe(200)
  })

  it("carl, viewer on line-2 alone, reads line-2's instance and is not let in on line-1's", async () => {
    expect(await readFlows(weld, await loginAt(weld, 'carl'))).toBe(200)
    const res = await fetch(`${press.url}/auth/token`, {
      method: 'POST',
      body: new URLSearchParams({
        client_id: 'node-red-editor',
        grant_type: 'password',
        scope: '',
        username: 'carl',
        password: PASSWORD,
      }),
    })
    // Node-RED refuses the login (its 403), its token being inactive there; had it issued one,
    // the token would be refused at its first use.
    const outcome =
      res.status === 200
        ? `read ${await readFlows(press, ((await res.json()) as { access_token: string }).access_token)}`
        : `login ${res.status}`
    expect(['login 403', 'read 401']).toContain(outcome)
  })

  it('a grant removed from the settings (SIGHUP) counts at the next check', async () => {
    const token = await loginAt(press, 'alice')
    expect(await deploy(press, token)).toBe(204)
    await writeFlowadminSettings([{ role: 'viewer', on: 'everywhere' }])
    flowadmin.run.child.kill('SIGHUP')
    expect(
      await eventually(
        () => deploy(press, token),
        (status) => status !== 204,
      ),
    ).toBe(401)
    // The same token still reads there: its grant is gone, not the token.
    expect(await readFlows(press, token)).toBe(200)
  })
})
