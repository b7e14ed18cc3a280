import { createMemoryStores } from '@flowadmin/adapter-memory'
import { DEFAULT_REPORTED_PER_MINUTE, storeUnavailable } from '@flowadmin/core'
import { holdVerifications } from '@flowadmin/testkit'
import type { Hono } from 'hono'
import * as v from 'valibot'
import { beforeAll, describe, expect, test } from 'vitest'
import { createHttpApp } from '../src/index.js'
import { MAX_REPORTED_EVENTS } from '../src/routes/audit-schemas.js'
import {
  CreateTokenRequestSchema,
  EnableRequestSchema,
  InstallRequestSchema,
  RevokeRequestSchema,
  TokenRequestSchema,
} from '../src/schemas.js'
import { basicHeader, createWorld, EXTRA, fleetBasic, PLAIN, SCOPED, VERSION, type World } from './helpers.js'
import {
  createResponseValidator,
  METHODS,
  type OpenApiDocument,
  type OperationObject,
  type ResponseCheck,
} from './openapi-validate.js'

/** `METHOD pattern` of every route the app answers, as the router holds them. */
function appRoutes(app: Hono): string[] {
  const routes = app.routes.filter((route) => route.method !== 'ALL')
  return [...new Set(routes.map((route) => `${route.method} ${route.path}`))].sort()
}

/**
 * The same for the document, its templates written as the router's patterns: module names may
 * hold a slash, so the node routes are one wildcard that parses the rest of the path itself.
 */
function documentRoutes(document: OpenApiDocument): string[] {
  const base = document.servers[0]?.url === '/' ? '' : (document.servers[0]?.url ?? '')
  const routes = Object.entries(document.paths).flatMap(([template, item]) =>
    Object.keys(item).map(
      (method) => `${method.toUpperCase()} ${base}${template.replace(/(\/\{[^}]+\})+$/, '/*')}`,
    ),
  )
  return [...new Set(routes)].sort()
}

const served = async (app: Hono, path = '/openapi.json') => {
  const res = await app.request(path)
  expect(res.status).toBe(200)
  expect(res.headers.get('Content-Type')).toMatch(/^application\/json/)
  return (await res.json()) as OpenApiDocument
}

const operationsOf = (document: OpenApiDocument) =>
  Object.entries(document.paths).flatMap(([template, item]) =>
    METHODS.flatMap((method) => {
      const operation = item[method]
      return operation === undefined ? [] : [{ template, method, operation }]
    }),
  )

const EXPOSITION = { contentType: 'text/plain; version=0.0.4', body: 'flowadmin_up 1\n' }

describe('the document lists every route, and only those', () => {
  for (const [label, options] of [
    ['auth on', {}],
    ['auth off', { auth: false }],
    ['below /admin', { app: { basePath: '/admin/' } }],
    ['with metrics', { app: { metrics: async () => EXPOSITION } }],
  ] as const) {
    test(label, async () => {
      const world = await createWorld(options)
      const basePath = 'app' in options && 'basePath' in options.app ? '/admin' : ''
      const document = await served(world.app, `${basePath}/openapi.json`)
      expect(documentRoutes(document)).toEqual(appRoutes(world.app))
      expect(document.servers).toEqual([{ url: basePath || '/', description: 'This service' }])
      expect(document.info.version).toBe(VERSION)
      expect(document.openapi).toBe('3.1.0')
      const ids = operationsOf(document).map(({ operation }) => operation.operationId)
      expect(new Set(ids).size).toBe(ids.length)
    })
  }

  test('with auth on: the token and revoke routes, the bearer scheme, and which routes need no token', async () => {
    const document = await served((await createWorld()).app)
    expect(document.components.securitySchemes).toEqual({
      bearer: { type: 'http', scheme: 'bearer', description: expect.any(String) },
      basicAuth: { type: 'http', scheme: 'basic', description: expect.any(String) },
    })
    expect(document.security).toEqual([{ bearer: [] }])
    const open = operationsOf(document)
      .filter(({ operation }) => operation.security?.length === 0)
      .map(({ operation }) => operation.operationId)
    expect(open.sort()).toEqual([
      'authorize',
      'getHealth',
      'getLoginScheme',
      'getOpenApiDocument',
      'getReadiness',
      'issueToken',
      'signInCode',
      'signInContinue',
      'signInEnrol',
      'signInPage',
      'signInPasskey',
      'signInPasskeyOptions',
      'signInPassword',
    ])
  })

  test('with auth off: no token or revoke route, no security, no 401', async () => {
    const document = await served((await createWorld({ auth: false })).app)
    expect(Object.keys(document.paths)).not.toContain('/auth/token')
    expect(document.security).toBeUndefined()
    expect(JSON.stringify(document)).not.toContain('"401"')
  })

  test('every schema compiles in strict mode, and the request schemas are the ones the routes validate with', async () => {
    const document = await served((await createWorld()).app)
    const validator = createResponseValidator(document)
    expect(validator.compileAll()).toBeGreaterThan(40)

    /** The request body schema of this operation, for this media type. */
    const bodyAt = (template: string, method: 'post' | 'put', media = 'application/json') =>
      ['paths', template, method, 'requestBody', 'content', media, 'schema']
        .map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1'))
        .join('/')
    const agree = (schema: v.GenericSchema, at: string, bodies: unknown[]) => {
      for (const body of bodies) {
        expect(validator.validates(at, body), `${at} ${JSON.stringify(body)}`).toBe(
          v.safeParse(schema, body).success,
        )
      }
    }
    const enable = [
      { enabled: true },
      { enabled: false, other: 1 },
      {},
      { enabled: 'false' },
      { enabled: null },
      [],
    ]
    agree(EnableRequestSchema, bodyAt('/nodes/{module}', 'put'), enable)
    agree(EnableRequestSchema, bodyAt('/nodes/{module}/{set}', 'put'), enable)
    for (const media of ['application/json', 'application/x-www-form-urlencoded']) {
      agree(RevokeRequestSchema, bodyAt('/auth/revoke', 'post', media), [
        { token: 'abc' },
        { token: '' },
        { token: 1 },
        {},
        null,
      ])
      // The core, not the schema, decides which fields are missing: every field is optional here.
      agree(TokenRequestSchema, bodyAt('/auth/token', 'post', media), [
        {},
        { grant_type: 'password', username: 'u' },
        { client_id: 'service-admin', grant_type: 'password', scope: '', username: 'u', password: 'p' },
        { username: 1 },
        null,
      ])
    }
    agree(InstallRequestSchema, bodyAt('/nodes', 'post'), [
      { module: 'a' },
      { module: 'a', version: '^1' },
      { module: '@s/a', url: 'https://x/a.tgz', other: 1 },
      { module: 'a', version: '1', url: 'https://x/a.tgz' },
      { module: '' },
      { module: 'x'.repeat(215) },
      { module: 'a', version: '' },
      { module: 'a', version: 1 },
      { version: '1' },
      [],
      null,
    ])
    agree(CreateTokenRequestSchema, bodyAt('/auth/tokens', 'post'), [
      { name: 'ci' },
      { name: 'ci', scope: 'read', expires_in: 60, other: true },
      { name: 'ci', expires_in: null },
      { name: '' },
      { name: 'x'.repeat(101) },
      { name: 'x'.repeat(100) },
      { name: 1 },
      { name: 'ci', scope: 1 },
      { name: 'ci', expires_in: 0 },
      { name: 'ci', expires_in: 1.5 },
      { name: 'ci', expires_in: '60' },
      {},
      null,
    ])
  })
})

/** One example request of an operation: its path, query and body as the document gives them. */
interface ExampleRequest {
  name: string
  /** The status its summary names, e.g. `(404)`; absent: a success. */
  status: number | null
  path: string
  media: string | null
  body: unknown
}

/**
 * The example requests an operation documents: one for each example name its parameters and
 * request bodies use (a path parameter without that name takes its first example), in each media
 * type that has it; an operation without parameters or body is its bare request.
 */
type Check = (method: string, path: string, res: Response | Promise<Response>) => Promise<void>

/**
 * Every step and refusal of flowadmin's sign-in page and of `GET /auth/authorize`, in worlds of
 * their own (their throttle and store apart from the rest of the walk).
 */
async function signInPageChecks(check: Check): Promise<void> {
  const redirect = 'https://nr.example/auth/strategy/callback'
  const world = await createWorld({
    fleetRedirectUris: [redirect],
    loginQueue: { concurrency: 1, maxWaiting: 0, maxWaitingKnown: 0 },
  })
  const begin = async (path = '/auth/signin') => {
    const res = await world.request(path)
    const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
    await check('GET', path, res)
    return cookie
  }
  const post = (step: string, cookie: string, fields: Record<string, string>) =>
    check(
      'POST',
      `/auth/signin${step}`,
      world.request(`/auth/signin${step}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: cookie },
        body: new URLSearchParams(fields).toString(),
      }),
    )
  /** The hidden ticket of a page the step answers with. */
  const ticketOf = async (step: string, cookie: string, fields: Record<string, string>) => {
    const res = await world.request(`/auth/signin${step}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: cookie },
      body: new URLSearchParams(fields).toString(),
    })
    const page = await res.text()
    return { status: res.status, page, ticket: /name="ticket" value="([^"]*)"/.exec(page)?.[1] ?? '' }
  }

  // Begun (200), a return path elsewhere (400); signed in at once (303), wrong (401), no cookie (400).
  const cookie = await begin()
  await check(
    'GET',
    '/auth/signin?return_to=https://evil.example/',
    world.request('/auth/signin?return_to=https://evil.example/'),
  )
  await post('', cookie, { username: 'admin', password: 'wrong' })
  await post('', cookie, { username: 'admin', password: 'pw' })
  await post('', '', { username: 'admin', password: 'pw' })
  // The password grant refuses a person with a second factor (403 mfa_required).
  const policyWorld = await createWorld({ secondFactor: { require: ['*'] } })
  await check(
    'POST',
    '/auth/token',
    policyWorld.tokenRequest({
      grant_type: 'password',
      client_id: 'service-admin',
      scope: '*',
      username: 'admin',
      password: 'pw',
    }),
  )

  // A person with TOTP: the code step (200), a wrong code (401), the right one (303), spent (400).
  const reader = await world.login('reader', 'read')
  const principal = await world.core.authenticate(reader)
  if (!principal.ok || principal.value.kind !== 'user') throw new Error('no principal')
  const started = await world.core.mfa.startTotp(principal.value)
  if (!started.ok) throw new Error(started.error.code)
  const code = (offset = 0) => world.totp.codeAt(started.value.secret, world.clock.now() + offset)
  await world.core.mfa.confirmTotp(principal.value, code(), null)
  world.clock.advance(30_000)
  const second = await begin()
  await post('', second, { username: 'reader', password: 'pw' })
  const step = await ticketOf('', second, { username: 'reader', password: 'pw' })
  const wrong = await ticketOf('/code', second, { ticket: step.ticket, code: '000000' })
  await post('/code', second, { ticket: step.ticket, code: code() })
  await post('/code', second, { ticket: wrong.ticket, code: code() })
  const other = await ticketOf('', second, { username: 'reader', password: 'pw' })
  await post('/code', second, { ticket: other.ticket, code: '000000' })
  // Wrong codes past the limit: throttled (429), nothing checked.
  const third = await begin()
  let ticket = (await ticketOf('', third, { username: 'reader', password: 'pw' })).ticket
  for (let i = 0; i < 6; i++) ticket = (await ticketOf('/code', third, { ticket, code: '111111' })).ticket
  await post('/code', third, { ticket, code: '111111' })
  // Wrong passwords past the limit (429); the verification queue full (503).
  for (let i = 0; i < 6; i++) await post('', third, { username: 'editor', password: 'x' })
  const hold = holdVerifications(world.hasher)
  const held = world.request('/auth/signin', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: third },
    body: 'username=admin&password=x',
  })
  await hold.started
  await post('', third, { username: 'admin', password: 'x' })
  hold.restore()
  await held

  // The policy's enrolment: its page (200), a wrong first code (401), the codes (200), signed in (303).
  const policy = await createWorld({ secondFactor: { require: 'everyone' } })
  const policyRequest = (step: string, cookie: string, fields: Record<string, string>) =>
    policy.request(`/auth/signin${step}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: cookie },
      body: new URLSearchParams(fields).toString(),
    })
  const opened = await policy.request('/auth/signin')
  const bound = (opened.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
  const enrolPage = await policyRequest('', bound, { username: 'admin', password: 'pw' })
  const enrolText = await enrolPage.clone().text()
  await check('POST', '/auth/signin', enrolPage)
  const enrolTicket = /name="ticket" value="([^"]*)"/.exec(enrolText)?.[1] ?? ''
  const retried = await policyRequest('/enrol', bound, { ticket: enrolTicket, code: '000000' })
  const retryText = await retried.clone().text()
  await check('POST', '/auth/signin/enrol', retried)
  const secret = /id="secret">([^<]+)</.exec(retryText)?.[1] ?? ''
  const retryTicket = /name="ticket" value="([^"]*)"/.exec(retryText)?.[1] ?? ''
  await check(
    'POST',
    '/auth/signin/enrol',
    policyRequest('/enrol', bound, { ticket: 'spent', code: '000000' }),
  )
  const codes = await policyRequest('/enrol', bound, {
    ticket: retryTicket,
    code: policy.totp.codeAt(secret, policy.clock.now()),
  })
  const codesText = await codes.clone().text()
  await check('POST', '/auth/signin/enrol', codes)
  const finish = /name="ticket" value="([^"]*)"/.exec(codesText)?.[1] ?? ''
  // Wrong first codes past the limit: throttled (429).
  const readerPage = await (await policyRequest('', bound, { username: 'reader', password: 'pw' })).text()
  let enrolling = /name="ticket" value="([^"]*)"/.exec(readerPage)?.[1] ?? ''
  for (let i = 0; i < 5; i++) {
    const page = await (await policyRequest('/enrol', bound, { ticket: enrolling, code: '000000' })).text()
    enrolling = /name="ticket" value="([^"]*)"/.exec(page)?.[1] ?? ''
  }
  await check(
    'POST',
    '/auth/signin/enrol',
    policyRequest('/enrol', bound, { ticket: enrolling, code: '000000' }),
  )
  await check('POST', '/auth/signin/continue', policyRequest('/continue', bound, { ticket: finish }))
  await check('POST', '/auth/signin/continue', policyRequest('/continue', bound, { ticket: finish }))

  // A resource server's request: the page (200), a PKCE problem back at its URI (302), unknown (400).
  const authorize = (fields: Record<string, string>) =>
    `/auth/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: 'fleet',
      redirect_uri: redirect,
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
      state: 's',
      ...fields,
    })}`
  await begin(authorize({}))
  await check('GET', '/auth/authorize', world.request(authorize({ code_challenge_method: 'plain' })))
  await check('GET', '/auth/authorize', world.request(authorize({ redirect_uri: 'https://evil.example/' })))

  // Passkeys: the challenge and the answer, each refused without the sign-in's cookie (400), then
  // a registered passkey signs in (200); where none are configured, 409.
  const adminToken = await world.login()
  const who = await world.core.authenticate(adminToken)
  if (!who.ok || who.value.kind !== 'user') throw new Error('no principal')
  const creation = await world.core.passkeys.registrationOptions(who.value)
  if (!creation.ok) throw new Error(creation.error.code)
  const registered = await world.core.passkeys.register(
    who.value,
    'laptop',
    world.webauthn.create(creation.value.options, 'cred-1'),
    null,
  )
  if (!registered.ok) throw new Error(registered.error.code)
  const jsonPost = (target: World, path: string, cookie: string, body: unknown) =>
    target.request(path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Cookie: cookie },
      body: JSON.stringify(body),
    })
  const withPasskey = await begin()
  await check('POST', '/auth/signin/passkey/options', jsonPost(world, '/auth/signin/passkey/options', '', {}))
  const offered = await jsonPost(world, '/auth/signin/passkey/options', withPasskey, {})
  const { options } = (await offered.clone().json()) as { options: unknown }
  await check('POST', '/auth/signin/passkey/options', offered)
  await check('POST', '/auth/signin/passkey', jsonPost(world, '/auth/signin/passkey', '', { response: {} }))
  await check(
    'POST',
    '/auth/signin/passkey',
    jsonPost(world, '/auth/signin/passkey', withPasskey, {
      response: world.webauthn.get(options, 'cred-1', { counter: 1 }),
      destination: { return_to: '/' },
    }),
  )
  const none = await createWorld({ passkeys: false })
  const noneCookie =
    ((await none.request('/auth/signin')).headers.get('set-cookie') ?? '').split(';')[0] ?? ''
  await check(
    'POST',
    '/auth/signin/passkey/options',
    jsonPost(none, '/auth/signin/passkey/options', noneCookie, {}),
  )
  await check(
    'POST',
    '/auth/signin/passkey',
    jsonPost(none, '/auth/signin/passkey', noneCookie, { response: {}, destination: { return_to: '/' } }),
  )

  // Sent from another site (the browser says so): refused before anything is read (403).
  for (const step of ['', '/code', '/enrol', '/continue', '/passkey/options', '/passkey'])
    await check(
      'POST',
      `/auth/signin${step}`,
      world.request(`/auth/signin${step}`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          'Sec-Fetch-Site': 'cross-site',
          Cookie: withPasskey,
        },
        body: 'username=admin&password=pw',
      }),
    )

  // Too many codes waiting to be traded: a step that signed the person in cannot hand one out (503).
  const crowdedCodes = createMemoryStores()
  const busy = await createWorld({
    secondFactor: { require: ['*'] },
    stores: { ...crowdedCodes, sso: { ...crowdedCodes.sso, saveCode: async () => 'full' as const } },
  })
  const busyCookie =
    ((await busy.request('/auth/signin')).headers.get('set-cookie') ?? '').split(';')[0] ?? ''
  const busyForm = (step: string, fields: Record<string, string>) =>
    busy.request(`/auth/signin${step}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: busyCookie },
      body: new URLSearchParams(fields).toString(),
    })
  const ticketIn = async (res: Response) => /name="ticket" value="([^"]*)"/.exec(await res.text())?.[1] ?? ''
  const readerToken = await busy.login('reader', 'read')
  const readerWho = await busy.core.authenticate(readerToken)
  if (!readerWho.ok || readerWho.value.kind !== 'user') throw new Error('no principal')
  const readerTotp = await busy.core.mfa.startTotp(readerWho.value)
  if (!readerTotp.ok) throw new Error(readerTotp.error.code)
  await busy.core.mfa.confirmTotp(
    readerWho.value,
    busy.totp.codeAt(readerTotp.value.secret, busy.clock.now()),
    null,
  )
  busy.clock.advance(30_000)
  const readerTicket = await ticketIn(await busyForm('', { username: 'reader', password: 'pw' }))
  await check(
    'POST',
    '/auth/signin/code',
    busyForm('/code', {
      ticket: readerTicket,
      code: busy.totp.codeAt(readerTotp.value.secret, busy.clock.now()),
    }),
  )
  const adminEnrol = await (await busyForm('', { username: 'admin', password: 'pw' })).text()
  const adminSecret = /id="secret">([^<]+)</.exec(adminEnrol)?.[1] ?? ''
  const adminTicket = /name="ticket" value="([^"]*)"/.exec(adminEnrol)?.[1] ?? ''
  const shown = await busyForm('/enrol', {
    ticket: adminTicket,
    code: busy.totp.codeAt(adminSecret, busy.clock.now()),
  })
  await check('POST', '/auth/signin/continue', busyForm('/continue', { ticket: await ticketIn(shown) }))
  const editorToken = await busy.login('editor', '')
  const editorWho = await busy.core.authenticate(editorToken)
  if (!editorWho.ok || editorWho.value.kind !== 'user') throw new Error('no principal')
  const editorKey = await busy.core.passkeys.registrationOptions(editorWho.value)
  if (!editorKey.ok) throw new Error(editorKey.error.code)
  await busy.core.passkeys.register(
    editorWho.value,
    'key',
    busy.webauthn.create(editorKey.value.options, 'cred-b'),
    null,
  )
  const busyOffered = (await (
    await jsonPost(busy, '/auth/signin/passkey/options', busyCookie, {})
  ).json()) as {
    options: unknown
  }
  await check(
    'POST',
    '/auth/signin/passkey',
    jsonPost(busy, '/auth/signin/passkey', busyCookie, {
      response: busy.webauthn.get(busyOffered.options, 'cred-b', { counter: 1 }),
      destination: { return_to: '/' },
    }),
  )
  // Too many codes of this address waiting: a passkey that signed in cannot hand one out (429).
  const crowdedAddress = createMemoryStores()
  const near = await createWorld({
    stores: {
      ...crowdedAddress,
      sso: { ...crowdedAddress.sso, saveCode: async () => 'address_full' as const },
    },
  })
  const nearCookie =
    ((await near.request('/auth/signin')).headers.get('set-cookie') ?? '').split(';')[0] ?? ''
  const nearWho = await near.core.authenticate(await near.login('editor', ''))
  if (!nearWho.ok || nearWho.value.kind !== 'user') throw new Error('no principal')
  const nearKey = await near.core.passkeys.registrationOptions(nearWho.value)
  if (!nearKey.ok) throw new Error(nearKey.error.code)
  await near.core.passkeys.register(
    nearWho.value,
    'key',
    near.webauthn.create(nearKey.value.options, 'cred-n'),
    null,
  )
  const nearOffered = (await (
    await jsonPost(near, '/auth/signin/passkey/options', nearCookie, {})
  ).json()) as {
    options: unknown
  }
  await check(
    'POST',
    '/auth/signin/passkey',
    jsonPost(near, '/auth/signin/passkey', nearCookie, {
      response: near.webauthn.get(nearOffered.options, 'cred-n', { counter: 1 }),
      destination: { return_to: '/' },
    }),
  )
}

function examplesOf(base: string, template: string, operation: OperationObject): ExampleRequest[] {
  const parameters = operation.parameters ?? []
  const media = Object.entries(operation.requestBody?.content ?? {})
  const names = new Set([
    ...parameters.flatMap((parameter) => Object.keys(parameter.examples ?? {})),
    ...media.flatMap(([, content]) => Object.keys(content.examples ?? {})),
  ])
  if (names.size === 0)
    return [{ name: 'bare', status: null, path: `${base}${template}`, media: null, body: undefined }]
  const requests: ExampleRequest[] = []
  for (const name of names) {
    const summaries: string[] = []
    let path = template
    const query = new URLSearchParams()
    for (const parameter of parameters) {
      const example = parameter.examples?.[name] ?? Object.values(parameter.examples ?? {})[0]
      expect(example, `${operation.operationId}: ${parameter.name} has an example`).toBeDefined()
      if (parameter.examples?.[name]?.summary) summaries.push(parameter.examples[name].summary)
      if (parameter.in === 'path') path = path.replace(`{${parameter.name}}`, String(example?.value))
      else if (parameter.in === 'query') query.set(parameter.name, String(example?.value))
    }
    const url = `${base}${path}${query.size > 0 ? `?${query}` : ''}`
    const bodies = media.filter(([, content]) => content.examples?.[name] !== undefined)
    const statusOf = (more: string[]) => {
      const named = [...summaries, ...more].map((summary) => /\((\d{3})\)$/.exec(summary)?.[1]).find(Boolean)
      return named === undefined ? null : Number(named)
    }
    if (bodies.length === 0)
      requests.push({ name, status: statusOf([]), path: url, media: null, body: undefined })
    for (const [type, content] of bodies) {
      const example = content.examples?.[name]
      requests.push({
        name,
        status: statusOf([example?.summary ?? '']),
        path: url,
        media: type,
        body: example?.value,
      })
    }
  }
  return requests
}

describe('the documented example requests', () => {
  test('every operation carries examples of its parameters and request bodies', async () => {
    const world = await createWorld({ app: { metrics: async () => EXPOSITION } })
    const document = await served(world.app)
    for (const { operation } of operationsOf(document)) {
      for (const parameter of operation.parameters ?? []) {
        expect(
          Object.keys(parameter.examples ?? {}),
          `${operation.operationId} ${parameter.name}`,
        ).not.toEqual([])
      }
      for (const [type, content] of Object.entries(operation.requestBody?.content ?? {})) {
        if (type === 'multipart/form-data') continue
        expect(Object.keys(content.examples ?? {}), `${operation.operationId} ${type}`).not.toEqual([])
      }
    }
  })

  for (const [label, options] of [
    ['auth on', {}],
    ['auth off, below /admin', { auth: false, app: { basePath: '/admin' } }],
  ] as const) {
    test(`each answers as its summary says, with a documented status and body (${label})`, async () => {
      const world = await createWorld({
        ...options,
        fleetRedirectUris: ['https://nodered.example/auth/strategy/callback'],
        app: { ...options.app, metrics: async () => EXPOSITION },
      })
      world.installer.publish(EXTRA)
      const base = options.app?.basePath ?? ''
      const document = await served(world.app, `${base}/openapi.json`)
      const validator = createResponseValidator(document)
      const operations = operationsOf(document)
      // Removals last, so that the other examples find what they name.
      operations.sort((a, b) => Number(a.method === 'delete') - Number(b.method === 'delete'))
      const sent: string[] = []
      for (const { template, method, operation } of operations) {
        for (const example of examplesOf(base, template, operation)) {
          const headers: Record<string, string> = {}
          if (operation.security?.some((scheme) => 'basicAuth' in scheme)) {
            headers.Authorization = fleetBasic()
          } else if (operation.security?.length !== 0 && document.security !== undefined) {
            // A sign-in with a second factor, which even a removal of one accepts.
            headers.Authorization = `Bearer ${await world.signedInWith('admin')}`
          }
          let body: string | undefined
          if (example.media !== null) {
            headers['Content-Type'] = example.media
            body =
              example.media === 'application/x-www-form-urlencoded'
                ? new URLSearchParams(example.body as Record<string, string>).toString()
                : JSON.stringify(example.body)
          }
          const res = await world.app.request(example.path, { method: method.toUpperCase(), headers, body })
          const label = `${operation.operationId} ${example.name} ${example.media ?? ''} → ${res.status}`
          const result = await validator.check(method, example.path, res)
          expect(result.problems, label).toEqual([])
          if (example.status === null) expect(res.status, label).toBeLessThan(300)
          else expect(res.status, label).toBe(example.status)
          sent.push(`${operation.operationId} ${res.status}`)
        }
      }
      expect(new Set(sent.map((entry) => entry.split(' ')[0])).size).toBe(operations.length)
    })
  }
})

/** Every documented status of every operation, each produced by a real request and checked. */
describe('every response the app gives conforms to the document', () => {
  test('each operation and status, with auth on', async () => {
    let notReady: string | null = null
    const world = await createWorld({
      typesInUse: ['alpha-in'],
      app: { maxBodyBytes: 2000, readiness: async () => notReady },
      loginQueue: { concurrency: 1, maxWaiting: 0, maxWaitingKnown: 0 },
    })
    const validator = createResponseValidator(await served(world.app))
    const checks: ResponseCheck[] = []
    const check = async (method: string, path: string, res: Response | Promise<Response>) => {
      checks.push(await validator.check(method, path, await res))
    }
    const admin = await world.login()
    const reader = await world.login('reader', 'read')
    const json = { 'Content-Type': 'application/json' }
    const form = { 'Content-Type': 'application/x-www-form-urlencoded' }
    const big = JSON.stringify({ enabled: false, padding: 'x'.repeat(3000) })

    await signInPageChecks(check)
    await check('GET', '/auth/login', world.request('/auth/login'))
    await check('HEAD', '/auth/login', world.request('/auth/login', { method: 'HEAD' }))
    await check('GET', '/openapi.json', world.request('/openapi.json'))
    await check('GET', '/healthz', world.request('/healthz'))
    await check('GET', '/readyz', world.request('/readyz'))
    notReady = 'storage_unavailable'
    await check('GET', '/readyz', world.request('/readyz'))

    const token = (fields: Record<string, unknown>, as: 'form' | 'json' = 'form') =>
      check('POST', '/auth/token', world.tokenRequest(fields, as))
    const grant = {
      client_id: 'service-admin',
      grant_type: 'password',
      scope: '*',
      username: 'admin',
      password: 'pw',
    }
    await token(grant)
    await token({ ...grant, client_id: 'service-editor' }, 'json')
    await token({ ...grant, grant_type: 'client_credentials' })
    await token({ ...grant, scope: 'nodes.write' })
    await token({ ...grant, username: '' })
    await token({ ...grant, password: 'wrong' })
    await check(
      'POST',
      '/auth/token',
      world.request('/auth/token', { method: 'POST', headers: form, body: big }),
    )
    for (let i = 0; i < 6; i++) await token({ ...grant, username: 'ghost', password: 'x' })

    // The trail: an instance's report (kept, malformed, too large, refused), then its search.
    const report = (body: string, authorization: string | null = fleetBasic()) =>
      check(
        'POST',
        '/audit/events',
        world.request('/audit/events', {
          method: 'POST',
          headers: { ...json, ...(authorization === null ? {} : { Authorization: authorization }) },
          body,
        }),
      )
    const event = { time: 0, instance: 'line-1', actor: 'admin', event: 'flows.set', address: null }
    await report(JSON.stringify({ events: [event] }))
    await report(JSON.stringify({ events: [{ ...event, server: 'other' }] }))
    await report(JSON.stringify({ events: [{ ...event, details: { text: 'x'.repeat(1024 * 1024) } }] }))
    await report('{"events":[]}', null)
    // Past the resource server's allowance (a minute's worth at once): 429, nothing kept.
    const full = JSON.stringify({ events: Array(MAX_REPORTED_EVENTS).fill(event) })
    for (let sent = 0; sent <= DEFAULT_REPORTED_PER_MINUTE; sent += MAX_REPORTED_EVENTS) await report(full)
    const audit = (query: string, token: string | null = admin, accept = 'application/json') =>
      check(
        'GET',
        `/audit${query}`,
        world.request(`/audit${query}`, {
          headers: { Accept: accept, ...(token === null ? {} : { Authorization: `Bearer ${token}` }) },
        }),
      )
    await audit('?instance=fleet/line-1')
    await audit('', admin, 'text/csv')
    await audit('', admin, 'application/x-ndjson')
    await audit('?since=yesterday')
    await audit('', null)

    // Introspection: live and not, a malformed request, refused clients, too large, throttled.
    const introspect = (token: string, authorization?: string | null) =>
      check('POST', '/auth/introspect', world.introspect(token, authorization))
    await introspect(admin)
    await introspect('no-such-token')
    // Without a token, then with one too large.
    for (const body of ['', `token=${'x'.repeat(3000)}`]) {
      await check(
        'POST',
        '/auth/introspect',
        world.request('/auth/introspect', {
          method: 'POST',
          headers: { ...form, Authorization: fleetBasic() },
          body,
        }),
      )
    }
    await introspect(admin, null)
    for (let i = 0; i < 6; i++) await introspect(admin, basicHeader('fleet', `guess ${i}`))
    await report('{"events":[]}', basicHeader('fleet', 'guess 7'))
    await check('GET', '/auth/resource-servers', world.get('/auth/resource-servers', admin))
    await check('GET', '/auth/resource-servers', world.get('/auth/resource-servers', reader))
    // One verification held in the one slot, and no room to wait: the next login is shed.
    const hold = holdVerifications(world.hasher)
    const held = world.tokenRequest({ ...grant, password: 'x' })
    await hold.started
    await token({ ...grant, password: 'x' })
    hold.restore()
    await held

    for (const path of ['/settings', '/nodes', `/nodes/${PLAIN.name}`, '/nodes/@acme%2Fflow-kit/beta']) {
      await check('GET', path, world.get(path, reader))
      await check(
        'HEAD',
        path,
        world.request(path, { method: 'HEAD', headers: { Authorization: `Bearer ${reader}` } }),
      )
      await check('GET', path, world.get(path))
      await check('GET', path, world.get(path, 'not-a-token'))
    }
    await check('GET', '/nodes/@acme/flow-kit', world.get('/nodes/@acme/flow-kit', reader))
    await check('GET', '/nodes/no-such-module', world.get('/nodes/no-such-module', reader))
    await check('GET', `/nodes/${PLAIN.name}/nope`, world.get(`/nodes/${PLAIN.name}/nope`, reader))

    for (const path of ['/nodes/%40acme%2Fflow-kit', `/nodes/${SCOPED.name}/gamma`]) {
      await check('PUT', path, world.put(path, { enabled: false }, admin))
      await check('PUT', path, world.put(path, { enabled: true }, admin))
      await check('PUT', path, world.put(path, { enabled: 'false' }, admin))
      await check('PUT', path, world.put(path, '{"enabled":', admin))
      await check('PUT', path, world.put(path, 'enabled=false', admin, 'application/x-www-form-urlencoded'))
      await check('PUT', path, world.put(path, big, admin))
      await check('PUT', path, world.put(path, { enabled: false }, reader))
      await check('PUT', `${path}x`, world.put(`${path}x`, { enabled: false }, admin))
    }
    await check('PUT', `/nodes/${SCOPED.name}`, world.put(`/nodes/${SCOPED.name}`, { enabled: false }, admin))
    await check(
      'PUT',
      `/nodes/${SCOPED.name}/alpha`,
      world.put(`/nodes/${SCOPED.name}/alpha`, { enabled: false }, admin),
    )
    world.typeUsage.unreadable = true
    for (const path of [`/nodes/${PLAIN.name}`, `/nodes/${PLAIN.name}/random`]) {
      await check('PUT', path, world.put(path, { enabled: false }, admin))
    }

    world.typeUsage.unreadable = false
    world.installer.publish(EXTRA)
    const install = (body: unknown, token = admin) =>
      check('POST', '/nodes', world.post('/nodes', body, token))
    await install({ module: EXTRA.name, version: '^1.0.0' })
    await install({ module: EXTRA.name, version: '1.0.0', url: 'https://registry.example/x.tgz' })
    await install({ module: 'not-published' })
    await install('{"module":', admin)
    await install(big)
    await install({ module: EXTRA.name }, reader)
    for (const failure of [
      { code: 'module_not_allowed', message: 'Not allowed by the settings' },
      { code: 'invalid_module_spec', message: 'Invalid module name' },
      { code: 'busy' },
      { code: 'install_timeout' },
    ] as const) {
      world.installer.failNext(failure)
      await install({ module: EXTRA.name })
    }
    const remove = (path: string, token = admin) => check('DELETE', path, world.delete(path, token))
    await remove(`/nodes/${SCOPED.name}`)
    await remove('/nodes/no-such-module')
    await remove(`/nodes/${EXTRA.name}`, reader)
    world.installer.failNext({ code: 'busy' })
    await remove(`/nodes/${EXTRA.name}`)
    world.installer.failNext({ code: 'install_timeout' })
    await remove(`/nodes/${EXTRA.name}`)
    world.typeUsage.unreadable = true
    await remove(`/nodes/${EXTRA.name}`)
    world.typeUsage.unreadable = false
    await remove(`/nodes/${EXTRA.name}`)

    const revoke = (body: string, headers: Record<string, string>) =>
      check('POST', '/auth/revoke', world.request('/auth/revoke', { method: 'POST', headers, body }))
    const bearer = { Authorization: `Bearer ${admin}` }
    await revoke(new URLSearchParams({ token: reader }).toString(), { ...form, ...bearer })
    await revoke('{"token":"unknown"}', { ...json, ...bearer })
    await revoke('token=', { ...form, ...bearer })
    await revoke(big, { ...json, ...bearer })
    await revoke('token=x', form)

    const tokens = (method: string, path: string, body?: string, who: string | null = admin) =>
      check(
        method,
        path,
        world.request(path, {
          method,
          headers: { ...json, ...(who === null ? {} : { Authorization: `Bearer ${who}` }) },
          ...(body === undefined ? {} : { body }),
        }),
      )
    await tokens('POST', '/auth/tokens', '{"name":"ci","scope":"read","expires_in":3600}')
    await tokens('POST', '/auth/tokens', '{"name":"ci","scope":"*"}', reader)
    await tokens('POST', '/auth/tokens', '{"scope":"read"}')
    await tokens('POST', '/auth/tokens', big)
    await tokens('POST', '/auth/tokens', '{"name":"ci"}', null)
    await tokens('GET', '/auth/tokens')
    await tokens('GET', '/auth/tokens?user=*')
    await tokens('GET', '/auth/tokens?user=*', undefined, reader)
    await tokens('GET', '/auth/tokens', undefined, null)
    const [first] = (await (await world.get('/auth/tokens?user=*', admin)).json()).tokens as Array<{
      id: string
    }>
    await tokens('DELETE', `/auth/tokens/${first?.id}`, undefined, reader)
    await tokens('DELETE', '/auth/tokens/no-such-id')
    await tokens('DELETE', `/auth/tokens/${first?.id}`, undefined, null)
    await tokens('DELETE', '/auth/tokens?user=reader')
    await tokens('DELETE', '/auth/tokens')
    await tokens('DELETE', '/auth/tokens?user=reader', undefined, null)
    const own = (await (await world.get('/auth/tokens', admin)).json()).tokens as Array<{
      id: string
      current: boolean
    }>
    await tokens('DELETE', `/auth/tokens/${own.find((view) => !view.current)?.id}`)

    // A person's second factor: the reader's attempts are throttled, the admin's go through.
    const person = await world.login('reader', 'read')
    await tokens('GET', '/auth/mfa', undefined, person)
    await tokens('GET', '/auth/mfa', undefined, null)
    await tokens('GET', '/auth/access', undefined, person)
    await tokens('GET', '/auth/access', undefined, null)
    await tokens('GET', '/auth/grants')
    await tokens('GET', '/auth/grants', undefined, person)
    await tokens('POST', '/auth/mfa/totp/confirm', '{"code":"123456"}', person)
    await tokens('POST', '/auth/mfa/totp/confirm', '{"code":"123456"}', null)
    await tokens('POST', '/auth/mfa/totp', undefined, null)
    const startTotp = async (who: string) => {
      const res = await world.request('/auth/mfa/totp', {
        method: 'POST',
        headers: { Authorization: `Bearer ${who}` },
      })
      const { secret } = (await res.clone().json()) as { secret: string }
      await check('POST', '/auth/mfa/totp', res)
      return secret
    }
    const codeOf = (secret: string) => JSON.stringify({ code: world.totp.codeAt(secret, world.clock.now()) })
    const adminSecret = await startTotp(admin)
    await tokens('POST', '/auth/mfa/totp/confirm', big)
    await tokens('POST', '/auth/mfa/totp/confirm', '{}')
    await tokens('POST', '/auth/mfa/totp/confirm', codeOf(adminSecret))
    await tokens('POST', '/auth/mfa/totp')
    const personSecret = await startTotp(person)
    for (let i = 0; i < 5; i++) await tokens('POST', '/auth/mfa/totp/confirm', '{"code":"000000"}', person)
    await tokens('POST', '/auth/mfa/totp/confirm', codeOf(personSecret), person)
    // A sign-in with a password alone removes no factor (403); no token, nothing (401).
    await tokens('DELETE', '/auth/mfa?user=admin')
    await tokens('DELETE', '/auth/mfa?user=admin', undefined, null)

    // Passkeys: the person's own, up to ten; and where none are configured, 409 on every route.
    const keyHolder = await world.login('editor', '')
    const passkeyOptions = async () =>
      ((await (await world.post('/auth/passkeys/options', '', keyHolder)).json()) as { options: unknown })
        .options
    await tokens('GET', '/auth/passkeys', undefined, keyHolder)
    await tokens('GET', '/auth/passkeys', undefined, null)
    await tokens('POST', '/auth/passkeys/options', undefined, keyHolder)
    await tokens('POST', '/auth/passkeys/options', undefined, null)
    const registration = (id: string, options: unknown) =>
      JSON.stringify({ name: `Key ${id}`, response: world.webauthn.create(options, id) })
    await tokens('POST', '/auth/passkeys', registration('k0', await passkeyOptions()), keyHolder)
    await tokens('POST', '/auth/passkeys', '{}', keyHolder)
    await tokens('POST', '/auth/passkeys', big, keyHolder)
    await tokens('POST', '/auth/passkeys', registration('k1', { challenge: 'none' }), null)
    for (let i = 1; i < 10; i++)
      await world.post('/auth/passkeys', JSON.parse(registration(`k${i}`, await passkeyOptions())), keyHolder)
    await tokens('POST', '/auth/passkeys/options', undefined, keyHolder)
    await tokens('DELETE', '/auth/passkeys/k0', undefined, keyHolder)
    await tokens('DELETE', '/auth/passkeys/k1', undefined, null)
    // A session that began more than 10 minutes ago adds no second factor: sign in again (403).
    world.clock.advance(11 * 60_000)
    await tokens('POST', '/auth/mfa/totp', undefined, person)
    await tokens('POST', '/auth/passkeys/options', undefined, keyHolder)
    const unconfigured = await createWorld({ passkeys: false })
    const someone = await unconfigured.login('reader', 'read')
    for (const [method, path, body] of [
      ['GET', '/auth/passkeys', undefined],
      ['POST', '/auth/passkeys', registration('k1', { challenge: 'none' })],
      ['DELETE', '/auth/passkeys/k1', undefined],
    ] as const)
      await check(
        method,
        path,
        unconfigured.request(path, {
          method,
          headers: { ...json, Authorization: `Bearer ${someone}` },
          body,
        }),
      )

    // Removals, last (they end the person's other sessions), by a sign-in with a second factor:
    // one passkey (then it is not found), the admin's factors (then none), an empty user (400).
    const editorStrong = await world.signedInWith('editor', 'passkey')
    await tokens('DELETE', '/auth/passkeys/k0', undefined, editorStrong)
    await tokens('DELETE', '/auth/passkeys/k0', undefined, editorStrong)
    const adminStrong = await world.signedInWith('admin', 'password_totp')
    await tokens('DELETE', '/auth/mfa?user=', undefined, adminStrong)
    await tokens('DELETE', '/auth/mfa?user=admin', undefined, adminStrong)
    await tokens('DELETE', '/auth/mfa?user=admin', undefined, adminStrong)

    for (const result of checks) expect(result.problems, `${result.operation} ${result.status}`).toEqual([])
    const broken = [
      ...(await brokenChecks(validator, new Error('disk I/O error'), 500)),
      ...(await brokenChecks(validator, storeUnavailable('the database is restarting', 2), 503)),
    ]
    for (const result of broken) expect(result.problems, `${result.operation} ${result.status}`).toEqual([])

    const covered = new Set([...checks, ...broken].map((result) => `${result.operation} ${result.status}`))
    expect([...covered].sort()).toEqual(validator.documented().sort())
  })

  test('with auth off, and below a base path', async () => {
    const open = await createWorld({ auth: false, typesInUse: ['random'] })
    const below = await createWorld({ app: { basePath: '/admin' } })
    const token = await below.login()
    const cases: Array<[World, string, string, Response | Promise<Response>]> = [
      [open, 'GET', '/auth/login', open.get('/auth/login')],
      [open, 'GET', '/settings', open.get('/settings')],
      [open, 'GET', '/nodes', open.get('/nodes', 'ignored')],
      [open, 'PUT', `/nodes/${PLAIN.name}`, open.put(`/nodes/${PLAIN.name}`, { enabled: false })],
      [open, 'PUT', `/nodes/${SCOPED.name}`, open.put(`/nodes/${SCOPED.name}`, { enabled: false })],
      [open, 'GET', '/nodes/nope', open.get('/nodes/nope')],
      [below, 'GET', '/admin/auth/login', below.get('/auth/login')],
      [below, 'GET', '/admin/nodes/@acme/flow-kit', below.get('/nodes/@acme/flow-kit', token)],
      [below, 'GET', '/admin/settings', below.get('/settings')],
    ]
    const statuses: number[] = []
    for (const [world, method, path, res] of cases) {
      const validator = createResponseValidator(
        await served(world.app, world === below ? '/admin/openapi.json' : '/openapi.json'),
      )
      const result = await validator.check(method, path, await res)
      statuses.push(result.status)
      expect(result.problems, `${method} ${path}`).toEqual([])
    }
    expect(statuses).toEqual([200, 200, 200, 400, 200, 404, 200, 200, 401])
  })
})

describe('the validator finds what does not conform', () => {
  let validator: ReturnType<typeof createResponseValidator>
  beforeAll(async () => {
    validator = createResponseValidator(
      await served((await createWorld({ app: { basePath: '/admin' } })).app, '/admin/openapi.json'),
    )
  })
  const jsonResponse = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    new Response(JSON.stringify(body), {
      status,
      headers: { 'Content-Type': 'application/json', ...headers },
    })
  const module = { name: 'm', version: '1.0.0', nodes: [] }

  test.each([
    [
      'an undocumented status',
      'GET',
      '/admin/nodes/m',
      jsonResponse(403, {}),
      'status 403 is not documented',
    ],
    [
      'an unknown field',
      'GET',
      '/admin/nodes/m',
      jsonResponse(200, { ...module, path: '/x' }),
      'must NOT have additional properties',
    ],
    [
      'a missing field',
      'GET',
      '/admin/nodes/m',
      jsonResponse(200, { name: 'm', nodes: [] }),
      "must have required property 'version'",
    ],
    [
      'another media type',
      'GET',
      '/admin/nodes/m',
      new Response('{}', { headers: { 'Content-Type': 'text/html' } }),
      'Content-Type text/html',
    ],
    ['a body where none is documented', 'GET', '/admin/nodes/m', jsonResponse(404, {}), 'body must be empty'],
    [
      'a missing challenge',
      'GET',
      '/admin/nodes/m',
      new Response(null, { status: 401 }),
      'header WWW-Authenticate is missing',
    ],
    [
      'a missing Retry-After',
      'POST',
      '/admin/auth/token',
      jsonResponse(
        429,
        { error: 'temporarily_unavailable', error_description: 'x' },
        { 'Cache-Control': 'no-store', Pragma: 'no-cache' },
      ),
      'header Retry-After is missing',
    ],
    ['a path outside the server URL', 'GET', '/nodes/m', jsonResponse(200, module), 'outside the server URL'],
    ['an unknown path', 'GET', '/admin/nope', jsonResponse(200, {}), '0 path templates match'],
    ['an undocumented method', 'PUT', '/admin/settings', jsonResponse(200, {}), 'no put operation'],
  ])('%s', async (_label, method, path, res, problem) => {
    const result = await validator.check(method, path, res)
    expect(result.problems.join('\n')).toContain(problem)
  })

  test('a conforming response has no problem', async () => {
    const result = await validator.check(
      'GET',
      'http://127.0.0.1:1/admin/nodes/@a%2Fb',
      jsonResponse(200, module),
    )
    expect(result).toEqual({ operation: 'getNodeModule', status: 200, problems: [] })
  })
})

/**
 * The 500 (a store failed) or 503 (a store cannot be reached now) of every operation that consults
 * a port, from stores that throw `error`.
 */
async function brokenChecks(
  validator: ReturnType<typeof createResponseValidator>,
  error: Error,
  status: 500 | 503,
) {
  const stores = createMemoryStores()
  const broken = await createWorld({ stores })
  const fail = async () => {
    throw error
  }
  stores.modules.list = fail
  stores.modules.find = fail
  stores.modules.upsert = fail
  broken.installer.publish(EXTRA)
  stores.tokens.findByHash = fail
  stores.tokens.save = fail
  stores.trail.append = fail
  stores.trail.appendReport = fail
  const app = createHttpApp(broken.core, { version: VERSION, onUnexpectedError: () => {} })
  const auth = { Authorization: 'Bearer some-token' }
  const put = {
    method: 'PUT',
    headers: { ...auth, 'Content-Type': 'application/json' },
    body: '{"enabled":true}',
  }
  const requests: Array<[string, string, RequestInit]> = [
    [
      'POST',
      '/auth/token',
      {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'client_id=service-admin&grant_type=password&scope=*&username=admin&password=pw',
      },
    ],
    [
      'POST',
      '/auth/revoke',
      { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body: '{"token":"t"}' },
    ],
    ['GET', '/settings', { headers: auth }],
    ['GET', '/auth/tokens', { headers: auth }],
    [
      'POST',
      '/auth/tokens',
      { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body: '{"name":"x"}' },
    ],
    ['DELETE', '/auth/tokens?user=admin', { method: 'DELETE', headers: auth }],
    ['DELETE', '/auth/tokens/some-id', { method: 'DELETE', headers: auth }],
    ['GET', '/nodes', { headers: auth }],
    ['GET', `/nodes/${PLAIN.name}`, { headers: auth }],
    ['GET', `/nodes/${PLAIN.name}/random`, { headers: auth }],
    ['PUT', `/nodes/${PLAIN.name}`, put],
    ['PUT', `/nodes/${PLAIN.name}/random`, put],
    ['POST', '/nodes', { ...put, method: 'POST', body: JSON.stringify({ module: EXTRA.name }) }],
    ['DELETE', `/nodes/${PLAIN.name}`, { method: 'DELETE', headers: auth }],
    [
      'POST',
      '/auth/introspect',
      {
        method: 'POST',
        headers: { Authorization: fleetBasic(), 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'token=t',
      },
    ],
    ['GET', '/auth/resource-servers', { headers: auth }],
    ['GET', '/audit', { headers: auth }],
    [
      'POST',
      '/audit/events',
      {
        method: 'POST',
        headers: { Authorization: fleetBasic(), 'Content-Type': 'application/json' },
        body: JSON.stringify({
          events: [{ time: 0, instance: 'a', actor: null, event: 'x', address: null }],
        }),
      },
    ],
    ['GET', '/auth/mfa', { headers: auth }],
    ['GET', '/auth/access', { headers: auth }],
    ['GET', '/auth/grants', { headers: auth }],
    ['POST', '/auth/mfa/totp', { method: 'POST', headers: auth }],
    [
      'POST',
      '/auth/mfa/totp/confirm',
      { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body: '{"code":"123456"}' },
    ],
    ['DELETE', '/auth/mfa?user=admin', { method: 'DELETE', headers: auth }],
    ['GET', '/auth/passkeys', { headers: auth }],
    ['POST', '/auth/passkeys/options', { method: 'POST', headers: auth }],
    [
      'POST',
      '/auth/passkeys',
      {
        method: 'POST',
        headers: { ...auth, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'k', response: broken.webauthn.create({ challenge: 'c' }, 'k') }),
      },
    ],
    ['DELETE', '/auth/passkeys/k', { method: 'DELETE', headers: auth }],
  ]
  const results: ResponseCheck[] = []
  for (const [method, path, init] of requests) {
    const res = await app.request(path, init)
    expect(res.status, `${method} ${path}`).toBe(status)
    if (status === 503) expect(res.headers.get('retry-after'), `${method} ${path}`).toBe('2')
    results.push(await validator.check(method, path, res))
  }
  return results
}
