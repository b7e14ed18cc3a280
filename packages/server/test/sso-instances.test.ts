// Single sign-on across two built instances on one PostgreSQL database, behind a round-robin
// proxy without affinity (written here: each request goes to the other instance than the one
// before), with a real OpenID provider (oidc-provider): a sign-in started at one instance finishes
// at the other, and a one-time code traded at both at once is traded once.
import { createHash, randomBytes } from 'node:crypto'
import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import * as path from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { useTestDatabase } from '../../adapter-postgres/test/pg-server.js'
import { startBuiltServer, useServerFolder } from './cli-process.js'
import { freePort } from './node-red-process.js'
import {
  CLIENT_ID,
  CLIENT_SECRET,
  type CookieJar,
  createCookieJar,
  startProvider,
  type TestProvider,
  walkSignIn,
} from './oidc-provider.js'

const database = useTestDatabase()

/** The resource server (a fleet of Node-RED editors), its secret, and its registered redirect URI. */
const FLEET = 'fleet'
const FLEET_SECRET = randomBytes(24).toString('base64url')
const FLEET_BASIC = `Basic ${Buffer.from(`${FLEET}:${FLEET_SECRET}`).toString('base64')}`
/** Never fetched: the walk stops when the browser is sent there. */
const FLEET_REDIRECT = 'http://127.0.0.1:9/auth/strategy/callback'

/** A round-robin proxy: each request to the other upstream than the one before; what went where. */
interface RoundRobin {
  url: string
  /** `<method> <path> → <upstream index>`, in order. */
  served: string[]
  /** Forgets what was served; the next request goes to the first upstream. */
  reset(): void
  close(): Promise<void>
}

async function startRoundRobin(upstreams: string[]): Promise<RoundRobin> {
  const served: string[] = []
  let next = 0
  const server: Server = createServer((req, res) => {
    const index = next
    next = (next + 1) % upstreams.length
    served.push(`${req.method} ${(req.url ?? '').split('?')[0]} → ${index}`)
    const target = new URL(req.url ?? '/', upstreams[index])
    const upstream = request(target, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
    })
    upstream.on('error', () => {
      res.writeHead(502)
      res.end()
    })
    req.pipe(upstream)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    served,
    reset() {
      served.length = 0
      next = 0
    },
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

const folder = useServerFolder('sso-instances')
let provider: TestProvider
let proxy: RoundRobin
let instances: string[]

beforeAll(async () => {
  provider = await startProvider()
  const ports = await Promise.all([freePort(), freePort()])
  // The proxy's address is the public one: known before the instances start, it is their redirect URI.
  const upstreams = ports.map((port) => `http://127.0.0.1:${port}`)
  proxy = await startRoundRobin(upstreams)
  const settings = {
    storage: 'postgres',
    postgres: { url: database.current().url, pool: 4 },
    adminAuth: {
      oidc: {
        issuer: provider.issuer,
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        label: 'Sign in with Example ID',
        scope: 'openid profile groups',
        redirectUri: `${proxy.url}/auth/strategy/callback`,
        permissions: { claim: 'groups', map: { 'nr-admins': '*', 'nr-viewers': 'read' } },
      },
      resourceServers: [
        {
          id: FLEET,
          secret: `sha256:${createHash('sha256').update(FLEET_SECRET).digest('hex')}`,
          redirectUris: [FLEET_REDIRECT],
        },
      ],
    },
  }
  instances = []
  for (const [i, port] of ports.entries()) {
    const settingsFile = path.join(folder.dir, `settings-${i}.json`)
    instances.push((await startBuiltServer(settingsFile, { settings, port })).url)
  }
  expect(instances).toEqual(upstreams)
  await provider.register({
    redirectUris: [`${proxy.url}/auth/strategy/callback`],
    backchannelLogoutUri: `${proxy.url}/auth/strategy/backchannel-logout`,
  })
  provider.people.set('ada-sub', { username: 'ada', groups: ['nr-admins'] })
  provider.people.set('vic-sub', { username: 'vic', groups: ['nr-viewers'] })
}, 120_000)

beforeEach(() => {
  proxy.reset()
})

afterAll(async () => {
  await proxy?.close()
  await provider?.close()
})

/** The hops that reached flowadmin through the proxy, each with the instance that answered it. */
const hops = () => proxy.served

/**
 * Trades a console code at POST /auth/token of `base` (the proxy, or one instance straight) from
 * the browser of `jar`: with the cookies it holds for the public address.
 */
const exchange = (jar: CookieJar, code: string, base = proxy.url) =>
  fetch(`${base}/auth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: jar.header(proxy.url) },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, client_id: 'service-editor' }),
  })

/** PKCE S256: a verifier and its challenge. */
function pkce() {
  const verifier = randomBytes(32).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

/** The fleet's browser through /auth/authorize and the provider to the fleet's redirect URI: the code. */
async function fleetCode(login: string, challenge: string) {
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: FLEET,
    redirect_uri: FLEET_REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'editor-state',
  })
  const walked = await walkSignIn(createCookieJar(), `${proxy.url}/auth/authorize?${query}`, login, (url) =>
    url.startsWith(FLEET_REDIRECT),
  )
  const back = new URL(walked.url)
  return { code: back.searchParams.get('code') ?? '', state: back.searchParams.get('state'), walked }
}

/** The fleet trades its code at POST /auth/token of `base`. */
const redeem = (base: string, code: string, verifier: string) =>
  fetch(`${base}/auth/token`, {
    method: 'POST',
    headers: { Authorization: FLEET_BASIC, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: FLEET_REDIRECT,
      code_verifier: verifier,
    }),
  })

describe('single sign-on across two instances without affinity', () => {
  it('a console sign-in started at one instance finishes at the other, its code traded at the first', async () => {
    const jar = createCookieJar()
    const walked = await walkSignIn(jar, `${proxy.url}/auth/strategy?return_to=%2Ftokens`, 'ada-sub', (url) =>
      url.includes('#sso_code='),
    )
    expect(walked.url).toMatch(new RegExp(`^${proxy.url}/tokens#sso_code=[\\w-]{43}$`))
    const code = new URL(walked.url).hash.slice('#sso_code='.length)
    const res = await exchange(jar, code)
    expect(res.status).toBe(200)
    const { access_token } = (await res.json()) as { access_token: string }
    // Each hop landed on the other instance than the one before.
    expect(hops()).toEqual([
      'GET /auth/strategy → 0',
      'GET /auth/strategy/callback → 1',
      'POST /auth/token → 0',
    ])
    for (const instance of instances) {
      const tokens = await fetch(`${instance}/auth/tokens`, {
        headers: { Authorization: `Bearer ${access_token}` },
      })
      expect(tokens.status).toBe(200)
      expect(((await tokens.json()) as { tokens: unknown[] }).tokens).toEqual([
        expect.objectContaining({ user: 'ada', scope: ['*'], current: true }),
      ])
    }
  })

  it('an editor’s sign-in through /auth/authorize finishes at the other instance, and the fleet trades its code at the first', async () => {
    const { verifier, challenge } = pkce()
    const { code, state } = await fleetCode('vic-sub', challenge)
    expect(state).toBe('editor-state')
    expect(code).toMatch(/^[\w-]{43}$/)
    const res = await fetch(`${proxy.url}/auth/token`, {
      method: 'POST',
      headers: { Authorization: FLEET_BASIC, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: FLEET_REDIRECT,
        code_verifier: verifier,
      }),
    })
    expect(res.status).toBe(200)
    const { access_token } = (await res.json()) as { access_token: string }
    expect(hops()).toEqual([
      'GET /auth/authorize → 0',
      'GET /auth/strategy/callback → 1',
      'POST /auth/token → 0',
    ])
    // The editor's token, for the fleet, is known to both instances.
    for (const instance of instances) {
      const answer = await fetch(`${instance}/auth/introspect`, {
        method: 'POST',
        headers: { Authorization: FLEET_BASIC, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: access_token }),
      })
      expect(await answer.json()).toMatchObject({
        active: true,
        username: 'vic',
        client_id: FLEET,
        scope: 'read',
      })
    }
  })

  it('a one-time code traded at both instances at once is traded once; the other is told invalid_grant', async () => {
    const { verifier, challenge } = pkce()
    const { code } = await fleetCode('ada-sub', challenge)
    const fleet = await Promise.all(instances.map((instance) => redeem(instance, code, verifier)))
    expect(fleet.map((res) => res.status).sort()).toEqual([200, 400])
    const refused = fleet.find((res) => res.status === 400) as Response
    expect(await refused.json()).toEqual({
      error: 'invalid_grant',
      error_description: 'The code is unknown, used or expired: sign in again',
    })

    const jar = createCookieJar()
    const walked = await walkSignIn(jar, `${proxy.url}/auth/strategy`, 'vic-sub', (url) =>
      url.includes('#sso_code='),
    )
    const consoleCode = new URL(walked.url).hash.slice('#sso_code='.length)
    const console = await Promise.all(instances.map((instance) => exchange(jar, consoleCode, instance)))
    expect(console.map((res) => res.status).sort()).toEqual([200, 400])
    expect(await (console.find((res) => res.status === 400) as Response).json()).toMatchObject({
      error: 'invalid_grant',
    })
  })
})

describe('names of tokens saved before names were bound', () => {
  it('an instance starting binds each to the identity of its oldest token: another identity is refused, the first keeps it', async () => {
    provider.people.set('tess-sub', { username: 'tess', groups: ['nr-admins'] })
    const jar = createCookieJar()
    const walked = await walkSignIn(jar, `${proxy.url}/auth/strategy`, 'tess-sub', (url) =>
      url.includes('#sso_code='),
    )
    const issued = await exchange(jar, new URL(walked.url).hash.slice('#sso_code='.length))
    expect(issued.status).toBe(200)
    const tess = {
      Authorization: `Bearer ${((await issued.json()) as { access_token: string }).access_token}`,
    }
    // As before names were bound: her token is in the store, her name bound to nobody.
    await database.current().query('DELETE FROM flowadmin_sso_names')
    // The upgraded flowadmin starts a third instance on the same database.
    const third = await startBuiltServer(path.join(folder.dir, 'settings-0.json'), { port: await freePort() })
    // Another account of the provider now says it is tess: refused, at either instance.
    provider.people.set('tom-sub', { username: 'tess', groups: ['nr-viewers'] })
    const refused = await walkSignIn(createCookieJar(), `${proxy.url}/auth/strategy`, 'tom-sub', (url) =>
      url.includes('#sso_code='),
    )
    expect(refused.url).not.toContain('#sso_code=')
    expect(refused.res.status).toBe(403)
    expect(await refused.res.text()).toContain(
      'another account of the provider signed in here with that name first',
    )
    // Tess keeps her name: her token works and lists hers alone.
    const listed = await fetch(`${third.url}/auth/tokens`, { headers: tess })
    expect(listed.status).toBe(200)
    expect(await listed.json()).toMatchObject({ tokens: [{ user: 'tess' }] })
  })
})
