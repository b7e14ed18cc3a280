// Who may do what, where, with real parts, shared by the HTTP test and the browser test: the built
// flowadmin with two groups of instances (line-1: press-*, line-2: weld-*), users with grants, an
// OpenID provider (oidc-provider) whose groups map to grants, and three stock Node-RED 4.1
// processes, press-1 and press-2 in line-1 and weld-1 in line-2, each enrolled with a credential of
// its own, the helper's login form asking flowadmin and its audit logger filing Node-RED's events
// in flowadmin's trail. All on 127.0.0.1.
import { createHash, randomBytes } from 'node:crypto'
import * as path from 'node:path'
import { expect } from 'vitest'
import { hashPassword } from '../src/adapters/argon2.js'
import { type BuiltServer, killAll, requireBuild, startBuiltServer, writeSettings } from './cli-process.js'
import { tempDir } from './ecosystem.js'
import { HELPER } from './fleet-setup.js'
import { freePort, type NodeRedRun, startNodeRed, stopNodeReds } from './node-red-process.js'
import {
  browse,
  CLIENT_ID,
  CLIENT_SECRET,
  createCookieJar,
  pressProviderButton,
  startProvider,
  type TestProvider,
  walkSignIn,
} from './oidc-provider.js'

/** Every configured user's password. */
export const PASSWORD = 'access test password'
/** The resource server the instances enrol with. */
export const FLEET = 'fleet'
/** The instances, in the groups the settings' patterns give them. */
export const INSTANCES = ['press-1', 'press-2', 'weld-1'] as const
export type InstanceName = (typeof INSTANCES)[number]

/** alice at the start: deployer on line-1, viewer on line-2, nothing on flowadmin. */
export const ALICE_GRANTS = [
  { role: 'deployer', on: 'line-1' },
  { role: 'viewer', on: 'line-2' },
]

/** The identity provider's groups, mapped to grants on the groups of instances. */
export const PROVIDER_MAP = {
  'line-1-operators': [{ role: 'deployer', on: 'line-1' }],
  'line-2-viewers': [{ role: 'viewer', on: 'line-2' }],
}
/** People at the provider: their account id (also `sub`) → name and groups. */
export const PEOPLE = {
  'olga-sub': { username: 'olga', groups: ['line-1-operators', 'line-2-viewers'] },
  'otto-sub': { username: 'otto', groups: ['line-1-operators'] },
} as const

const SECRET = randomBytes(24).toString('base64url')

/** HTTP Basic of a client id and secret (the form-encoding of RFC 6749 §2.3.1). */
export const basicOf = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`

/** An enrolled instance: its Node-RED, its own credential and its editors' sign-in callback. */
export interface Instance {
  name: InstanceName
  run: NodeRedRun
  clientId: string
  /** HTTP Basic with its own credential, as the helper calls flowadmin. */
  basic: string
  /** Registered at flowadmin for the fleet: Node-RED's sign-in callback at this instance. */
  redirectUri: string
}

export interface AccessFleet {
  flowadmin: BuiltServer
  provider: TestProvider
  instances: Record<InstanceName, Instance>
  /** A token for flowadmin's own API as `admin` (every permission). */
  adminToken: string
  /** Writes flowadmin's settings with `aliceGrants` as alice's (then SIGHUP makes them count). */
  writeFlowadminSettings(aliceGrants: unknown[]): Promise<void>
  /** An enrolment (of `body`'s instance, with its labels) traded for the instance's credential. */
  enrol(body: Record<string, unknown>): Promise<{ clientId: string; clientSecret: string }>
  stop(): Promise<void>
}

/**
 * The helper's settings on the instance's own credential (from the environment), no cache; its
 * audit logger files Node-RED's events under the id that credential names, at once.
 */
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
  audit: { delayMs: 0 },
}
`,
    adminAuth: 'flowadmin.adminAuth(options)',
    httpAdminMiddleware: 'flowadmin.httpAdminMiddleware(options)',
    logging: `{ console: { level: 'info', metrics: false, audit: false }, flowadmin: flowadmin.auditLogger(options) }`,
  }
}

/** A JSON POST that must succeed: its body. */
async function postJson(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })
  expect(res.status, await res.clone().text()).toBeLessThan(300)
  return (await res.json()) as Record<string, string>
}

export async function startAccessFleet(): Promise<AccessFleet> {
  requireBuild()
  const work = await tempDir('flowadmin-access-')
  const settingsFile = path.join(work.dir, 'flowadmin', 'settings.json')
  // The users' hash, made once: a new one would end their tokens (a password change).
  const hash = await hashPassword(PASSWORD)
  const provider = await startProvider()
  const ports = await Promise.all(INSTANCES.map(() => freePort()))
  const redirectUris = ports.map((port) => `http://127.0.0.1:${port}/auth/strategy/callback`)
  const writeFlowadminSettings = (aliceGrants: unknown[]) =>
    writeSettings(settingsFile, {
      storage: 'sqlite',
      auditLog: 'off',
      fleet: { modules: true, groups: { 'line-1': ['press-*'], 'line-2': ['weld-*'] } },
      adminAuth: {
        users: [
          { username: 'admin', password: hash, permissions: '*' },
          { username: 'alice', password: hash, grants: aliceGrants },
          { username: 'carl', password: hash, grants: [{ role: 'viewer', on: 'line-2' }] },
        ],
        oidc: {
          issuer: provider.issuer,
          clientId: CLIENT_ID,
          label: 'Sign in with Example ID',
          scope: 'openid profile groups',
          permissions: { claim: 'groups', map: PROVIDER_MAP },
        },
        resourceServers: [
          {
            id: FLEET,
            secret: `sha256:${createHash('sha256').update(SECRET).digest('hex')}`,
            fleet: true,
            redirectUris,
          },
        ],
      },
    })
  await writeFlowadminSettings(ALICE_GRANTS)
  const flowadmin = await startBuiltServer(settingsFile, {
    env: { FLOWADMIN_OIDC_CLIENT_SECRET: CLIENT_SECRET },
  })
  await provider.register({
    redirectUris: [`${flowadmin.url}/auth/strategy/callback`],
    backchannelLogoutUri: `${flowadmin.url}/auth/strategy/backchannel-logout`,
  })
  for (const [sub, person] of Object.entries(PEOPLE)) {
    provider.people.set(sub, { username: person.username, groups: [...person.groups] })
  }
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
  expect(login.status).toBe(200)
  const { access_token: adminToken } = (await login.json()) as { access_token: string }
  const enrol = async (body: Record<string, unknown>) => {
    const made = await postJson(
      `${flowadmin.url}/fleet/enrolments`,
      { resourceServer: FLEET, ...body },
      { authorization: `Bearer ${adminToken}` },
    )
    const enrolled = await postJson(`${flowadmin.url}/fleet/enrol`, { token: made.token })
    return { clientId: enrolled.clientId as string, clientSecret: enrolled.clientSecret as string }
  }
  const started = await Promise.all(
    INSTANCES.map(async (name, i): Promise<Instance> => {
      const { clientId, clientSecret } = await enrol({ instance: name })
      const run = await startNodeRed(
        path.join(work.dir, name),
        helperSettings(flowadmin.url, clientId),
        { FLOWADMIN_SECRET: clientSecret },
        ports[i],
      )
      return {
        name,
        run,
        clientId,
        basic: basicOf(clientId, clientSecret),
        redirectUri: redirectUris[i] as string,
      }
    }),
  )
  return {
    flowadmin,
    provider,
    instances: Object.fromEntries(started.map((instance) => [instance.name, instance])) as Record<
      InstanceName,
      Instance
    >,
    adminToken,
    writeFlowadminSettings,
    enrol,
    async stop() {
      await stopNodeReds()
      await killAll()
      await provider.close()
      await work.remove()
    },
  }
}

/** `username`'s login at the Node-RED instance (its login form asks flowadmin): the response. */
export const loginFormAt = (run: NodeRedRun, username: string) =>
  fetch(`${run.url}/auth/token`, {
    method: 'POST',
    body: new URLSearchParams({
      client_id: 'node-red-editor',
      grant_type: 'password',
      scope: '',
      username,
      password: PASSWORD,
    }),
  })

/** `username`'s login at the Node-RED instance that must succeed: the token. */
export async function loginAt(run: NodeRedRun, username: string): Promise<string> {
  const res = await loginFormAt(run, username)
  expect(res.status).toBe(200)
  return ((await res.json()) as { access_token: string }).access_token
}

/** A full deployment of no flows, as the editor's Deploy button sends it: the status. */
export async function deploy(run: NodeRedRun, token: string): Promise<number> {
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

/** The flows read from the instance with `token`: the status. */
export async function readFlows(run: NodeRedRun, token: string): Promise<number> {
  const res = await fetch(`${run.url}/flows`, { headers: { authorization: `Bearer ${token}` } })
  await res.arrayBuffer()
  return res.status
}

/** flowadmin's answer about `token`, asked with `basic` (an instance's own credential). */
export async function introspect(flowadmin: BuiltServer, basic: string, token: string) {
  const res = await fetch(`${flowadmin.url}/auth/introspect`, {
    method: 'POST',
    headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token }),
  })
  expect(res.status).toBe(200)
  return (await res.json()) as Record<string, unknown>
}

/**
 * A person of the provider (`sub`) signs in to `instance`'s editor as the helper's sign-in does it:
 * flowadmin's authorization endpoint for the instance's own client id and callback, flowadmin's
 * sign-in page, its provider button, the provider's pages; then the code (PKCE S256) traded with
 * the instance's own credential. Walked over HTTP with a cookie jar, as a browser would: the token.
 */
export async function signInWithProvider(
  fleet: AccessFleet,
  instance: Instance,
  sub: string,
): Promise<string> {
  const base = fleet.flowadmin.url
  const verifier = randomBytes(32).toString('base64url')
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: instance.clientId,
    redirect_uri: instance.redirectUri,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state: 'the-editors-state',
  })
  const jar = createCookieJar()
  const authorize = `${base}/auth/authorize?${query}`
  const page = await browse(jar, authorize)
  expect(page.status).toBe(200)
  const toProvider = await pressProviderButton(jar, authorize, await page.text())
  const location = toProvider.headers.get('location')
  if (location === null) throw new Error(`the provider button answered ${toProvider.status}`)
  const walked = await walkSignIn(jar, new URL(location, authorize).href, sub, (url) =>
    url.startsWith(instance.redirectUri),
  )
  const back = new URL(walked.url)
  expect(back.searchParams.get('state')).toBe('the-editors-state')
  const code = back.searchParams.get('code')
  if (code === null) throw new Error(`${sub} got no code at ${instance.name}: ${walked.url}`)
  const traded = await fetch(`${base}/auth/token`, {
    method: 'POST',
    headers: { authorization: instance.basic, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: instance.redirectUri,
      code_verifier: verifier,
    }),
  })
  expect(traded.status, await traded.clone().text()).toBe(200)
  return ((await traded.json()) as { access_token: string }).access_token
}
