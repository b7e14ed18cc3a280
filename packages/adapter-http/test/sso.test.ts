// The single sign-on routes over a fake identity provider: every status the document lists for
// them is produced by a real request and conforms to the document, and the document lists them
// exactly when single sign-on is configured.
import { createMemoryStores } from '@flowadmin/adapter-memory'
import {
  createCore,
  type IdentityProvider,
  type LogoutRequest,
  type ProviderIdentity,
  type ProviderResult,
} from '@flowadmin/core'
import {
  createEventRecorder,
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

function world(options: { basePath?: string; ssoRedirectUri?: string } = {}) {
  const redirectUris: string[] = []
  let answer: ProviderResult<ProviderIdentity> = {
    ok: true,
    value: {
      subject: 'sub-ann',
      sessionId: 'sid-1',
      claims: { preferred_username: 'ann', groups: ['admins'] },
    },
  }
  let logout: ProviderResult<LogoutRequest> | Error = {
    ok: true,
    value: { subject: 'sub-ann', sessionId: null },
  }
  let down = false
  const provider: IdentityProvider = {
    issuer: 'https://id.example',
    async authorizationUrl(pending) {
      redirectUris.push(pending.redirectUri)
      if (down)
        return {
          ok: false,
          error: { kind: 'unavailable', message: 'The identity provider cannot be reached.' },
        }
      return { ok: true, value: `https://id.example/authorize?state=${pending.state}` }
    },
    async complete(url, pending) {
      if (new URL(url).searchParams.get('state') !== pending.state)
        return { ok: false, error: { kind: 'invalid', message: 'state mismatch' } }
      return answer
    },
    async verifyLogoutToken() {
      if (logout instanceof Error) throw logout
      return logout
    },
  }
  const hasher = createPlainHasher()
  const core = createCore(
    {
      stores: createMemoryStores(),
      verifier: hasher,
      loader: createFakeLoader(),
      typeUsage: createFakeTypeUsage(),
      events: createEventRecorder(),
      clock: createFixedClock(),
      random: createSeededRandom(5),
      identityProvider: provider,
    },
    {
      adminAuth: {
        oidc: { label: 'Sign in with Example ID', permissions: { claim: 'groups', map: { admins: '*' } } },
      },
    },
  )
  const app = createHttpApp(core, { version: '1.0.0', onUnexpectedError: () => {}, ...options })
  return {
    app,
    redirectUris,
    request: (path: string, init?: RequestInit) => app.request(`${ORIGIN}${path}`, init),
    answer: (next: ProviderResult<ProviderIdentity>) => {
      answer = next
    },
    logout: (next: ProviderResult<LogoutRequest> | Error) => {
      logout = next
    },
    down: (value: boolean) => {
      down = value
    },
  }
}

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
    expect(res.headers.get('set-cookie')).toMatch(
      /^flowadmin_sso=[\w-]{43}; Path=\/admin\/auth; Max-Age=600; HttpOnly; SameSite=Lax$/,
    )
    const outside = await w.request(`/admin/auth/strategy?return_to=${encodeURIComponent('/elsewhere')}`)
    expect(outside.status).toBe(400)
  })

  test('the settings’ redirect URI when given; Secure cookies when it is https', async () => {
    const w = world({ ssoRedirectUri: 'https://flowadmin.example.com/auth/strategy/callback' })
    const res = await w.request('/auth/strategy')
    expect(w.redirectUris).toEqual(['https://flowadmin.example.com/auth/strategy/callback'])
    expect(res.headers.get('set-cookie')).toMatch(/; HttpOnly; SameSite=Lax; Secure$/)
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
      const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
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
    // 400: a return path elsewhere.
    const elsewhere = await check(
      'GET',
      '/auth/strategy',
      await w.request(`/auth/strategy?return_to=${encodeURIComponent('https://evil.example/')}`),
    )
    expect(elsewhere.status).toBe(400)
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
