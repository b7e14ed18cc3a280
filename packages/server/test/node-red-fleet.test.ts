// A fleet of real, stock Node-RED processes that take their logins and tokens from the built
// `flowadmin` command over real sockets: one whose settings.js calls RFC 7662 introspection by
// hand, two with the @flowadmin/node-red helper. What a user of Node-RED sees (status codes,
// bodies, what node-red-admin prints) when flowadmin issues, revokes, forgets, throttles, stops
// and starts again.
import { randomBytes } from 'node:crypto'
import { mkdir } from 'node:fs/promises'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashPassword } from '../src/adapters/argon2.js'
import {
  type BuiltServer,
  type CliRun,
  logEntries,
  startBuiltServer,
  useServerFolder,
  writeSettings,
} from './cli-process.js'
import { killClients, lines, nodeRedAdmin, storedToken } from './ecosystem.js'
import { type NodeRedRun, startNodeRed, stopNodeReds } from './node-red-process.js'

/** The helper package, required by absolute path as an instance's settings.js would. */
const HELPER = fileURLToPath(new URL('../../node-red/index.js', import.meta.url))

/** The resource server the Node-RED instances authenticate as, and its secret. */
const CLIENT_ID = 'fleet'
const SECRET = randomBytes(24).toString('base64url')
/** Another resource server (another fleet) of the same flowadmin, and its secret. */
const OTHER_ID = 'other-fleet'
const OTHER_SECRET = randomBytes(24).toString('base64url')

/** flowadmin's users. Each password is `<username> password`; `changer`'s changes in a test. */
const USERS = [
  { username: 'admin', permissions: '*' },
  { username: 'reader', permissions: 'read' },
  { username: 'mixed', permissions: ['flows.read', 'nodes.write'] },
  { username: 'leaver', permissions: '*' },
  { username: 'changer', permissions: '*' },
  { username: 'locked', permissions: '*' },
] as const
type Username = (typeof USERS)[number]['username']
const passwordOf = (username: Username) => `${username} password`

const work = useServerFolder('fleet')
let settingsFile: string
/** The argon2 hash of each user's password as the settings file has it now. */
const hashes = new Map<string, string>()
let flowadmin: BuiltServer
/** Node-RED whose adminAuth.tokens introspects at flowadmin, written from RFC 7662 alone. */
let plain: NodeRedRun
/** Two Node-RED instances with the helper (cacheMs 0, timeoutMs TIMEOUT_MS). */
let fleetA: NodeRedRun
let fleetB: NodeRedRun

/** flowadmin's settings: SQLite in the temp folder (tokens survive a restart), audit on stdout. */
async function writeFlowadminSettings(users: ReadonlyArray<{ username: string; permissions: unknown }>) {
  const adminAuth = {
    type: 'credentials',
    users: users.map(({ username, permissions }) => ({
      username,
      password: hashes.get(username),
      permissions,
    })),
    resourceServers: [
      { id: CLIENT_ID, secret: hashes.get(CLIENT_ID) },
      { id: OTHER_ID, secret: hashes.get(OTHER_ID) },
    ],
  }
  await writeSettings(settingsFile, { storage: 'sqlite', auditLog: 'stdout', adminAuth })
}

/**
 * The hand-written settings: `tokens` POSTs the bearer token to flowadmin's /auth/introspect with
 * HTTP Basic and maps an active answer to Node-RED's user; no login form of its own.
 */
function rfc7662Settings(url: string) {
  return {
    preamble: `
const INTROSPECT = ${JSON.stringify(`${url}/auth/introspect`)}
const BASIC = 'Basic ' + Buffer.from(encodeURIComponent(${JSON.stringify(CLIENT_ID)}) + ':' +
  encodeURIComponent(process.env.FLOWADMIN_SECRET)).toString('base64')
`,
    adminAuth: `{
    type: 'credentials',
    users: async () => null,
    authenticate: async () => null,
    tokens: async (token) => {
      const res = await fetch(INTROSPECT, {
        method: 'POST',
        headers: { authorization: BASIC, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token }),
      })
      if (res.status !== 200) return null
      const answer = await res.json()
      return answer.active ? { username: answer.username, permissions: answer.scope.split(' ') } : null
    },
  }`,
  }
}

/**
 * How long the helper waits for flowadmin: long enough for a flowadmin just started on a loaded
 * machine to verify a first password (argon2), short enough for the test that waits it out.
 */
const TIMEOUT_MS = 5000

/** The README's settings, with no cache and a timeout of TIMEOUT_MS. */
function helperSettings(url: string) {
  return {
    preamble: `
const flowadmin = require(${JSON.stringify(HELPER)})
const options = {
  url: ${JSON.stringify(url)},
  clientId: ${JSON.stringify(CLIENT_ID)},
  clientSecret: process.env.FLOWADMIN_SECRET,
  cacheMs: 0,
  timeoutMs: ${TIMEOUT_MS},
}
`,
    adminAuth: 'flowadmin.adminAuth(options)',
    httpAdminMiddleware: 'flowadmin.httpAdminMiddleware(options)',
  }
}

const secretEnv = { FLOWADMIN_SECRET: SECRET }

beforeAll(async () => {
  settingsFile = path.join(work.dir, 'flowadmin', 'settings.json')
  for (const name of [...USERS.map((user) => user.username), CLIENT_ID]) {
    hashes.set(name, await hashPassword(name === CLIENT_ID ? SECRET : passwordOf(name as Username)))
  }
  hashes.set(OTHER_ID, await hashPassword(OTHER_SECRET))
  await writeFlowadminSettings(USERS)
  flowadmin = await startBuiltServer(settingsFile)
  ;[plain, fleetA, fleetB] = await Promise.all([
    startNodeRed(path.join(work.dir, 'plain'), rfc7662Settings(flowadmin.url), secretEnv),
    startNodeRed(path.join(work.dir, 'fleet-a'), helperSettings(flowadmin.url), secretEnv),
    startNodeRed(path.join(work.dir, 'fleet-b'), helperSettings(flowadmin.url), secretEnv),
  ])
})
afterAll(async () => {
  await stopNodeReds()
  await killClients()
})

/** HTTP Basic credentials of a resource server. */
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`

/**
 * A token for the fleet: flowadmin's password grant asked with the fleet's own credentials, as
 * the helper asks it for its editor's login; '' asks for the user's own rights.
 */
async function tokenFor(username: Username, scope = ''): Promise<string> {
  const res = await fetch(`${flowadmin.url}/auth/token`, {
    method: 'POST',
    headers: { authorization: basic(CLIENT_ID, SECRET) },
    body: new URLSearchParams({ grant_type: 'password', scope, username, password: passwordOf(username) }),
  })
  expect(res.status).toBe(200)
  return ((await res.json()) as { access_token: string }).access_token
}

/** A token for flowadmin's own API: its password grant as the console asks it (client service-admin). */
async function flowadminTokenFor(username: Username, scope = ''): Promise<string> {
  const res = await fetch(`${flowadmin.url}/auth/token`, {
    method: 'POST',
    body: new URLSearchParams({
      client_id: 'service-admin',
      grant_type: 'password',
      scope,
      username,
      password: passwordOf(username),
    }),
  })
  expect(res.status).toBe(200)
  return ((await res.json()) as { access_token: string }).access_token
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

/** The status of `GET <url><route>` with the token. */
async function statusOf(url: string, route: string, token: string): Promise<number> {
  const res = await fetch(`${url}${route}`, { headers: bearer(token) })
  await res.arrayBuffer()
  return res.status
}

/** Deploys `flows` (a full deployment, as the editor's Deploy button sends it). */
function deploy(url: string, token: string, flows: unknown[]): Promise<Response> {
  return fetch(`${url}/flows`, {
    method: 'POST',
    headers: { ...bearer(token), 'content-type': 'application/json', 'Node-RED-Deployment-Type': 'full' },
    body: JSON.stringify(flows),
  })
}

/** flowadmin's answer to an introspection of `token` by the fleet's resource server (or another). */
async function introspect(
  token: string,
  authorization = basic(CLIENT_ID, SECRET),
): Promise<Record<string, unknown>> {
  const res = await fetch(`${flowadmin.url}/auth/introspect`, {
    method: 'POST',
    headers: { authorization },
    body: new URLSearchParams({ token }),
  })
  expect(res.status).toBe(200)
  return (await res.json()) as Record<string, unknown>
}

/** The editor's login form at a Node-RED instance, as the editor posts it. */
function editorLogin(url: string, username: string, password: string): Promise<Response> {
  return fetch(`${url}/auth/token`, {
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

/** The editor's logout at a Node-RED instance: the token as bearer and in the body. */
function editorLogout(url: string, token: string): Promise<Response> {
  return fetch(`${url}/auth/revoke`, {
    method: 'POST',
    headers: bearer(token),
    body: new URLSearchParams({ token }),
  })
}

/** flowadmin's audit lines (its stdout, one JSON object per line after the listening line). */
function audit(run: CliRun): Array<Record<string, unknown>> {
  return run.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line))
}

/** Resolves once `check()` holds, looked at after each chunk of the process's output. */
function whenOutput(child: CliRun['child'] | NodeRedRun['child'], check: () => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const look = () => {
      if (!check()) return
      child.stdout?.off('data', look)
      child.stderr?.off('data', look)
      child.off('close', closed)
      resolve()
    }
    const closed = () => {
      if (!check()) reject(new Error('the process ended before the expected output'))
    }
    child.stdout?.on('data', look)
    child.stderr?.on('data', look)
    child.once('close', closed)
    look()
  })
}

/** Sends SIGHUP to flowadmin and waits for its "settings reloaded" line. */
async function reloadFlowadmin(): Promise<void> {
  const reloads = () => logEntries(flowadmin.run.stderr).filter((entry) => entry.msg === 'settings reloaded')
  const before = reloads().length
  flowadmin.run.child.kill('SIGHUP')
  await whenOutput(flowadmin.run.child, () => reloads().length > before)
}

/** The value of a sample of flowadmin's /metrics, read with an admin token. */
async function metric(token: string, sample: string): Promise<number> {
  const res = await fetch(`${flowadmin.url}/metrics`, { headers: bearer(token) })
  expect(res.status).toBe(200)
  const line = (await res.text()).split('\n').find((text) => text.startsWith(`${sample} `))
  if (line === undefined) throw new Error(`no ${sample} in /metrics`)
  return Number(line.slice(sample.length + 1))
}

/** `text` matched literally in a regular expression. */
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** The helper's log lines (`[flowadmin] …` on stderr) a Node-RED wrote after `from` characters. */
const helperLines = (run: NodeRedRun, from: number) =>
  run.stderr
    .slice(from)
    .split('\n')
    .filter((line) => line.startsWith('[flowadmin] '))
    .map((line) => line.slice('[flowadmin] '.length))

/** The two kinds of settings, by the name the tests give them. */
const KINDS = {
  'RFC 7662 alone': () => plain,
  'the helper': () => fleetA,
}
const instances = () => Object.values(KINDS).map((run) => run())

describe('Node-RED instances that check tokens at flowadmin', () => {
  it.each(Object.keys(KINDS) as Array<keyof typeof KINDS>)(
    'with settings from %s: a `*` token reads and deploys, a `read` token reads and is refused the deploy',
    async (name) => {
      const run = KINDS[name]()
      const admin = await tokenFor('admin', '*')
      const reader = await tokenFor('reader', 'read')
      const flows = [{ id: `tab-${randomBytes(4).toString('hex')}`, type: 'tab', label: name }]

      // No token, a made-up token: Node-RED's 401.
      expect((await fetch(`${run.url}/flows`)).status).toBe(401)
      expect(await statusOf(run.url, '/flows', 'not-a-flowadmin-token')).toBe(401)

      const deployed = await deploy(run.url, admin, flows)
      expect(deployed.status).toBe(204)
      const read = await fetch(`${run.url}/flows`, { headers: bearer(admin) })
      expect(read.status).toBe(200)
      expect(await read.json()).toEqual(flows)

      const byReader = await fetch(`${run.url}/flows`, { headers: bearer(reader) })
      expect(byReader.status).toBe(200)
      expect(await byReader.json()).toEqual(flows)
      expect((await deploy(run.url, reader, [])).status).toBe(401)
      expect(await statusOf(run.url, '/nodes', reader)).toBe(200)
      // The refused deploy changed nothing.
      expect(await (await fetch(`${run.url}/flows`, { headers: bearer(admin) })).json()).toEqual(flows)
    },
  )

  it.each(Object.keys(KINDS) as Array<keyof typeof KINDS>)(
    'with settings from %s: flows.read and nodes.write get exactly what Node-RED grants them',
    async (name) => {
      const run = KINDS[name]()
      const mixed = await tokenFor('mixed')
      expect(await introspect(mixed)).toMatchObject({ active: true, scope: 'flows.read nodes.write' })

      expect(await statusOf(run.url, '/flows', mixed)).toBe(200) // flows.read
      expect((await deploy(run.url, mixed, [])).status).toBe(401) // flows.write
      expect(await statusOf(run.url, '/nodes', mixed)).toBe(401) // nodes.read
      expect(await statusOf(run.url, '/nodes/node-red', mixed)).toBe(401) // nodes.read
      // PUT /nodes/:module needs nodes.write: past the permission check, Node-RED's own handler
      // answers, here that no such module is installed.
      const put = await fetch(`${run.url}/nodes/node-red-contrib-not-installed`, {
        method: 'PUT',
        headers: { ...bearer(mixed), 'content-type': 'application/json' },
        body: JSON.stringify({ enabled: false }),
      })
      expect({ status: put.status, body: await put.json() }).toEqual({
        status: 400,
        body: { code: 'not_found', message: 'Module not found' },
      })
    },
  )

  it.each(Object.keys(KINDS) as Array<keyof typeof KINDS>)(
    "with settings from %s: a token for flowadmin's own API (the console's login, an API token) is refused",
    async (name) => {
      const run = KINDS[name]()
      const console = await flowadminTokenFor('admin', '*')
      expect(await statusOf(flowadmin.url, '/settings', console)).toBe(200)
      const created = await fetch(`${flowadmin.url}/auth/tokens`, {
        method: 'POST',
        headers: { ...bearer(console), 'content-type': 'application/json' },
        body: JSON.stringify({ name: `ci ${name}` }),
      })
      expect(created.status).toBe(201)
      const api = ((await created.json()) as { token: string }).token
      for (const token of [console, api]) {
        expect(await introspect(token)).toEqual({ active: false })
        expect(await statusOf(run.url, '/flows', token)).toBe(401)
      }
    },
  )

  it('refuses a token at the next request once it is revoked at flowadmin', async () => {
    const token = await tokenFor('admin', '*')
    for (const run of instances()) expect(await statusOf(run.url, '/flows', token)).toBe(200)

    const revoked = await fetch(`${flowadmin.url}/auth/revoke`, {
      method: 'POST',
      headers: bearer(token),
      body: new URLSearchParams({ token }),
    })
    expect(revoked.status).toBe(200)
    for (const run of instances()) expect(await statusOf(run.url, '/flows', token)).toBe(401)
  })

  it("refuses the tokens of a user removed from flowadmin's settings, and of a changed password, after SIGHUP", async () => {
    const leaver = await tokenFor('leaver', '*')
    const changer = await tokenFor('changer', '*')
    for (const run of instances()) {
      expect(await statusOf(run.url, '/flows', leaver)).toBe(200)
      expect(await statusOf(run.url, '/flows', changer)).toBe(200)
    }

    await writeFlowadminSettings(USERS.filter((user) => user.username !== 'leaver'))
    await reloadFlowadmin()
    for (const run of instances()) {
      expect(await statusOf(run.url, '/flows', leaver)).toBe(401)
      expect(await statusOf(run.url, '/flows', changer)).toBe(200)
    }
    expect((await editorLogin(fleetA.url, 'leaver', passwordOf('leaver'))).status).toBe(403)

    hashes.set('changer', await hashPassword('changer new password'))
    await writeFlowadminSettings(USERS.filter((user) => user.username !== 'leaver'))
    await reloadFlowadmin()
    for (const run of instances()) expect(await statusOf(run.url, '/flows', changer)).toBe(401)
    // The new password logs in through the editor; the old one no longer does.
    expect((await editorLogin(fleetA.url, 'changer', passwordOf('changer'))).status).toBe(403)
    expect((await editorLogin(fleetA.url, 'changer', 'changer new password')).status).toBe(200)
  })
})

describe("Node-RED's editor login and logout with the helper", () => {
  it("logs in with a token for the fleet alone, which flowadmin's API refuses, and the logout ends it at flowadmin", async () => {
    const login = await editorLogin(fleetA.url, 'admin', passwordOf('admin'))
    expect(login.status).toBe(200)
    const body = (await login.json()) as { access_token: string }
    expect(body).toEqual({ access_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), token_type: 'Bearer' })
    const token = body.access_token

    expect(await introspect(token)).toMatchObject({
      active: true,
      username: 'admin',
      scope: '*',
      client_id: CLIENT_ID,
      aud: CLIENT_ID,
    })
    // The editor's token is the fleet's alone: flowadmin's own API refuses it as unknown, and
    // another resource server learns nothing of it.
    for (const route of ['/settings', '/auth/tokens?user=*', '/nodes']) {
      const res = await fetch(`${flowadmin.url}${route}`, { headers: bearer(token) })
      expect([route, res.status, res.headers.get('www-authenticate')]).toEqual([
        route,
        401,
        'Bearer realm="flowadmin", error="invalid_token"',
      ])
    }
    expect(await introspect(token, basic(OTHER_ID, OTHER_SECRET))).toEqual({ active: false })
    expect(await statusOf(fleetA.url, '/flows', token)).toBe(200)
    expect(await statusOf(fleetB.url, '/flows', token)).toBe(200)

    // The editor's logout: the token as bearer and in the body. Its 200 comes once flowadmin has
    // revoked the token: nothing is waited for after it.
    const logout = await editorLogout(fleetA.url, token)
    expect(logout.status).toBe(200)
    expect(await statusOf(fleetA.url, '/flows', token)).toBe(401)
    expect(await introspect(token)).toEqual({ active: false })
    expect(await statusOf(flowadmin.url, '/settings', token)).toBe(401)
    expect(await statusOf(fleetA.url, '/flows', token)).toBe(401)
    expect(await statusOf(fleetB.url, '/flows', token)).toBe(401)
  })

  it("counts wrong passwords through Node-RED in flowadmin's throttle", async () => {
    const admin = await flowadminTokenFor('admin', '*')
    const failed = 'flowadmin_logins_total{outcome="failed"}'
    const throttled = 'flowadmin_logins_total{outcome="throttled"}'
    const failedBefore = await metric(admin, failed)
    const throttledBefore = await metric(admin, throttled)

    for (let attempt = 0; attempt < 5; attempt++) {
      const res = await editorLogin(fleetA.url, 'locked', 'a wrong password')
      expect(res.status).toBe(403)
      expect(await res.json()).toMatchObject({ error: 'invalid_grant' })
    }
    expect(await metric(admin, failed)).toBe(failedBefore + 5)

    // The 6th at the same instance, with the right password: Node-RED's own limit (5 per username
    // in 10 minutes) refuses it before asking flowadmin, with stock Node-RED's own 500.
    const sixth = await editorLogin(fleetA.url, 'locked', passwordOf('locked'))
    expect({ status: sixth.status, body: await sixth.json() }).toEqual({
      status: 500,
      body: {
        error: 'server_error',
        error_description: 'Too many login attempts. Wait 10 minutes and try again',
      },
    })
    expect(await metric(admin, failed)).toBe(failedBefore + 5)
    expect(await metric(admin, throttled)).toBe(throttledBefore)

    // Another instance has no count of its own, but flowadmin has: the right password is throttled.
    const elsewhere = await editorLogin(fleetB.url, 'locked', passwordOf('locked'))
    expect(elsewhere.status).toBe(403)
    expect(await elsewhere.json()).toMatchObject({ error: 'invalid_grant' })
    expect(await metric(admin, throttled)).toBe(throttledBefore + 1)
    expect(audit(flowadmin.run).filter((entry) => entry.event === 'login.throttled')).toEqual([
      expect.objectContaining({ user: 'locked', client: CLIENT_ID, address: '127.0.0.1' }),
    ])

    // flowadmin's own login for that user from that address waits too.
    const direct = await fetch(`${flowadmin.url}/auth/token`, {
      method: 'POST',
      body: new URLSearchParams({
        client_id: 'service-admin',
        grant_type: 'password',
        scope: '',
        username: 'locked',
        password: passwordOf('locked'),
      }),
    })
    expect(direct.status).toBe(429)
    expect(direct.headers.get('retry-after')).toMatch(/^[1-9]\d*$/)
    expect(await direct.json()).toMatchObject({ error: 'temporarily_unavailable' })
  })

  it('node-red-admin logs in to Node-RED with a flowadmin user and lists its nodes', async () => {
    const home = path.join(work.dir, 'home')
    await mkdir(home)
    const admin = (args: string[], answers: string[] = []) => nodeRedAdmin(home, args, answers)

    expect(lines((await admin(['target', fleetA.url])).stdout)).toEqual([`Target: ${fleetA.url}`, ''])
    // It asks for `*`, which a `read` user does not hold: refused, no token kept.
    const refused = await admin(['login'], ['reader', passwordOf('reader')])
    expect({ code: refused.code, stderr: refused.stderr }).toEqual({
      code: 1,
      stderr: 'Error: Login failed\n',
    })
    expect(await storedToken(home)).toBeNull()

    const login = await admin(['login'], ['admin', passwordOf('admin')])
    expect({ code: login.code, stdout: login.stdout }).toEqual({
      code: 0,
      stdout: 'Username: Password: Logged in\n',
    })
    const token = await storedToken(home)
    expect(await introspect(token as string)).toMatchObject({
      active: true,
      username: 'admin',
      client_id: CLIENT_ID,
    })

    const list = await admin(['list'])
    expect(list.code).toBe(0)
    const printed = lines(list.stdout)
    expect(printed[0]).toMatch(/^Nodes\s+Types\s+State$/)
    expect(printed).toContainEqual(expect.stringMatching(/^node-red\/inject\s+inject\s+enabled$/))
    expect(printed).toContainEqual(expect.stringMatching(/^node-red\/debug\s+debug\s+enabled$/))
  })
})

describe('two instances with the helper on one flowadmin', () => {
  it('one revocation at flowadmin is refused by both at their next request', async () => {
    const token = await tokenFor('admin', '*')
    expect(await statusOf(fleetA.url, '/flows', token)).toBe(200)
    expect(await statusOf(fleetB.url, '/flows', token)).toBe(200)
    const revoked = await fetch(`${flowadmin.url}/auth/revoke`, {
      method: 'POST',
      headers: bearer(token),
      body: new URLSearchParams({ token }),
    })
    expect(revoked.status).toBe(200)
    expect(await statusOf(fleetA.url, '/flows', token)).toBe(401)
    expect(await statusOf(fleetB.url, '/flows', token)).toBe(401)
  })

  it('refuse every token within timeoutMs while flowadmin does not answer, and accept them once it does', async () => {
    const token = await tokenFor('admin', '*')
    const fleet = [fleetA, fleetB]
    for (const run of fleet) expect(await statusOf(run.url, '/flows', token)).toBe(200)
    const marks = fleet.map((run) => run.stderr.length)

    // Stopped, not ended: its port still accepts connections, and nothing answers on them.
    flowadmin.run.child.kill('SIGSTOP')
    try {
      expect(await Promise.all(fleet.map((run) => statusOf(run.url, '/flows', token)))).toEqual([401, 401])
    } finally {
      flowadmin.run.child.kill('SIGCONT')
    }
    for (const run of fleet) expect(await statusOf(run.url, '/flows', token)).toBe(200)
    for (const [index, run] of fleet.entries()) {
      const said = () => helperLines(run, marks[index] as number)
      await whenOutput(run.child, () => said().length === 2)
      expect(said()).toEqual([
        `flowadmin at ${flowadmin.url} is unreachable (no answer within ${TIMEOUT_MS} ms): logins and tokens are refused until it answers`,
        `flowadmin at ${flowadmin.url} is reachable again`,
      ])
    }
  })

  it('a logout while flowadmin is stopped: 200, the token is refused, and flowadmin revokes it once it is back', async () => {
    const token = (
      (await (await editorLogin(fleetA.url, 'admin', passwordOf('admin'))).json()) as {
        access_token: string
      }
    ).access_token
    const other = await tokenFor('admin', '*')
    expect(await statusOf(fleetA.url, '/flows', token)).toBe(200)
    const mark = fleetA.stderr.length

    expect(await flowadmin.stop()).toBe(0)
    expect((await editorLogout(fleetA.url, token)).status).toBe(200)
    expect(await statusOf(fleetA.url, '/flows', token)).toBe(401)

    flowadmin = await startBuiltServer(settingsFile, { port: new URL(flowadmin.url).port })
    // Back, and still refused at the instance; another token gets in (and its introspection, the
    // first good answer, starts the retry at once).
    expect(await statusOf(fleetA.url, '/flows', token)).toBe(401)
    expect(await statusOf(fleetA.url, '/flows', other)).toBe(200)
    const revoked = () => audit(flowadmin.run).some((entry) => entry.event === 'token.revoked')
    await whenOutput(flowadmin.run.child, revoked)
    expect(await introspect(token)).toEqual({ active: false })
    expect(await statusOf(fleetB.url, '/flows', token)).toBe(401)
    expect(await introspect(other)).toMatchObject({ active: true })
    const said = () => helperLines(fleetA, mark)
    await whenOutput(fleetA.child, () => said().length === 4)
    expect(said().slice(1)).toEqual([
      `a logout could not be revoked at flowadmin at ${flowadmin.url}: its token is refused on this instance and the revocation is retried until flowadmin takes it`,
      `flowadmin at ${flowadmin.url} is reachable again`,
      `the logouts that waited for flowadmin at ${flowadmin.url} are revoked there`,
    ])
  })

  it('refuse every token while flowadmin is stopped, and accept them again once it is back on its port', async () => {
    const token = await tokenFor('admin', '*')
    const fleet = [fleetA, fleetB]
    for (const run of fleet) expect(await statusOf(run.url, '/flows', token)).toBe(200)
    const marks = fleet.map((run) => run.stderr.length)

    expect(await flowadmin.stop()).toBe(0)
    for (const run of fleet) {
      expect(await statusOf(run.url, '/flows', token)).toBe(401)
      expect((await editorLogin(run.url, 'admin', passwordOf('admin'))).status).toBe(403)
    }

    // The same settings and SQLite file, on the same port: the token issued before is good again.
    flowadmin = await startBuiltServer(settingsFile, { port: new URL(flowadmin.url).port })
    for (const run of fleet) expect(await statusOf(run.url, '/flows', token)).toBe(200)
    expect((await editorLogin(fleetB.url, 'admin', passwordOf('admin'))).status).toBe(200)
    for (const [index, run] of fleet.entries()) {
      const said = () => helperLines(run, marks[index] as number)
      await whenOutput(run.child, () => said().length === 2)
      expect(said()).toEqual([
        expect.stringMatching(
          new RegExp(
            `^flowadmin at ${escaped(flowadmin.url)} is unreachable \\(.+\\): logins and tokens are refused until it answers$`,
          ),
        ),
        `flowadmin at ${flowadmin.url} is reachable again`,
      ])
    }
  })
})

describe('the transport to flowadmin', () => {
  it('a plain-http url to another host stops Node-RED at start, with a message that says why and what to do', async () => {
    const started = startNodeRed(
      path.join(work.dir, 'insecure'),
      helperSettings('http://flowadmin.example:1880'),
      secretEnv,
    )
    const error = await started.then(
      () => new Error('Node-RED started'),
      (refused: Error) => refused,
    )
    expect(error.message).toMatch(/^Node-RED ended \(1\) before it listened:/)
    expect(error.message).toContain(
      'Error: @flowadmin/node-red: url is plain http to flowadmin.example, so the client secret, passwords and tokens would cross the network in clear: use https://, or set allowInsecureHttp: true if that network is trusted (see the README)',
    )
    expect(error.message).not.toContain(SECRET)
  })
})
