import { describe, expect, test } from 'vitest'
import { createWorld, expectNoStore, grant } from './helpers.js'

describe('GET /auth/login', () => {
  test('auth on: the credentials scheme, username prompt then password prompt, no token needed', async () => {
    const world = await createWorld()
    const res = await world.request('/auth/login')
    expect(res.status).toBe(200)
    expect(res.headers.get('Content-Type')).toMatch(/^application\/json/)
    expect(await res.json()).toEqual({
      type: 'credentials',
      prompts: [
        { id: 'username', type: 'text', label: 'Username' },
        { id: 'password', type: 'password', label: 'Password' },
      ],
    })
  })

  test('auth on: a bad bearer token does not matter here', async () => {
    const world = await createWorld()
    const res = await world.get('/auth/login', 'garbage')
    expect(res.status).toBe(200)
  })

  test('auth off: an empty object', async () => {
    const world = await createWorld({ auth: false })
    const res = await world.request('/auth/login')
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({})
  })
})

describe('POST /auth/token: success', () => {
  for (const as of ['form', 'json'] as const) {
    for (const clientId of ['service-admin', 'service-editor']) {
      test(`${as} body with ${clientId}: 200 with a usable bearer token`, async () => {
        const world = await createWorld()
        const res = await world.tokenRequest(grant({ client_id: clientId }), as)
        expect(res.status).toBe(200)
        expect(res.headers.get('Content-Type')).toMatch(/^application\/json/)
        expectNoStore(res)
        const body = (await res.json()) as Record<string, unknown>
        expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'token_type'])
        expect(body.token_type).toBe('Bearer')
        expect(body.expires_in).toBe(604800)
        // 256 bits, URL-safe: no `+`, `/` or `=`.
        expect(body.access_token).toMatch(/^[A-Za-z0-9_-]{43,}$/)
        expect((await world.get('/settings', body.access_token as string)).status).toBe(200)
      })
    }
  }

  test('charset parameters on the content type are accepted', async () => {
    const world = await createWorld()
    for (const contentType of [
      'application/json; charset=utf-8',
      'Application/JSON;charset=UTF-8',
      'application/x-www-form-urlencoded; charset=UTF-8',
    ]) {
      const json = contentType.toLowerCase().includes('json')
      const res = await world.request('/auth/token', {
        method: 'POST',
        headers: { 'Content-Type': contentType },
        body: json ? JSON.stringify(grant()) : new URLSearchParams(grant()).toString(),
      })
      expect(res.status, contentType).toBe(200)
    }
  })

  test('expires_in is sessionExpiryTime', async () => {
    const world = await createWorld({ sessionExpiryTime: 60 })
    const res = await world.tokenRequest(grant())
    expect(((await res.json()) as { expires_in: number }).expires_in).toBe(60)
  })

  test('every login issues a new token; an Authorization header on the request is ignored', async () => {
    const world = await createWorld()
    const first = await world.login()
    const res = await world.request('/auth/token', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: 'Bearer garbage' },
      body: JSON.stringify(grant()),
    })
    expect(res.status).toBe(200)
    expect(((await res.json()) as { access_token: string }).access_token).not.toBe(first)
  })

  test('unknown fields such as client_secret are ignored', async () => {
    const world = await createWorld()
    const res = await world.tokenRequest(grant({ client_secret: 'not_available' }))
    expect(res.status).toBe(200)
  })

  test('the login is recorded with the client address, never the password or token', async () => {
    const world = await createWorld()
    const token = await world.login()
    expect(world.events.ofType('login.succeeded')).toEqual([
      expect.objectContaining({ username: 'admin', clientId: 'service-admin', address: '203.0.113.7' }),
    ])
    const logged = JSON.stringify(world.events.events)
    expect(logged).not.toContain(token)
    expect(logged).not.toContain('"pw"')
  })
})

describe('POST /auth/token: 400 with an RFC 6749 body', () => {
  const cases: Array<[string, Record<string, unknown>, string, RegExp]> = [
    ['missing grant_type', { grant_type: undefined }, 'invalid_request', /grant_type/],
    ['missing username', { username: undefined }, 'invalid_request', /username/],
    ['empty username', { username: '' }, 'invalid_request', /username/],
    ['missing password', { password: undefined }, 'invalid_request', /password/],
    ['empty password', { password: '' }, 'invalid_request', /password/],
    ['missing scope', { scope: undefined }, 'invalid_request', /scope/],
    [
      'grant_type client_credentials',
      { grant_type: 'client_credentials' },
      'unsupported_grant_type',
      /client_credentials/,
    ],
    ['grant_type Password', { grant_type: 'Password' }, 'unsupported_grant_type', /Password/],
    ['scope write', { scope: 'write' }, 'invalid_scope', /write/],
    ['scope read,* (a comma is not a separator)', { scope: 'read,*' }, 'invalid_scope', /read,\*/],
  ]
  for (const [name, overrides, error, description] of cases) {
    for (const as of ['form', 'json'] as const) {
      test(`${name} (${as})`, async () => {
        const world = await createWorld()
        const fields = Object.fromEntries(Object.entries(grant(overrides)).filter(([, v]) => v !== undefined))
        const res = await world.tokenRequest(fields, as)
        expect(res.status).toBe(400)
        expect(res.headers.get('Content-Type')).toMatch(/^application\/json/)
        expectNoStore(res)
        const body = (await res.json()) as { error: string; error_description: string }
        expect(Object.keys(body).sort()).toEqual(['error', 'error_description'])
        expect(body.error).toBe(error)
        expect(body.error_description).toMatch(description)
      })
    }
  }

  const invalidRequest = async (res: Response, description?: RegExp) => {
    expect(res.status).toBe(400)
    expectNoStore(res)
    const body = (await res.json()) as { error: string; error_description: string }
    expect(body.error).toBe('invalid_request')
    if (description) expect(body.error_description).toMatch(description)
  }

  for (const [field, value] of [
    ['scope', ['read']],
    ['username', { name: 'admin' }],
    ['password', 12345],
    ['client_id', null],
    ['grant_type', true],
  ] as const) {
    test(`a JSON ${field} that is not a string`, async () => {
      const world = await createWorld()
      await invalidRequest(
        await world.tokenRequest(grant({ [field]: value }), 'json'),
        new RegExp(`${field} must be a string`),
      )
      expect(world.hasher.verified).toEqual([])
    })
  }

  test('a form field given twice', async () => {
    const world = await createWorld()
    const res = await world.request('/auth/token', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `${new URLSearchParams(grant()).toString()}&username=reader`,
    })
    await invalidRequest(res, /username/)
  })

  for (const [name, contentType, body] of [
    ['text/plain', 'text/plain', 'client_id=service-admin'],
    ['multipart', 'multipart/form-data; boundary=x', '--x--'],
    ['no content type', undefined, undefined],
  ] as const) {
    test(`wrong content type: ${name}`, async () => {
      const world = await createWorld()
      const res = await world.request('/auth/token', {
        method: 'POST',
        headers: contentType ? { 'Content-Type': contentType } : {},
        ...(body === undefined ? {} : { body }),
      })
      await invalidRequest(res, /Content-Type/)
    })
  }

  for (const [name, body] of [
    ['malformed JSON', '{"client_id":'],
    ['empty JSON body', ''],
    ['JSON array', '[]'],
    ['JSON string', '"password"'],
    ['JSON null', 'null'],
  ] as const) {
    test(`${name}`, async () => {
      const world = await createWorld()
      const res = await world.request('/auth/token', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body,
      })
      await invalidRequest(res)
    })
  }

  test('an empty form body: missing parameters', async () => {
    const world = await createWorld()
    const res = await world.request('/auth/token', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: '',
    })
    await invalidRequest(res, /Missing required parameter/)
  })
})
