// Single sign-on against a provider that lies: a small fake OpenID provider on 127.0.0.1 whose
// token endpoint forges the ID token (jose signs it) — a wrong nonce, no signature (`alg: none`),
// another audience, another issuer, expired, signed by a key it never published — and logout
// tokens that are not the provider's. Each is refused with a clear answer and no token. Then key
// rotation at a real provider (oidc-provider): the new key is fetched when an ID token names it.

import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { exportJWK, generateKeyPair, importJWK, type JWK, type JWTPayload, SignJWT, UnsecuredJWT } from 'jose'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { type RunningServer, startServer } from '../src/index.js'
import { captureLog } from './log-capture.js'
import {
  browse,
  CLIENT_ID,
  CLIENT_SECRET,
  createCookieJar,
  startProvider,
  walkSignIn,
} from './oidc-provider.js'

type Forgery = (claims: JWTPayload) => Promise<string>

let userDir: string
let fake: {
  issuer: string
  server: Server
  forge: Forgery
  tokenDown: boolean
  logoutKey: CryptoKey
  kid: string
}
let flowadmin: RunningServer
const audit: string[] = []

const settingsFor = (issuer: string) => ({
  storage: 'memory' as const,
  adminAuth: {
    oidc: {
      issuer,
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      label: 'Sign in with Example ID',
      permissions: { claim: 'groups', map: { 'nr-admins': '*' } },
    },
  },
})

/** A provider that sends the browser straight back and answers the code with `fake.forge`'s ID token. */
async function startFakeProvider() {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true })
  const published: JWK = { ...(await exportJWK(privateKey)), kid: 'published', alg: 'RS256', use: 'sig' }
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...publicJwk } = published
  let nonce = ''
  const state: { issuer: string; forge: Forgery; tokenDown: boolean } = {
    issuer: '',
    tokenDown: false,
    forge: (claims) =>
      new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'published' }).sign(privateKey),
  }
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', state.issuer)
    const json = (body: unknown) => {
      res.setHeader('Content-Type', 'application/json')
      res.end(JSON.stringify(body))
    }
    if (url.pathname === '/.well-known/openid-configuration') {
      return json({
        issuer: state.issuer,
        authorization_endpoint: `${state.issuer}/authorize`,
        token_endpoint: `${state.issuer}/token`,
        jwks_uri: `${state.issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
      })
    }
    if (url.pathname === '/jwks') return json({ keys: [publicJwk] })
    if (url.pathname === '/authorize') {
      nonce = url.searchParams.get('nonce') ?? ''
      const back = new URL(url.searchParams.get('redirect_uri') ?? '')
      back.searchParams.set('code', 'a-code')
      back.searchParams.set('state', url.searchParams.get('state') ?? '')
      res.writeHead(302, { Location: back.href }).end()
      return
    }
    if (url.pathname === '/token' && state.tokenDown) {
      req.socket.destroy()
      return
    }
    if (url.pathname === '/token') {
      const now = Math.floor(Date.now() / 1000)
      const idToken = await state.forge({
        iss: state.issuer,
        aud: CLIENT_ID,
        sub: 'eve-sub',
        iat: now,
        exp: now + 300,
        nonce,
        sid: 'eve-session',
        preferred_username: 'eve',
        groups: ['nr-admins'],
      })
      return json({
        access_token: 'an-access-token',
        token_type: 'Bearer',
        expires_in: 300,
        id_token: idToken,
      })
    }
    res.writeHead(404).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  state.issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    get issuer() {
      return state.issuer
    },
    server,
    get forge() {
      return state.forge
    },
    set forge(forgery: Forgery) {
      state.forge = forgery
    },
    /** The token endpoint hangs up on every request while true. */
    set tokenDown(down: boolean) {
      state.tokenDown = down
    },
    logoutKey: privateKey,
    kid: 'published',
    /** The honest forgery: what a correct provider signs. */
    honest: state.forge,
  }
}

let honest: Forgery

beforeAll(async () => {
  userDir = await mkdtemp(path.join(tmpdir(), 'flowadmin-sso-hostile-'))
  const started = await startFakeProvider()
  fake = started
  honest = started.honest
  flowadmin = await startServer({
    port: 0,
    userDir,
    stdout: (line: string) => audit.push(line),
    logger: captureLog().logger,
    settings: settingsFor(fake.issuer),
  })
})
afterEach(() => {
  fake.forge = honest
})
afterAll(async () => {
  await flowadmin?.close()
  fake?.server.closeAllConnections()
  await new Promise<void>((resolve) => fake?.server.close(() => resolve()))
  await rm(userDir, { recursive: true, force: true })
})

/** One sign-in at the fake provider: the callback's answer. */
async function signIn(): Promise<Response> {
  const jar = createCookieJar()
  const start = await browse(jar, `${flowadmin.url}/auth/strategy`)
  expect(start.status).toBe(302)
  const back = await fetch(start.headers.get('location') ?? '', { redirect: 'manual' })
  return browse(jar, new URL(back.headers.get('location') ?? '').href)
}

const signWith =
  (key: CryptoKey, kid: string): Forgery =>
  (claims) =>
    new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid }).sign(key)

describe('ID tokens the provider did not make as it should', () => {
  it('an honest one signs the person in (the control)', async () => {
    const res = await signIn()
    expect(res.status).toBe(302)
    expect(res.headers.get('location')).toMatch(/^\/#sso_code=/)
  })

  const forgeries: Array<[string, () => Forgery, RegExp]> = [
    ['a wrong nonce', () => (claims) => honest({ ...claims, nonce: 'another-nonce' }), /nonce/],
    ['alg none', () => (claims) => Promise.resolve(new UnsecuredJWT(claims).encode()), /alg/],
    ['another audience', () => (claims) => honest({ ...claims, aud: 'someone-else' }), /aud/],
    ['another issuer', () => (claims) => honest({ ...claims, iss: 'https://evil.example' }), /iss/],
    [
      'expired',
      () => (claims) => {
        const past = Math.floor(Date.now() / 1000) - 3600
        return honest({ ...claims, iat: past - 300, exp: past })
      },
      /exp/,
    ],
    [
      'signed by a key the provider never published',
      () => {
        let key: CryptoKey | null = null
        return async (claims) => {
          key ??= (await generateKeyPair('RS256')).privateKey
          return signWith(key, 'unknown-key')(claims)
        }
      },
      /key/,
    ],
  ]

  for (const [label, forgery, check] of forgeries) {
    it(`${label}: 400 with the check that failed, no code, audited`, async () => {
      fake.forge = forgery()
      const before = audit.length
      const res = await signIn()
      expect(res.status).toBe(400)
      expect(res.headers.get('location')).toBeNull()
      const text = await res.text()
      const message = /<p id="message">([^<]*)<\/p>/.exec(text)?.[1] ?? ''
      expect(message).toMatch(/^The identity provider&#39;s answer failed a check: /)
      expect(message).toMatch(check)
      const refused = audit.slice(before).map((line) => JSON.parse(line) as Record<string, unknown>)
      expect(refused).toContainEqual(expect.objectContaining({ event: 'sso.refused', reason: 'invalid' }))
      expect(refused.some((event) => event.event === 'sso.succeeded')).toBe(false)
    })
  }
})

describe('a provider that goes away in the middle of a sign-in', () => {
  it('503 with a page that says so, no code; the next sign-in works', async () => {
    fake.tokenDown = true
    try {
      const res = await signIn()
      expect(res.status).toBe(503)
      expect(res.headers.get('location')).toBeNull()
      expect(await res.text()).toContain('The identity provider cannot be reached')
    } finally {
      fake.tokenDown = false
    }
    expect((await signIn()).status).toBe(302)
  })
})

describe('logout tokens that are not the provider’s', () => {
  const logout = (token: string) =>
    fetch(`${flowadmin.url}/auth/strategy/backchannel-logout`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ logout_token: token }),
    })
  const EVENTS = { 'http://schemas.openid.net/event/backchannel-logout': {} }
  const claims = () => {
    const now = Math.floor(Date.now() / 1000)
    return { iss: fake.issuer, aud: CLIENT_ID, iat: now, jti: `j-${now}`, sub: 'eve-sub', events: EVENTS }
  }

  it('ends the person’s tokens when genuine, and refuses forgeries with 400', async () => {
    const res = await signIn()
    const code = /#sso_code=([\w-]+)/.exec(res.headers.get('location') ?? '')?.[1]
    expect(code).toBeDefined()

    const unsigned = await logout(new UnsecuredJWT(claims()).encode())
    expect(unsigned.status).toBe(400)
    expect(((await unsigned.json()) as { error: string }).error).toBe('invalid_request')
    const foreign = await logout(
      await signWith((await generateKeyPair('RS256')).privateKey, 'published')(claims()),
    )
    expect(foreign.status).toBe(400)
    const noEvent = await logout(await honest({ ...claims(), events: {} }))
    expect(await noEvent.json()).toEqual({
      error: 'invalid_request',
      error_description:
        "The logout token's events claim has no http://schemas.openid.net/event/backchannel-logout member.",
    })
    const withNonce = await logout(await honest({ ...claims(), nonce: 'n' }))
    expect(withNonce.status).toBe(400)
    const otherAudience = await logout(await honest({ ...claims(), aud: 'someone-else' }))
    expect(otherAudience.status).toBe(400)
    const missing = await fetch(`${flowadmin.url}/auth/strategy/backchannel-logout`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: '',
    })
    expect(await missing.json()).toEqual({
      error: 'invalid_request',
      error_description: 'Missing required parameter: logout_token',
    })

    const genuine = await logout(await honest(claims()))
    expect(genuine.status).toBe(200)
    expect(await genuine.text()).toBe('')
  })

  /** A whole sign-in at the fake provider (session `eve-session`) to a token. */
  async function tokenOfEve(): Promise<string> {
    const jar = createCookieJar()
    const start = await browse(jar, `${flowadmin.url}/auth/strategy`)
    const back = await fetch(start.headers.get('location') ?? '', { redirect: 'manual' })
    const res = await browse(jar, new URL(back.headers.get('location') ?? '').href)
    const code = /#sso_code=([\w-]+)/.exec(res.headers.get('location') ?? '')?.[1] ?? ''
    const issued = await browse(jar, `${flowadmin.url}/auth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, client_id: 'service-editor' }),
    })
    expect(issued.status).toBe(200)
    return ((await issued.json()) as { access_token: string }).access_token
  }
  const works = async (token: string) =>
    (await fetch(`${flowadmin.url}/settings`, { headers: { Authorization: `Bearer ${token}` } })).status ===
    200
  let serial = 0
  /** Genuine claims with a jti of their own. */
  const fresh = (extra: JWTPayload = {}) => ({ ...claims(), jti: `fresh-${++serial}`, ...extra })

  it('takes each logout token once: a replay is refused and ends the person’s new session no more', async () => {
    const first = await tokenOfEve()
    const token = await honest(fresh())
    expect((await logout(token)).status).toBe(200)
    expect(await works(first)).toBe(false)
    const second = await tokenOfEve()
    const replay = await logout(token)
    expect(replay.status).toBe(400)
    expect(await replay.json()).toEqual({
      error: 'invalid_request',
      error_description: 'This logout token was received before (same jti): refused.',
    })
    expect(await works(second)).toBe(true)
  })

  it('refuses a logout token without jti, of another type, or signed with an algorithm the provider does not announce', async () => {
    const person = await tokenOfEve()
    const { jti: _jti, ...noJti } = fresh()
    const withoutJti = await logout(await honest(noJti))
    expect(await withoutJti.json()).toEqual({
      error: 'invalid_request',
      error_description: 'The logout token has no jti (its unique identifier).',
    })
    const typed = (typ: string) =>
      new SignJWT(fresh()).setProtectedHeader({ alg: 'RS256', kid: fake.kid, typ }).sign(fake.logoutKey)
    const accessToken = await logout(await typed('at+jwt'))
    expect(await accessToken.json()).toEqual({
      error: 'invalid_request',
      error_description: 'The logout token\'s type (typ) is "at+jwt", not logout+jwt.',
    })
    // The provider announces RS256 only: the same key under PS256 is refused.
    const { alg: _alg, ...jwk } = await exportJWK(fake.logoutKey)
    const asPss = await importJWK(jwk, 'PS256')
    const otherAlgorithm = await logout(
      await new SignJWT(fresh()).setProtectedHeader({ alg: 'PS256', kid: fake.kid }).sign(asPss),
    )
    expect(otherAlgorithm.status).toBe(400)
    expect(((await otherAlgorithm.json()) as { error_description: string }).error_description).toMatch(
      /^The logout token failed a check: .*"alg"/,
    )
    expect(await works(person)).toBe(true)
    // Typed logout+jwt (with or without application/), or the generic JWT: accepted.
    expect((await logout(await typed('logout+jwt'))).status).toBe(200)
    expect(await works(person)).toBe(false)
    expect((await logout(await typed('application/logout+jwt'))).status).toBe(200)
    expect((await logout(await typed('JWT'))).status).toBe(200)
  })

  it('ends only the session its sid names', async () => {
    const person = await tokenOfEve()
    expect((await logout(await honest(fresh({ sid: 'another-session' })))).status).toBe(200)
    expect(await works(person)).toBe(true)
    expect((await logout(await honest(fresh({ sid: 'eve-session' })))).status).toBe(200)
    expect(await works(person)).toBe(false)
  })
})

describe('key rotation at the provider', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('a new signing key is fetched when an ID token names it', async () => {
    const provider = await startProvider()
    const server = await startServer({
      port: 0,
      userDir,
      stdout: () => {},
      logger: captureLog().logger,
      settings: {
        ...settingsFor(provider.issuer),
        adminAuth: {
          oidc: { ...settingsFor(provider.issuer).adminAuth.oidc, scope: 'openid profile groups' },
        },
      },
    })
    try {
      await provider.register({
        redirectUris: [`${server.url}/auth/strategy/callback`],
        backchannelLogoutUri: `${server.url}/auth/strategy/backchannel-logout`,
      })
      provider.people.set('ann-sub', { username: 'ann', groups: ['nr-admins'] })
      const signInOnce = () =>
        walkSignIn(createCookieJar(), `${server.url}/auth/strategy`, 'ann-sub', (url) =>
          url.includes('#sso_code='),
        )
      expect((await signInOnce()).url).toContain('#sso_code=')

      await provider.rotateKeys()
      // The library asks for the keys again at most once a minute; a minute passes.
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 61_000 })
      const after = await signInOnce()
      expect(after.url).toContain('#sso_code=')
    } finally {
      vi.useRealTimers()
      await server.close()
      await provider.close()
    }
  })
})
