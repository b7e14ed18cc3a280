// People of the organisation's directory sign in against a real OpenLDAP slapd (Debian's package)
// over StartTLS with a test CA: the built flowadmin, its password grant, the group mapping, refusals
// that look and take alike, hostile usernames, a directory that stops or goes silent, a wrong CA,
// and a stock Node-RED 4.1 editor whose login form asks flowadmin through the helper. The audit
// lines of the failed sign-ins are kept for the fail2ban check (scripts/check-fail2ban.sh).
import { randomBytes } from 'node:crypto'
import { mkdir, writeFile } from 'node:fs/promises'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashPassword } from '../src/adapters/argon2.js'
import { type BuiltServer, startBuiltServer, useServerFolder } from './cli-process.js'
import { type NodeRedRun, startNodeRed, stopNodeReds } from './node-red-process.js'
import { deploy } from './node-red-sso.js'
import {
  GROUPS,
  PEOPLE,
  PEOPLE_OF_DIRECTORY,
  SERVICE_DN,
  SERVICE_PASSWORD,
  type Slapd,
  startSlapd,
} from './slapd.js'

const RESULTS = fileURLToPath(new URL('../../../test-results/fail2ban-directory/', import.meta.url))
const HELPER = fileURLToPath(new URL('../../node-red/index.js', import.meta.url))
const LOCAL_PASSWORD = 'the local admin password'
const FLEET = 'fleet'
const SECRET = randomBytes(24).toString('base64url')
/** Milliseconds flowadmin waits for the directory (adminAuth.ldap.timeout). */
const BOUND = 1500
/** What a 503 may take beyond the bound: the answer's way back on a busy machine. */
const SLACK = 1000

const folder = useServerFolder('directory')
let slapd: Slapd
let flowadmin: BuiltServer

/** adminAuth.ldap for the test slapd: StartTLS with `ca`, people by uid, groups by memberOf. */
const ldapSettings = (ca: string) => ({
  url: slapd.url,
  startTls: true,
  caFile: ca,
  bindDn: SERVICE_DN,
  userSearch: { base: PEOPLE, filter: '(&(objectClass=inetOrgPerson)(uid={username}))' },
  permissions: {
    map: {
      [`cn=nr-admins,${GROUPS}`]: '*',
      'nr-deployers': ['flows.read', 'flows.write', 'nodes.read'],
      'NR-Viewers': 'read',
    },
  },
  timeout: BOUND,
  label: 'Example directory',
  // The timing test guesses 100 wrong passwords; the throttle's own numbers are the core's tests'.
  throttle: { maxFailures: 1000, windowSeconds: 60 },
})

/** Starts a built flowadmin on the test slapd, with `admin` configured locally. */
async function startFlowadmin(name: string, ca: string): Promise<BuiltServer> {
  return startBuiltServer(path.join(folder.dir, name, 'settings.json'), {
    settings: {
      storage: 'sqlite',
      userDir: '.',
      auditLog: 'stdout',
      adminAuth: {
        users: [{ username: 'admin', password: await hashPassword(LOCAL_PASSWORD), permissions: '*' }],
        resourceServers: [{ id: FLEET, secret: await hashPassword(SECRET) }],
        throttle: { maxFailuresPerUser: 1000, maxFailuresPerAddress: 100_000 },
        ldap: ldapSettings(ca),
      },
    },
    env: { FLOWADMIN_LDAP_BIND_PASSWORD: SERVICE_PASSWORD },
  })
}

beforeAll(async () => {
  slapd = await startSlapd({ tls: true })
  await mkdir(path.join(folder.dir, 'main'), { recursive: true })
  flowadmin = await startFlowadmin('main', slapd.ca as string)
})
afterAll(async () => {
  await stopNodeReds()
  await slapd?.close()
})

/** The password grant at `url`. */
function grant(url: string, username: string, password: string, scope = '*') {
  return fetch(`${url}/auth/token`, {
    method: 'POST',
    body: new URLSearchParams({
      client_id: 'service-admin',
      grant_type: 'password',
      scope,
      username,
      password,
    }),
  })
}
const login = (username: string, password: string, scope = '*') =>
  grant(flowadmin.url, username, password, scope)

/** The token of a sign-in that must succeed. */
async function tokenOf(name: keyof typeof PEOPLE_OF_DIRECTORY, scope = '*'): Promise<string> {
  const res = await login(name, PEOPLE_OF_DIRECTORY[name].password, scope)
  expect(res.status, `${name} signs in`).toBe(200)
  return ((await res.json()) as { access_token: string }).access_token
}

const get = (url: string, token: string) => fetch(url, { headers: { authorization: `Bearer ${token}` } })

/** The audit lines of `event` the server printed so far, parsed. */
const auditLines = (server: BuiltServer, event: string) =>
  server.run.stdout
    .split('\n')
    .filter((line) => line.includes(`"event":"${event}"`))
    .map((line) => JSON.parse(line) as Record<string, unknown>)

describe('a person of the directory', () => {
  it('signs in with the password grant, with the rights of their groups, remembered as the directory’s', async () => {
    const ada = await tokenOf('ada')
    const sessions = (await (await get(`${flowadmin.url}/auth/tokens`, ada)).json()) as {
      tokens: Array<Record<string, unknown>>
    }
    expect(sessions.tokens).toEqual([
      expect.objectContaining({
        user: 'ada',
        scope: ['*'],
        sign_in: 'password',
        provider: 'Example directory',
        current: true,
      }),
    ])
    expect((await get(`${flowadmin.url}/settings`, ada)).status).toBe(200)
    // dev's groups give flows.* and nodes.read, by the group's name; vic's read, by name in any case.
    const dev = await tokenOf('dev', '')
    const devSessions = (await (await get(`${flowadmin.url}/auth/tokens`, dev)).json()) as {
      tokens: Array<{ scope: string[] }>
    }
    expect(devSessions.tokens[0]?.scope).toEqual(['flows.read', 'flows.write', 'nodes.read'])
    const vic = await tokenOf('vic', '')
    expect((await get(`${flowadmin.url}/nodes`, vic)).status).toBe(200)
  })

  it('without the rights for a write is refused it (insufficient_scope), and cannot ask for more', async () => {
    const vic = await tokenOf('vic', '')
    const res = await fetch(`${flowadmin.url}/nodes/node-red-contrib-nothing`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${vic}`, 'content-type': 'application/json' },
      body: JSON.stringify({ enabled: false }),
    })
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="flowadmin", error="insufficient_scope"')
    expect((await login('vic', PEOPLE_OF_DIRECTORY.vic.password, '*')).status).toBe(401)
    // Groups that map to nothing give no token at all.
    expect((await login('mal', PEOPLE_OF_DIRECTORY.mal.password, '')).status).toBe(401)
    expect(auditLines(flowadmin, 'directory.refused').at(-1)).toMatchObject({
      reason: 'no_permissions',
      user: 'mal',
    })
  })

  it('whose name is a configured user’s cannot sign in with the directory’s password', async () => {
    expect((await login('admin', PEOPLE_OF_DIRECTORY.admin.password)).status).toBe(401)
    expect((await login('admin', LOCAL_PASSWORD)).status).toBe(200)
  })
})

describe('refusals', () => {
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b)
    return sorted[Math.floor(sorted.length / 2)] as number
  }
  type Kind = 'disabled' | 'wrong' | 'unknown'
  const ROUNDS = 150

  it('a disabled account, a wrong password and an unknown name look alike and take alike (150 each)', async () => {
    const kinds: Record<Kind, () => Promise<Response>> = {
      disabled: () => login('dis', PEOPLE_OF_DIRECTORY.dis.password),
      wrong: () => login('vic', 'not vic’s password'),
      unknown: () => login('nobody', 'whatever'),
    }
    const times: Record<Kind, number[]> = { disabled: [], wrong: [], unknown: [] }
    const answers = new Set<string>()
    for (let i = 0; i < 5; i++) for (const attempt of Object.values(kinds)) await (await attempt()).text()
    // Rounds of one of each, in turning orders: a busy moment of the machine falls on one round,
    // and each kind is compared with the others of its round (the time over the round's mean).
    const orders: Kind[][] = [
      ['disabled', 'wrong', 'unknown'],
      ['wrong', 'unknown', 'disabled'],
      ['unknown', 'disabled', 'wrong'],
    ]
    const relative: Record<Kind, number[]> = { disabled: [], wrong: [], unknown: [] }
    // At least 50 of each; 150 make the medians steady on a busy machine.
    for (let i = 0; i < ROUNDS; i++) {
      const round = {} as Record<Kind, number>
      for (const kind of orders[i % 3] as Kind[]) {
        const started = performance.now()
        const res = await kinds[kind]()
        const body = await res.text()
        round[kind] = performance.now() - started
        times[kind].push(round[kind])
        answers.add(
          `${res.status} ${body} ${res.headers.get('content-length')} ${res.headers.get('www-authenticate')}`,
        )
      }
      const mean = (round.disabled + round.wrong + round.unknown) / 3
      for (const kind of orders[0] as Kind[]) relative[kind].push(round[kind] / mean)
    }
    expect([...answers]).toEqual(['401  0 null'])
    const shown = (record: Record<Kind, number[]>, digits: number) =>
      Object.entries(record)
        .map(([kind, list]) => `${kind} ${median(list).toFixed(digits)}`)
        .join(', ')
    const medians = Object.values(relative).map(median)
    const ratio = Math.max(...medians) / Math.min(...medians)
    console.log(
      `directory refusals, ${ROUNDS} each: median ms ${shown(times, 2)}; median of each over its round's mean ${shown(relative, 3)}: ratio ${ratio.toFixed(3)}`,
    )
    expect(ratio).toBeLessThanOrEqual(1.1)
    expect(auditLines(flowadmin, 'login.failed').filter((line) => line.reason === 'disabled')).toHaveLength(
      155,
    )
  })

  it('usernames with *, (, ), \\ and NUL find nobody and break nothing', async () => {
    const password = PEOPLE_OF_DIRECTORY.ada.password
    for (const name of [
      '*',
      'ad*',
      '*)(uid=*',
      'ada)(|(uid=*',
      'ada)(objectClass=*',
      '(',
      ')',
      '\\',
      'ada\\',
      '\\2a',
      'ada\u0000',
      '\u0000',
      'ada\u0000)(uid=*',
    ]) {
      const res = await login(name, password)
      expect([400, 401], JSON.stringify(name)).toContain(res.status)
    }
    // The directory still answers, and ada is still ada.
    await tokenOf('ada')
  })
})

describe('faults', () => {
  it('a stopped directory: 503 for its people within the bound, while a configured user signs in', async () => {
    await slapd.stop()
    try {
      const started = performance.now()
      const res = await login('ada', PEOPLE_OF_DIRECTORY.ada.password)
      const took = performance.now() - started
      expect(res.status).toBe(503)
      expect(res.headers.get('retry-after')).toBe('10')
      expect(await res.json()).toEqual({
        error: 'temporarily_unavailable',
        error_description:
          'The directory cannot be reached now, so its people cannot sign in. Try again shortly.',
      })
      expect(took).toBeLessThan(BOUND + SLACK)
      expect((await login('admin', LOCAL_PASSWORD)).status).toBe(200)
      expect(auditLines(flowadmin, 'directory.refused').at(-1)).toMatchObject({
        reason: 'unavailable',
        detail: expect.stringContaining('ECONNREFUSED'),
      })
    } finally {
      await slapd.start()
    }
    await tokenOf('ada')
  })

  it('a directory that takes connections and answers nothing: 503 at the bound, then signs in again', async () => {
    slapd.pause()
    try {
      const started = performance.now()
      const [res, local] = await Promise.all([
        login('vic', PEOPLE_OF_DIRECTORY.vic.password, ''),
        login('admin', LOCAL_PASSWORD),
      ])
      const took = performance.now() - started
      expect(res.status).toBe(503)
      expect(local.status).toBe(200)
      expect(took).toBeGreaterThanOrEqual(BOUND - 50)
      expect(took).toBeLessThan(BOUND + SLACK)
    } finally {
      slapd.resume()
    }
    await tokenOf('vic', '')
  })

  it('StartTLS with a CA that did not sign the directory’s certificate is refused', async () => {
    await mkdir(path.join(folder.dir, 'wrong-ca'), { recursive: true })
    const wrong = await startFlowadmin('wrong-ca', slapd.wrongCa as string)
    try {
      const res = await grant(wrong.url, 'ada', PEOPLE_OF_DIRECTORY.ada.password)
      expect(res.status).toBe(503)
      expect(auditLines(wrong, 'directory.refused').at(-1)).toMatchObject({
        reason: 'unavailable',
        detail: expect.stringMatching(/^TLS with the directory .* failed: /),
      })
      expect(wrong.run.stdout + wrong.run.stderr).not.toContain(PEOPLE_OF_DIRECTORY.ada.password)
    } finally {
      await wrong.stop()
    }
  })
})

describe('a stock Node-RED 4.1 editor', () => {
  let nodeRed: NodeRedRun

  beforeAll(async () => {
    nodeRed = await startNodeRed(
      path.join(folder.dir, 'node-red'),
      {
        preamble: `
const flowadmin = require(${JSON.stringify(HELPER)})
const options = { url: ${JSON.stringify(flowadmin.url)}, clientId: ${JSON.stringify(FLEET)}, clientSecret: process.env.FLOWADMIN_SECRET, cacheMs: 0 }
`,
        adminAuth: 'flowadmin.adminAuth(options)',
      },
      { FLOWADMIN_SECRET: SECRET },
    )
  })

  /** The editor's login form, as Node-RED's editor posts it (the person's own permissions). */
  const editorLogin = (username: string, password: string) =>
    fetch(`${nodeRed.url}/auth/token`, {
      method: 'POST',
      body: new URLSearchParams({
        client_id: 'node-red-editor',
        grant_type: 'password',
        scope: '',
        username,
        password,
      }),
    })

  it('signs a person of the directory in through the helper, with their groups’ rights', async () => {
    const res = await editorLogin('ada', PEOPLE_OF_DIRECTORY.ada.password)
    expect(res.status).toBe(200)
    const { access_token: token } = (await res.json()) as { access_token: string }
    const settings = await get(`${nodeRed.url}/settings`, token)
    expect(((await settings.json()) as { user: unknown }).user).toEqual({ username: 'ada', permissions: '*' })
    expect((await deploy(nodeRed.url, token)).status).toBe(200)
  })

  it('refuses a deploy to a viewer, and a wrong password', async () => {
    const res = await editorLogin('vic', PEOPLE_OF_DIRECTORY.vic.password)
    expect(res.status).toBe(200)
    const { access_token: token } = (await res.json()) as { access_token: string }
    expect((await deploy(nodeRed.url, token)).status).toBe(401)
    expect((await editorLogin('vic', 'wrong')).status).toBe(403)
  })
})

describe('the audit', () => {
  it('names the address of every failed sign-in, for fail2ban, and never a password', async () => {
    const lines = flowadmin.run.stdout.split('\n').filter((line) => line.startsWith('{'))
    for (const person of Object.values(PEOPLE_OF_DIRECTORY))
      expect(flowadmin.run.stdout).not.toContain(person.password)
    expect(flowadmin.run.stdout + flowadmin.run.stderr).not.toContain(SERVICE_PASSWORD)
    const failed = lines.filter((line) => /"event":"login\.(failed|throttled)"/.test(line))
    expect(failed.length).toBeGreaterThan(150)
    await mkdir(RESULTS, { recursive: true })
    await writeFile(path.join(RESULTS, 'audit.log'), `${lines.join('\n')}\n`)
    await writeFile(
      path.join(RESULTS, 'failed-addresses.txt'),
      `${failed.map((line) => (JSON.parse(line) as { address: string }).address).join('\n')}\n`,
    )
  })
})
