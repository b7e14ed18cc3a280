// Single sign-on over HTTP with a real OpenID provider (oidc-provider) on 127.0.0.1: the whole
// sign-in through the provider's login pages to a flowadmin token with the mapped permissions,
// the one-time code's rules, group changes at the provider, back-channel logout, and the answers
// to what goes wrong (a forged state, replays, a return path elsewhere, an unregistered redirect
// URI, a provider that is down).
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashPassword, type RunningServer, startServer } from '../src/index.js'
import { captureLog } from './log-capture.js'
import {
  browse,
  CLIENT_ID,
  CLIENT_SECRET,
  type CookieJar,
  createCookieJar,
  startProvider,
  type TestProvider,
  walkSignIn,
} from './oidc-provider.js'
import { logIn } from './password-grant.js'

const LABEL = 'Sign in with Example ID'
const MAP = { 'nr-admins': '*', 'nr-deployers': ['flows.write', 'nodes.read'], 'nr-viewers': 'read' }

let userDir: string
let provider: TestProvider
let server: RunningServer
/** Passwords and the provider together. */
let both: RunningServer
const audit: string[] = []

/** The settings, with the test provider's issuer. */
const oidcSettings = (issuer: string) => ({
  issuer,
  clientId: CLIENT_ID,
  clientSecret: CLIENT_SECRET,
  label: LABEL,
  scope: 'openid profile groups',
  permissions: { claim: 'groups', map: MAP },
})

async function start(issuer: string, users?: unknown[]): Promise<RunningServer> {
  return startServer({
    port: 0,
    userDir,
    stdout: (line: string) => audit.push(line),
    logger: captureLog().logger,
    settings: {
      storage: 'memory',
      adminAuth: users === undefined ? { oidc: oidcSettings(issuer) } : { users, oidc: oidcSettings(issuer) },
    } as never,
  })
}

beforeAll(async () => {
  userDir = await mkdtemp(path.join(tmpdir(), 'flowadmin-sso-'))
  provider = await startProvider()
  server = await start(provider.issuer)
  both = await start(provider.issuer, [
    { username: 'admin', password: await hashPassword('admin-pw'), permissions: '*' },
  ])
  await provider.register({
    redirectUris: [`${server.url}/auth/strategy/callback`, `${both.url}/auth/strategy/callback`],
    backchannelLogoutUri: `${server.url}/auth/strategy/backchannel-logout`,
  })
  provider.people.set('alice-sub', { username: 'alice', groups: ['nr-deployers', 'sales'] })
  provider.people.set('bob-sub', { username: 'bob', groups: ['nr-admins'] })
  provider.people.set('carol-sub', { username: 'carol', groups: ['nr-viewers'] })
  provider.people.set('mallory-sub', { username: 'mallory', groups: ['marketing'] })
})
afterAll(async () => {
  await server?.close()
  await both?.close()
  await provider?.close()
  await rm(userDir, { recursive: true, force: true })
})

/** The audit events of one type written so far. */
const audited = (type: string) =>
  audit.map((line) => JSON.parse(line) as Record<string, unknown>).filter((event) => event.event === type)

/** Where a sign-in ends well: the console, with a one-time code. */
const toConsole = (url: string) => url.includes('#sso_code=')
/** Where the provider sends the browser back. */
const toCallback = (url: string) => url.includes('/auth/strategy/callback?')

/** Signs in as `login` through the provider's pages; the one-time code from the console's URL. */
async function signIn(jar: CookieJar, login: string, returnTo?: string, at: RunningServer = server) {
  const query = returnTo === undefined ? '' : `?return_to=${encodeURIComponent(returnTo)}`
  const walked = await walkSignIn(jar, `${at.url}/auth/strategy${query}`, login, toConsole)
  const code = new URL(walked.url).hash.match(/^#sso_code=([\w-]+)$/)?.[1]
  return { ...walked, code }
}

/** Trades a one-time code at POST /auth/token from the browser of `jar`. */
function exchange(jar: CookieJar, code: string, clientId = 'service-editor', at: RunningServer = server) {
  return browse(jar, `${at.url}/auth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, client_id: clientId }),
  })
}

/** A whole sign-in to a token. */
async function tokenOf(login: string): Promise<string> {
  const jar = createCookieJar()
  const { code } = await signIn(jar, login)
  if (code === undefined) throw new Error(`${login} got no code`)
  const res = await exchange(jar, code)
  expect(res.status).toBe(200)
  return ((await res.json()) as { access_token: string }).access_token
}

const get = (url: string, token: string) => fetch(url, { headers: { Authorization: `Bearer ${token}` } })
const disable = (token: string) =>
  fetch(`${server.url}/nodes/some-module`, {
    method: 'PUT',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: '{"enabled":false}',
  })

describe('signing in with the identity provider', () => {
  it('announces the provider as Node-RED announces a strategy', async () => {
    const res = await fetch(`${server.url}/auth/login`)
    expect(await res.json()).toEqual({
      type: 'strategy',
      prompts: [{ type: 'button', label: LABEL, url: '/auth/strategy' }],
    })
  })

  it('goes through the provider’s login pages to a token with the mapped permissions', async () => {
    const jar = createCookieJar()
    const start = await browse(jar, `${server.url}/auth/strategy`)
    expect(start.status).toBe(302)
    const authorize = new URL(start.headers.get('location') ?? '')
    expect(authorize.origin).toBe(provider.issuer)
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
      client_id: CLIENT_ID,
      response_type: 'code',
      redirect_uri: `${server.url}/auth/strategy/callback`,
      code_challenge_method: 'S256',
      scope: 'openid profile groups',
    })
    for (const name of ['state', 'nonce', 'code_challenge']) {
      expect(authorize.searchParams.get(name)).toMatch(/^[\w-]{43,}$/)
    }
    const [binding, carried] = start.headers.getSetCookie()
    expect(binding).toMatch(/^flowadmin_sso=[\w-]+; Path=\/auth; Max-Age=600; HttpOnly; SameSite=Lax$/)
    expect(carried).toMatch(/^flowadmin_sso_start=[\w-]+; Path=\/auth; Max-Age=600; HttpOnly; SameSite=Lax$/)

    const walked = await walkSignIn(jar, authorize.href, 'alice-sub', toConsole)
    // The console's URL carries a one-time code in its fragment, never a token.
    expect(walked.url).toMatch(new RegExp(`^${server.url}/#sso_code=[\\w-]{43}$`))
    expect(walked.visited.some((url) => url.startsWith(`${server.url}/auth/strategy/callback?code=`))).toBe(
      true,
    )
    const code = new URL(walked.url).hash.slice('#sso_code='.length)

    const res = await exchange(jar, code)
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const body = (await res.json()) as { access_token: string; expires_in: number; token_type: string }
    expect(body).toEqual({ access_token: expect.any(String), expires_in: 28_800, token_type: 'Bearer' })

    const tokens = await get(`${server.url}/auth/tokens`, body.access_token)
    expect(((await tokens.json()) as { tokens: unknown[] }).tokens).toEqual([
      expect.objectContaining({
        user: 'alice',
        kind: 'session',
        client_id: 'service-editor',
        scope: ['flows.write', 'nodes.read'],
        provider: LABEL,
        sign_in: 'provider',
        current: true,
      }),
    ])
    expect((await get(`${server.url}/nodes`, body.access_token)).status).toBe(200)
    const refused = await disable(body.access_token)
    expect(refused.status).toBe(401)
    expect(refused.headers.get('www-authenticate')).toContain('insufficient_scope')
    expect(audited('sso.succeeded')).toContainEqual(
      expect.objectContaining({ user: 'alice', provider: LABEL, permissions: ['flows.write', 'nodes.read'] }),
    )
  })

  it('makes an API token of a signed-in person within their rights and their session', async () => {
    const token = await tokenOf('carol-sub')
    const create = (body: unknown) =>
      fetch(`${server.url}/auth/tokens`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      })
    const made = await create({ name: 'report' })
    expect(made.status).toBe(201)
    const created = (await made.json()) as { token: string; scope: string[]; expires_at: string }
    expect(created.scope).toEqual(['read'])
    expect(Date.parse(created.expires_at) - Date.now()).toBeLessThanOrEqual(28_800_000)
    expect((await get(`${server.url}/settings`, created.token)).status).toBe(200)
    expect((await create({ name: 'too wide', scope: '*' })).status).toBe(400)
    const tooLong = await create({ name: 'too long', expires_in: 86_400 })
    expect(await tooLong.json()).toEqual({
      error: 'invalid_request',
      error_description: expect.stringMatching(
        /^expires_in must be at most \d+ seconds: a token of a single sign-on ends/,
      ),
    })
  })

  it('refuses a person whose groups map to nothing with a page that says why, and audits it', async () => {
    const jar = createCookieJar()
    const { res, code } = await signIn(jar, 'mallory-sub')
    expect(code).toBeUndefined()
    expect(res.status).toBe(403)
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(await res.text()).toContain(
      'Signed in as mallory, but your groups (marketing) give no permission here. Ask an administrator',
    )
    expect(audited('sso.refused')).toContainEqual(
      expect.objectContaining({ user: 'mallory', reason: 'no_permissions' }),
    )
  })

  it('changes a person’s rights when their groups change at the provider, at their next sign-in', async () => {
    provider.people.set('bob-sub', { username: 'bob', groups: ['nr-admins'] })
    const jar = createCookieJar()
    const first = await signIn(jar, 'bob-sub')
    const token = ((await (await exchange(jar, first.code ?? '')).json()) as { access_token: string })
      .access_token
    expect((await disable(token)).status).toBe(404)

    provider.people.set('bob-sub', { username: 'bob', groups: ['nr-viewers'] })
    const second = await signIn(jar, 'bob-sub')
    expect(second.code).toBeDefined()
    // The token from before acts with what bob may do now.
    expect((await disable(token)).status).toBe(401)
    expect((await get(`${server.url}/settings`, token)).status).toBe(200)

    provider.people.set('bob-sub', { username: 'bob', groups: [] })
    const third = await signIn(jar, 'bob-sub')
    expect(third.res.status).toBe(403)
    expect((await get(`${server.url}/settings`, token)).status).toBe(401)
  })

  it('ends every token of a person the provider logs out (back-channel logout)', async () => {
    const jar = createCookieJar()
    const { code } = await signIn(jar, 'carol-sub')
    const token = ((await (await exchange(jar, code ?? '')).json()) as { access_token: string }).access_token
    expect((await get(`${server.url}/settings`, token)).status).toBe(200)
    const sid = provider.sessionOf('carol-sub')
    expect(sid).toBeDefined()
    await provider.backchannelLogout('carol-sub', sid ?? '')
    expect((await get(`${server.url}/settings`, token)).status).toBe(401)
    expect(audited('sso.logout')).toContainEqual(expect.objectContaining({ owner: 'carol' }))
  })
})

describe('passwords and the identity provider together', () => {
  it('announces the credentials prompts with the button beside them, and both sign people in', async () => {
    const scheme = await (await fetch(`${both.url}/auth/login`)).json()
    expect(scheme).toEqual({
      type: 'credentials',
      prompts: [
        { id: 'username', type: 'text', label: 'Username' },
        { id: 'password', type: 'password', label: 'Password' },
      ],
      sso: { type: 'button', label: LABEL, url: '/auth/strategy' },
    })
    const password = await logIn(both.url, 'admin-pw')
    expect(password.status).toBe(200)
    const admin = ((await password.json()) as { access_token: string }).access_token

    const jar = createCookieJar()
    const { code } = await signIn(jar, 'alice-sub', undefined, both)
    const signedIn = await exchange(jar, code ?? '', 'service-editor', both)
    expect(signedIn.status).toBe(200)

    // The administrator sees and manages the signed-in person like any other user.
    const everyone = await get(`${both.url}/auth/tokens?user=*`, admin)
    const listed = ((await everyone.json()) as { tokens: Array<Record<string, unknown>> }).tokens
    expect(listed.find((entry) => entry.user === 'alice')).toMatchObject({
      provider: LABEL,
      kind: 'session',
      sign_in: 'provider',
    })
    expect(listed.find((entry) => entry.user === 'admin')).not.toHaveProperty('provider')
    expect(listed.find((entry) => entry.user === 'admin')).toMatchObject({ sign_in: 'password' })
    const ended = await fetch(`${both.url}/auth/tokens?user=alice`, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${admin}` },
    })
    expect(ended.status).toBe(200)
    expect(await ended.json()).toEqual({ revoked: 1 })
    expect((await get(`${both.url}/settings`, admin)).status).toBe(200)
  })

  it('refuses a person the provider names like a configured user: no token, nothing of the user’s touched', async () => {
    const password = await logIn(both.url, 'admin-pw')
    const admin = ((await password.json()) as { access_token: string }).access_token
    const own = async () =>
      (
        (await (await get(`${both.url}/auth/tokens`, admin)).json()) as { tokens: Array<{ id: string }> }
      ).tokens
        .map((entry) => entry.id)
        .sort()
    const before = await own()

    // A viewer at the provider who edited their name to the administrator's.
    provider.people.set('impostor-sub', { username: 'admin', groups: ['nr-viewers'] })
    const jar = createCookieJar()
    const { res, code } = await signIn(jar, 'impostor-sub', undefined, both)
    expect(code).toBeUndefined()
    expect(res.status).toBe(403)
    expect(await res.text()).toContain(
      'Your identity provider names you &#34;admin&#34;, which is the name of a user configured in flowadmin itself, so you cannot sign in with it.',
    )
    expect(audited('sso.refused')).toContainEqual(
      expect.objectContaining({ user: 'admin', reason: 'name_taken' }),
    )
    // The administrator's sessions are all there and all work.
    expect(await own()).toEqual(before)
    expect((await get(`${both.url}/settings`, admin)).status).toBe(200)
  })
})

describe('a name belongs to the provider identity that used it first', () => {
  it('refuses another identity claiming it, which gets no token and cannot touch the first’s', async () => {
    provider.people.set('dana-sub', { username: 'dana', groups: ['nr-admins'] })
    const dana = await tokenOf('dana-sub')
    // Another account at the provider renames itself dana.
    provider.people.set('eve-sub', { username: 'dana', groups: ['nr-viewers'] })
    const jar = createCookieJar()
    const { res, code } = await signIn(jar, 'eve-sub')
    expect(code).toBeUndefined()
    expect(res.status).toBe(403)
    expect(await res.text()).toContain(
      'but another account of the provider signed in here with that name first, so you cannot sign in with it.',
    )
    expect(audited('sso.refused')).toContainEqual(
      expect.objectContaining({ user: 'dana', reason: 'name_taken' }),
    )
    // Dana keeps every right: nothing narrowed their tokens to the other's groups.
    expect((await disable(dana)).status).toBe(404)
    expect((await get(`${server.url}/auth/tokens`, dana)).status).toBe(200)
  })
})

describe('what goes wrong gets a clear answer and no token', () => {
  it('a forged state: 400, and the sign-in it forged cannot be completed afterwards', async () => {
    const jar = createCookieJar()
    const walked = await walkSignIn(jar, `${server.url}/auth/strategy`, 'alice-sub', toCallback)
    const callback = new URL(walked.url)
    const forged = new URL(callback)
    forged.searchParams.set('state', 'forged-state')
    const res = await browse(jar, forged.href)
    expect(res.status).toBe(400)
    expect(await res.text()).toMatch(/The identity provider&#39;s answer failed a check: .*state/)
    expect(res.headers.get('location')).toBeNull()
    const replay = await browse(jar, callback.href)
    expect(replay.status).toBe(400)
    expect(await replay.text()).toContain('was not started in this browser, was already used')
  })

  it('a replayed callback (its code used once already): 400', async () => {
    const jar = createCookieJar()
    const walked = await walkSignIn(jar, `${server.url}/auth/strategy`, 'alice-sub', toCallback)
    expect((await browse(jar, walked.url)).status).toBe(302)
    const again = await browse(jar, walked.url)
    expect(again.status).toBe(400)
    expect(again.headers.get('location')).toBeNull()
  })

  it('a callback in another browser than the one that started: 400', async () => {
    const jar = createCookieJar()
    const walked = await walkSignIn(jar, `${server.url}/auth/strategy`, 'alice-sub', toCallback)
    const res = await fetch(walked.url, { redirect: 'manual' })
    expect(res.status).toBe(400)
    expect(await res.text()).toContain('was not started in this browser')
  })

  it('a replayed one-time code, or one from another browser: 400 invalid_grant', async () => {
    const jar = createCookieJar()
    const { code } = await signIn(jar, 'carol-sub')
    const elsewhere = await exchange(createCookieJar(), code ?? '')
    expect(elsewhere.status).toBe(400)
    expect(await elsewhere.json()).toEqual({
      error: 'invalid_grant',
      error_description: 'The code was not issued to this browser: sign in again',
    })
    // Presented from the wrong browser, the code is gone for the right one too.
    const after = await exchange(jar, code ?? '')
    expect(await after.json()).toEqual({
      error: 'invalid_grant',
      error_description: 'The code is unknown, used or expired: sign in again',
    })

    const jar2 = createCookieJar()
    const second = await signIn(jar2, 'carol-sub')
    expect((await exchange(jar2, second.code ?? '')).status).toBe(200)
    const replayed = await exchange(jar2, second.code ?? '')
    expect(replayed.status).toBe(400)
    expect(((await replayed.json()) as { error: string }).error).toBe('invalid_grant')
  })

  it('a return path to another site: 400, and nothing is sent to the provider', async () => {
    for (const elsewhere of [
      'https://evil.example/',
      '//evil.example/',
      '/\\evil.example/',
      'javascript:alert(1)',
    ]) {
      const res = await fetch(`${server.url}/auth/strategy?return_to=${encodeURIComponent(elsewhere)}`, {
        redirect: 'manual',
      })
      expect(res.status, elsewhere).toBe(400)
      expect(res.headers.get('location'), elsewhere).toBeNull()
      expect(await res.text()).toContain('return_to must be a path of this console, starting with /')
    }
    const jar = createCookieJar()
    const { url } = await signIn(jar, 'carol-sub', '/?view=tokens')
    expect(url).toMatch(new RegExp(`^${server.url}/\\?view=tokens#sso_code=`))
  })

  it('a redirect URI the provider does not know (the browser came by another name): the provider stops there', async () => {
    const otherName = server.url.replace('127.0.0.1', 'localhost')
    const jar = createCookieJar()
    const walked = await walkSignIn(jar, `${otherName}/auth/strategy`, 'alice-sub', toConsole)
    expect(walked.res.status).toBe(400)
    expect(await walked.res.text()).toContain('redirect_uri did not match any of the client')
    expect(walked.visited.some((url) => url.includes('/auth/strategy/callback'))).toBe(false)
  })

  it('a provider that is down: 503 with a page, and the server keeps answering', async () => {
    const closed = await startProvider()
    await closed.stop()
    const lonely = await start(closed.issuer)
    try {
      const res = await fetch(`${lonely.url}/auth/strategy`, { redirect: 'manual' })
      expect(res.status).toBe(503)
      expect(res.headers.get('retry-after')).toBe('30')
      expect(await res.text()).toContain('The identity provider cannot be reached')
      expect((await fetch(`${lonely.url}/healthz`)).status).toBe(200)
    } finally {
      await lonely.close()
    }
  })
})
