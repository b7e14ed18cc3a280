// The single sign-on routes over a fake identity provider: every status the document lists for
// them is produced by a real request and conforms to the document, and the document lists them
// exactly when single sign-on is configured.
import { createMemoryStores } from '@flowadmin/adapter-memory'
import { createCore, ONE_TIME_CODE_MS, SIGN_IN_BOUNDS, SIGN_IN_MS } from '@flowadmin/core'
import {
  createEventRecorder,
  createFakeIdentityProvider,
  createFakeLoader,
  createFakeTypeUsage,
  createFixedClock,
  createPlainHasher,
  createSeededRandom,
} from '@flowadmin/testkit'
import { describe, expect, test } from 'vitest'
import { createHttpApp } from '../src/index.js'
import { createResponseValidator, type OpenApiDocument, type ResponseCheck } from './openapi-validate.js'

const ORIGIN = 'http://flowadmin.example'
/** The redirect URI registered for the resource server `fleet`. */
const FLEET_REDIRECT = 'https://nodered.example/auth/strategy/callback'
const FLEET_BASIC = `Basic ${btoa('fleet:fleet-secret')}`
/** A PKCE verifier and its S256 challenge (base64url of its SHA-256). */
const VERIFIER = 'dBjftJeZ4CVP-mJ0kn1_Hw6rCNBlTmh5uZaW2Yx52vo'
const CHALLENGE = 'nF-WeNg1AWSxdD8mB442ntqo08DNc2v1tzWpInIV00Y'

function world({
  users = false,
  ...options
}: {
  basePath?: string
  ssoRedirectUri?: string
  users?: boolean
} = {}) {
  const fake = createFakeIdentityProvider()
  fake.signsIn('sub-ann', { preferred_username: 'ann', groups: ['admins'] }, 'sid-1')
  fake.logsOut('sub-ann', null)
  const hasher = createPlainHasher()
  const clock = createFixedClock()
  const core = createCore(
    {
      stores: createMemoryStores(),
      verifier: hasher,
      loader: createFakeLoader(),
      typeUsage: createFakeTypeUsage(),
      events: createEventRecorder(),
      clock,
      random: createSeededRandom(5),
      identityProvider: fake.provider,
    },
    {
      adminAuth: {
        oidc: { label: 'Sign in with Example ID', permissions: { claim: 'groups', map: { admins: '*' } } },
        ...(users && { users: [{ username: 'local', password: hasher.hash('pw'), permissions: '*' }] }),
        resourceServers: [
          { id: 'fleet', secret: hasher.hash('fleet-secret'), redirectUris: [FLEET_REDIRECT] },
        ],
      },
    },
  )
  const app = createHttpApp(core, { version: '1.0.0', onUnexpectedError: () => {}, ...options })
  return {
    app,
    redirectUris: fake.redirectUris,
    request: (path: string, init?: RequestInit) => app.request(`${ORIGIN}${path}`, init),
    answer: fake.answer,
    logout: fake.logout,
    down: fake.down,
    clock,
  }
}

/** The cookies an answer sets, as a browser sends them back. */
const cookiesOf = (res: Response): string =>
  res.headers
    .getSetCookie()
    .map((cookie) => cookie.split(';')[0])
    .join('; ')

const methodsOf = (document: OpenApiDocument) =>
  Object.entries(document.paths).flatMap(([template, item]) =>
    Object.keys(item).map((m) => `${m} ${template}`),
  )

describe('the redirect URI and the sign-in cookie', () => {
  test('below httpAdminRoot: the browser’s origin, the root’s callback, a cookie for the root’s /auth', async () => {
    const w = world({ basePath: '/admin' })
    const res = await w.request('/admin/auth/strategy?return_to=%2Fadmin%2F%3Fview%3Dtokens')
    expect(res.status).toBe(302)
    expect(w.redirectUris).toEqual([`${ORIGIN}/admin/auth/strategy/callback`])
    const [binding, start] = res.headers.getSetCookie()
    expect(binding).toMatch(
      /^flowadmin_sso=[\w-]{43}; Path=\/admin\/auth; Max-Age=600; HttpOnly; SameSite=Lax$/,
    )
    // The sign-in itself, carried by the browser: nothing of it is stored.
    expect(start).toMatch(
      /^flowadmin_sso_start=[\w-]+; Path=\/admin\/auth; Max-Age=600; HttpOnly; SameSite=Lax$/,
    )
    const outside = await w.request(`/admin/auth/strategy?return_to=${encodeURIComponent('/elsewhere')}`)
    expect(outside.status).toBe(400)
  })

  test('the settings’ redirect URI when given; Secure cookies when it is https', async () => {
    const w = world({ ssoRedirectUri: 'https://flowadmin.example.com/auth/strategy/callback' })
    const res = await w.request('/auth/strategy')
    expect(w.redirectUris).toEqual(['https://flowadmin.example.com/auth/strategy/callback'])
    for (const cookie of res.headers.getSetCookie())
      expect(cookie).toMatch(/; HttpOnly; SameSite=Lax; Secure$/)
  })

  test('the cookie is removed after the exchange as it was set, Secure or not', async () => {
    const cases = [
      { origin: ORIGIN, ssoRedirectUri: undefined, secure: false },
      { origin: 'https://flowadmin.example', ssoRedirectUri: undefined, secure: true },
      // Behind a proxy that ends TLS: the request is http, the browser's redirect URI https.
      { origin: ORIGIN, ssoRedirectUri: 'https://flowadmin.example/auth/strategy/callback', secure: true },
      {
        origin: 'https://flowadmin.example',
        ssoRedirectUri: `${ORIGIN}/auth/strategy/callback`,
        secure: false,
      },
    ]
    for (const { origin, ssoRedirectUri, secure } of cases) {
      const w = world(ssoRedirectUri === undefined ? {} : { ssoRedirectUri })
      const set = (await w.app.request(`${origin}/auth/strategy`)).headers.get('set-cookie') as string
      const exchanged = await w.app.request(`${origin}/auth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: set.split(';')[0] as string },
        body: 'grant_type=authorization_code&client_id=service-admin&code=not-a-code',
      })
      expect(exchanged.status).toBe(400)
      const cleared = exchanged.headers.get('set-cookie') as string
      expect(cleared).toMatch(/^flowadmin_sso=; Path=\/auth; Max-Age=0; HttpOnly; SameSite=Lax/)
      expect({
        origin,
        ssoRedirectUri,
        set: set.endsWith('; Secure'),
        cleared: cleared.endsWith('; Secure'),
      }).toEqual({ origin, ssoRedirectUri, set: secure, cleared: secure })
    }
  })
})

describe('the single sign-on routes and their document', () => {
  test('are listed when single sign-on is configured, and every documented status is produced', async () => {
    const w = world()
    const document = (await (await w.request('/openapi.json')).json()) as OpenApiDocument
    expect(methodsOf(document)).toEqual(
      expect.arrayContaining([
        'get /auth/strategy',
        'get /auth/strategy/callback',
        'post /auth/strategy/backchannel-logout',
      ]),
    )
    const validator = createResponseValidator(document)
    const checks: ResponseCheck[] = []
    const check = async (method: string, path: string, res: Response) => {
      checks.push(await validator.check(method, `${ORIGIN}${path}`, res))
      return res
    }

    /** Starts a sign-in: the cookie to send back and the provider's URL. */
    const begin = async () => {
      const res = await check('GET', '/auth/strategy', await w.request('/auth/strategy'))
      expect(res.status).toBe(302)
      const cookie = cookiesOf(res)
      const state = new URL(res.headers.get('location') ?? '').searchParams.get('state') ?? ''
      return { cookie, state }
    }
    const callback = async (cookie: string, state: string) => {
      const path = `/auth/strategy/callback?code=c&state=${state}`
      return check('GET', '/auth/strategy/callback', await w.request(path, { headers: { Cookie: cookie } }))
    }
    const token = (cookie: string, fields: Record<string, string>) =>
      w.request('/auth/token', {
        method: 'POST',
        headers: { Cookie: cookie, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields),
      })

    // GET /auth/login: the strategy.
    await check('GET', '/auth/login', await w.request('/auth/login'))
    // 302 to the provider, 302 to the console, 200 for the code.
    const good = await begin()
    const back = await callback(good.cookie, good.state)
    expect(back.status).toBe(302)
    const code = /#sso_code=([\w-]+)$/.exec(back.headers.get('location') ?? '')?.[1] ?? ''
    const issued = await check(
      'POST',
      '/auth/token',
      await token(good.cookie, { grant_type: 'authorization_code', code, client_id: 'service-editor' }),
    )
    expect(issued.status).toBe(200)
    // 400 invalid_grant: the same code again.
    const again = await check(
      'POST',
      '/auth/token',
      await token(good.cookie, { grant_type: 'authorization_code', code, client_id: 'service-editor' }),
    )
    expect(again.status).toBe(400)
    // 429 at the callback: this address's one-time codes, none traded, are at their bound.
    for (let i = 0; i < SIGN_IN_BOUNDS.perAddress; i++) {
      const started = await begin()
      expect((await callback(started.cookie, started.state)).status).toBe(302)
    }
    const late = await begin()
    const tooManyCodes = await callback(late.cookie, late.state)
    expect(tooManyCodes.status).toBe(429)
    expect(tooManyCodes.headers.get('retry-after')).toBe('60')
    // No bound at the start: sign-ins under way are carried by their browsers, so past what any
    // bound would allow, each still starts; the first finishes once the codes were traded or ended.
    const first = await begin()
    for (let i = 0; i <= SIGN_IN_BOUNDS.perAddress; i++)
      expect((await begin()).cookie).toContain('flowadmin_sso_start=')
    w.clock.advance(ONE_TIME_CODE_MS)
    expect((await callback(first.cookie, first.state)).status).toBe(302)
    // The callback removes the sign-in the browser carried: spent, it completes nowhere again.
    const spent = await callback(first.cookie, first.state)
    expect(spent.status).toBe(400)
    // 400: a callback without the sign-in the browser carried, or past its 10 minutes.
    const bare = await begin()
    expect((await callback(bare.cookie.split('; ')[0] ?? '', bare.state)).status).toBe(400)
    w.clock.advance(SIGN_IN_MS)
    expect((await callback(bare.cookie, bare.state)).status).toBe(400)
    // 400: a return path elsewhere.
    const elsewhere = await check(
      'GET',
      '/auth/strategy',
      await w.request(`/auth/strategy?return_to=${encodeURIComponent('https://evil.example/')}`),
    )
    expect(elsewhere.status).toBe(400)
    // A return path a Location header cannot carry, or too long for a pending sign-in to keep.
    for (const path of ['/\u0001x', '/caf\u00e9', `/${'x'.repeat(3000)}`]) {
      const refused = await w.request(`/auth/strategy?return_to=${encodeURIComponent(path)}`)
      expect(refused.status, path.slice(0, 12)).toBe(400)
    }
    // 503: the provider is down.
    w.down(true)
    expect((await check('GET', '/auth/strategy', await w.request('/auth/strategy'))).status).toBe(503)
    w.down(false)
    // Callback 400 (forged state), 403 (no permissions), 403 (refused), 503 (unavailable).
    const forged = await begin()
    expect((await callback(forged.cookie, 'forged')).status).toBe(400)
    w.answer({
      ok: true,
      value: { subject: 'sub-bo', sessionId: null, claims: { preferred_username: 'bo' } },
    })
    const nobody = await begin()
    expect((await callback(nobody.cookie, nobody.state)).status).toBe(403)
    w.answer({ ok: false, error: { kind: 'refused', message: 'access_denied' } })
    const refused = await begin()
    expect((await callback(refused.cookie, refused.state)).status).toBe(403)
    w.answer({ ok: false, error: { kind: 'unavailable', message: 'down' } })
    const unavailable = await begin()
    expect((await callback(unavailable.cookie, unavailable.state)).status).toBe(503)

    // Back-channel logout: 200, 400, 503, 500.
    const logout = async (body: string) =>
      check(
        'POST',
        '/auth/strategy/backchannel-logout',
        await w.request('/auth/strategy/backchannel-logout', {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
          body,
        }),
      )
    expect((await logout('logout_token=a.b.c')).status).toBe(200)
    expect((await logout('')).status).toBe(400)
    w.logout({ ok: false, error: { kind: 'unavailable', message: 'keys unreachable' } })
    expect((await logout('logout_token=a.b.c')).status).toBe(503)
    w.logout(new Error('boom'))
    expect((await logout('logout_token=a.b.c')).status).toBe(500)

    expect(
      checks.flatMap((result) =>
        result.problems.map((problem) => `${result.operation} ${result.status}: ${problem}`),
      ),
    ).toEqual([])
    // Every documented status of the three operations was produced.
    const produced = new Set(checks.map((result) => `${result.operation} ${result.status}`))
    for (const [template, item] of Object.entries(document.paths)) {
      if (!template.startsWith('/auth/strategy')) continue
      for (const operation of Object.values(item) as Array<{ operationId: string; responses: object }>) {
        for (const status of Object.keys(operation.responses)) {
          expect(produced, `${operation.operationId} ${status}`).toContain(
            `${operation.operationId} ${status}`,
          )
        }
      }
    }
  })
})

describe('people of the identity provider', () => {
  test('cannot set up an authenticator app or a passkey here: 409 provider_sign_in, as the document says', async () => {
    const w = world()
    const document = (await (await w.request('/openapi.json')).json()) as OpenApiDocument
    const validator = createResponseValidator(document)
    const start = await w.request('/auth/strategy')
    const cookie = cookiesOf(start)
    const state = new URL(start.headers.get('location') ?? '').searchParams.get('state') ?? ''
    const back = await w.request(`/auth/strategy/callback?code=c&state=${state}`, {
      headers: { Cookie: cookie },
    })
    const code = /#sso_code=([\w-]+)$/.exec(back.headers.get('location') ?? '')?.[1] ?? ''
    const issued = await w.request('/auth/token', {
      method: 'POST',
      headers: { Cookie: cookie, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, client_id: 'service-editor' }),
    })
    const { access_token } = (await issued.json()) as { access_token: string }
    for (const path of ['/auth/mfa/totp', '/auth/passkeys/options']) {
      const res = await w.request(path, {
        method: 'POST',
        headers: { Authorization: `Bearer ${access_token}` },
      })
      expect(res.status, path).toBe(409)
      expect(await res.clone().json()).toEqual({
        code: 'provider_sign_in',
        message: expect.stringContaining('You sign in with the identity provider'),
      })
      expect((await validator.check('POST', `${ORIGIN}${path}`, res)).problems).toEqual([])
    }
  })
})

describe('a resource server’s sign-in (GET /auth/authorize)', () => {
  const authorize = (params: Record<string, string> = {}) =>
    `/auth/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: 'fleet',
      redirect_uri: FLEET_REDIRECT,
      code_challenge: CHALLENGE,
      code_challenge_method: 'S256',
      state: 'xyz',
      ...params,
    })}`

  test('every documented status is produced, and the code goes to the registered URI only', async () => {
    const w = world()
    const document = (await (await w.request('/openapi.json')).json()) as OpenApiDocument
    expect(methodsOf(document)).toContain('get /auth/authorize')
    const validator = createResponseValidator(document)
    const checks: ResponseCheck[] = []
    const check = async (path: string, init?: RequestInit) => {
      const res = await w.request(path, init)
      checks.push(await validator.check('GET', `${ORIGIN}${path}`, res))
      return res
    }

    // 400: an unregistered redirect URI (exact match) or an unknown client; nothing is set or sent.
    for (const params of [
      { redirect_uri: `${FLEET_REDIRECT}/` } as Record<string, string>,
      { redirect_uri: 'https://evil.example/auth/strategy/callback' },
      { client_id: 'other' },
    ]) {
      const res = await check(authorize(params))
      expect(res.status).toBe(400)
      expect(res.headers.get('location')).toBeNull()
      expect(res.headers.get('set-cookie')).toBeNull()
    }
    expect(w.redirectUris).toEqual([])
    // 302 to the client with an error: no PKCE, or another response type.
    const plain = await check(authorize({ code_challenge_method: 'plain' }))
    expect(plain.headers.get('location')).toBe(
      `${FLEET_REDIRECT}?error=invalid_request&error_description=PKCE+is+required%3A+code_challenge+with+code_challenge_method+S256&state=xyz`,
    )
    const token = await check(authorize({ response_type: 'token' }))
    expect(new URL(token.headers.get('location') ?? '').searchParams.get('error')).toBe(
      'unsupported_response_type',
    )
    // The provider is down: told to the client, with its state.
    w.down(true)
    const down = await check(authorize())
    expect(down.status).toBe(302)
    expect(down.headers.get('location')).toBe(
      `${FLEET_REDIRECT}?error=temporarily_unavailable&error_description=The+identity+provider+cannot+be+reached.&state=xyz`,
    )
    expect(down.headers.get('set-cookie')).toBeNull()
    w.down(false)
    // 302 to the provider, then the callback sends the browser to the redirect URI with the code.
    const start = await check(authorize())
    expect(start.status).toBe(302)
    expect(w.redirectUris.at(-1)).toBe(`${ORIGIN}/auth/strategy/callback`)
    const cookie = cookiesOf(start)
    const state = new URL(start.headers.get('location') ?? '').searchParams.get('state') ?? ''
    const back = await w.request(`/auth/strategy/callback?code=c&state=${state}`, {
      headers: { Cookie: cookie },
    })
    expect(back.status).toBe(302)
    const location = new URL(back.headers.get('location') ?? '')
    expect(`${location.origin}${location.pathname}`).toBe(FLEET_REDIRECT)
    expect(location.searchParams.get('state')).toBe('xyz')
    const code = location.searchParams.get('code') ?? ''

    const redeem = (fields: Record<string, string>) =>
      w.request('/auth/token', {
        method: 'POST',
        headers: { Authorization: FLEET_BASIC, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          redirect_uri: FLEET_REDIRECT,
          ...fields,
        }),
      })
    // The console's exchange (no client authentication) cannot spend it.
    const fromConsole = await w.request('/auth/token', {
      method: 'POST',
      headers: { Cookie: cookie, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, client_id: 'service-editor' }),
    })
    expect(fromConsole.status).toBe(400)
    expect((await redeem({ code })).status).toBe(400)
    const issued = await redeem({ code, code_verifier: VERIFIER })
    expect(issued.status).toBe(200)
    const { access_token } = (await issued.json()) as { access_token: string }
    const introspected = await w.request('/auth/introspect', {
      method: 'POST',
      headers: { Authorization: FLEET_BASIC, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: access_token }),
    })
    expect(await introspected.json()).toMatchObject({
      active: true,
      username: 'ann',
      scope: '*',
      client_id: 'fleet',
    })
    expect(await (await redeem({ code, code_verifier: VERIFIER })).json()).toMatchObject({
      error: 'invalid_grant',
    })

    expect(
      checks.flatMap((result) =>
        result.problems.map((problem) => `${result.operation} ${result.status}: ${problem}`),
      ),
    ).toEqual([])
    // With users of its own, flowadmin shows its sign-in page instead (its provider button below).
    const withUsers = world({ users: true })
    const page = await withUsers.request(authorize())
    checks.push(await validator.check('GET', `${ORIGIN}${authorize()}`, page))
    expect(page.status).toBe(200)
    const produced = new Set(checks.map((result) => `${result.operation} ${result.status}`))
    for (const status of Object.keys(
      (document.paths['/auth/authorize'] as { get: { responses: object } }).get.responses,
    )) {
      expect(produced).toContain(`authorize ${status}`)
    }
  })

  test("flowadmin's page offers the provider beside the password: the button goes on there for the same destination", async () => {
    const w = world({ users: true })
    const document = (await (await w.request('/openapi.json')).json()) as OpenApiDocument
    const validator = createResponseValidator(document)
    const page = await w.request(authorize())
    const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
    const html = await page.clone().text()
    expect(html).toContain('<form method="post" action="/auth/signin/provider">')
    expect(html).toContain('Sign in with Example ID</button>')
    // The page's hidden fields: where the sign-in ends (the editor's request).
    const fields = Object.fromEntries(
      [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((match) => [
        match[1],
        (match[2] ?? '').replace(/&#(\d+);/g, (_all, code) => String.fromCharCode(Number(code))),
      ]),
    )
    expect(fields).toMatchObject({ client_id: 'fleet', redirect_uri: FLEET_REDIRECT, state: 'xyz' })
    const press = (withCookie: string) =>
      w.request('/auth/signin/provider', {
        method: 'POST',
        headers: { Cookie: withCookie, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields).toString(),
      })
    const toProvider = await press(cookie)
    expect(
      (await validator.check('POST', `${ORIGIN}/auth/signin/provider`, toProvider.clone())).problems,
    ).toEqual([])
    expect(toProvider.status).toBe(303)
    const providerCookie = cookiesOf(toProvider)
    const state = new URL(toProvider.headers.get('location') ?? '').searchParams.get('state') ?? ''
    // Without the page's cookie: nothing begins.
    const stranger = await press('')
    expect(stranger.status).toBe(400)
    expect((await validator.check('POST', `${ORIGIN}/auth/signin/provider`, stranger)).problems).toEqual([])
    // The provider's answer goes back to the editor that asked, with its state.
    const back = await w.request(`/auth/strategy/callback?code=c&state=${state}`, {
      headers: { Cookie: providerCookie },
    })
    const location = new URL(back.headers.get('location') ?? '')
    expect(`${location.origin}${location.pathname}`).toBe(FLEET_REDIRECT)
    expect(location.searchParams.get('state')).toBe('xyz')
    expect(location.searchParams.get('code')).toMatch(/^[\w-]{43}$/)
    // Without users of its own, the console's page shows the provider's button alone.
    const only = world()
    const alone = await only.request('/auth/signin')
    expect(alone.status).toBe(200)
    const alonePage = await alone.text()
    expect(alonePage).toContain('Sign in with Example ID</button>')
    expect(alonePage).not.toContain('name="password"')
  })

  /** A resource server's sign-in through the callback: the callback's answer. */
  async function signInFor(w: ReturnType<typeof world>) {
    const start = await w.request(authorize())
    const cookie = cookiesOf(start)
    const state = new URL(start.headers.get('location') ?? '').searchParams.get('state') ?? ''
    return w.request(`/auth/strategy/callback?code=c&state=${state}`, { headers: { Cookie: cookie } })
  }

  test('a refused sign-in goes back to the client with the error and its state, no code', async () => {
    const w = world()
    w.answer({
      ok: true,
      value: { subject: 'sub-bo', sessionId: null, claims: { preferred_username: 'bo' } },
    })
    const refused = await signInFor(w)
    expect(refused.status).toBe(302)
    const location = new URL(refused.headers.get('location') ?? '')
    expect(`${location.origin}${location.pathname}`).toBe(FLEET_REDIRECT)
    expect(Object.fromEntries(location.searchParams)).toEqual({
      error: 'access_denied',
      error_description:
        'Signed in as bo, but your groups (none) give no permission here. Ask an administrator to add you to a group that does.',
      state: 'xyz',
    })
    w.answer({ ok: false, error: { kind: 'unavailable', message: 'The identity provider answered 502.' } })
    const unavailable = new URL((await signInFor(w)).headers.get('location') ?? '')
    expect(unavailable.searchParams.get('error')).toBe('temporarily_unavailable')
    expect(unavailable.searchParams.get('state')).toBe('xyz')
  })

  test('a code_verifier not of PKCE’s form is a malformed request, which guesses nothing: the code stays', async () => {
    const w = world()
    const code = new URL((await signInFor(w)).headers.get('location') ?? '').searchParams.get('code') ?? ''
    const redeem = (verifier: string) =>
      w.request('/auth/token', {
        method: 'POST',
        headers: { Authorization: FLEET_BASIC, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          redirect_uri: FLEET_REDIRECT,
          code,
          code_verifier: verifier,
        }),
      })
    for (const verifier of ['short', `${VERIFIER}+`, 'x'.repeat(129)]) {
      const res = await redeem(verifier)
      expect(res.status).toBe(400)
      expect(await res.json()).toEqual({
        error: 'invalid_request',
        error_description:
          'code_verifier must be 43 to 128 characters of A-Z, a-z, 0-9, "-", ".", "_" and "~" (RFC 7636)',
      })
    }
    expect((await redeem(VERIFIER)).status).toBe(200)
    expect(await (await redeem(VERIFIER)).json()).toMatchObject({ error: 'invalid_grant' })
  })
})
