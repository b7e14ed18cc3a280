import { describe, expect, test } from 'vitest'
import { DEFAULT_MAX_BODY_BYTES } from '../src/app.js'
import { basicCredentials } from '../src/basic-credentials.js'
import { ADDRESS, basicHeader, createWorld, FLEET_SECRET, fleetBasic, type World } from './helpers.js'

const DAY = 86_400_000
const seconds = (ms: number) => Math.floor(ms / 1000)

async function introspection(world: World, token: string) {
  const res = await world.introspect(token)
  expect(res.status).toBe(200)
  expect(res.headers.get('Cache-Control')).toBe('no-store')
  return res.json()
}

const INACTIVE = { active: false }

describe('POST /auth/introspect (RFC 7662)', () => {
  test('answers a live token with whose it is and what it may do now', async () => {
    const world = await createWorld()
    const issuedAt = world.clock.now()
    const token = await world.loginAsFleet('editor', '')
    expect(await introspection(world, token)).toEqual({
      active: true,
      username: 'editor',
      scope: 'nodes.read nodes.write',
      client_id: 'fleet',
      aud: 'fleet',
      token_type: 'Bearer',
      exp: seconds(issuedAt + 7 * DAY),
      iat: seconds(issuedAt),
      sub: 'editor',
    })
  })

  test('only to its audience: a token for flowadmin (the console’s login, an API token) is as unknown', async () => {
    const world = await createWorld()
    const owner = await world.login()
    const created = await world.post('/auth/tokens', { name: 'ci', scope: 'read' }, owner)
    const { token } = (await created.json()) as { token: string }
    expect((await world.get('/settings', owner)).status).toBe(200)
    expect((await world.get('/settings', token)).status).toBe(200)
    expect(await introspection(world, owner)).toEqual(INACTIVE)
    expect(await introspection(world, token)).toEqual(INACTIVE)
  })

  test('an API token for a resource server: its scope is what it was granted, its client `api`', async () => {
    const world = await createWorld()
    const owner = await world.login()
    const created = await world.post(
      '/auth/tokens',
      { name: 'ci', scope: 'read', expires_in: 3600, audience: 'fleet' },
      owner,
    )
    const { token } = (await created.json()) as { token: string }
    expect(await introspection(world, token)).toEqual({
      active: true,
      username: 'admin',
      scope: 'read',
      client_id: 'api',
      aud: 'fleet',
      token_type: 'Bearer',
      exp: seconds(world.clock.now()) + 3600,
      iat: seconds(world.clock.now()),
      sub: 'admin',
    })
  })

  test('is exactly {active: false} for anything not live, never a 4xx for a bad token', async () => {
    const world = await createWorld()
    expect(await introspection(world, 'no-such-token')).toEqual(INACTIVE)
    expect(await introspection(world, '')).toEqual(INACTIVE)
    expect(await introspection(world, 'x'.repeat(5000))).toEqual(INACTIVE)

    const revoked = await world.loginAsFleet()
    expect(await introspection(world, revoked)).toMatchObject({ active: true })
    await world.post('/auth/revoke', { token: revoked }, revoked)
    expect(await introspection(world, revoked)).toEqual(INACTIVE)

    const expired = await world.loginAsFleet()
    world.clock.advance(7 * DAY)
    expect(await introspection(world, expired)).toEqual(INACTIVE)
  })

  test('follows the user: removed, password changed, or left with no rights is not active', async () => {
    const world = await createWorld()
    const users = (overrides: Record<string, { password?: string; permissions?: string | string[] }>) =>
      world.core.setUsers(
        (['admin', 'reader', 'editor'] as const).map((username) => ({
          username,
          password: world.hasher.hash(overrides[username]?.password ?? 'pw'),
          permissions:
            overrides[username]?.permissions ??
            { admin: '*', reader: 'read', editor: ['nodes.read', 'nodes.write'] }[username],
        })),
      )
    const reader = await world.loginAsFleet('reader', 'read')
    const editor = await world.loginAsFleet('editor', '')
    const admin = await world.loginAsFleet('admin', '*')
    for (const token of [reader, editor, admin])
      expect(await introspection(world, token)).toMatchObject({ active: true })
    // The editor now holds nothing its token was granted; the admin's `*` token acts as `read`.
    await users({ editor: { permissions: 'flows.read' }, admin: { permissions: 'read' } })
    expect(await introspection(world, editor)).toEqual(INACTIVE)
    expect(await introspection(world, admin)).toMatchObject({ active: true, scope: 'read' })
    await users({ reader: { password: 'changed' } })
    expect(await introspection(world, reader)).toEqual(INACTIVE)
    await world.core.setUsers([])
    expect(await introspection(world, admin)).toEqual(INACTIVE)
  })

  test('refuses a missing, malformed, unknown or wrong client with 401 invalid_client and a Basic challenge', async () => {
    const world = await createWorld()
    const token = await world.login()
    for (const authorization of [
      null,
      `Bearer ${token}`,
      'Basic !!!',
      `Basic ${btoa('no-colon')}`,
      basicHeader('fleet', 'wrong'),
      basicHeader('other', FLEET_SECRET),
    ]) {
      const res = await world.introspect(token, authorization)
      expect(res.status, String(authorization)).toBe(401)
      expect(res.headers.get('WWW-Authenticate')).toBe('Basic realm="flowadmin"')
      expect(res.headers.get('Cache-Control')).toBe('no-store')
      expect(await res.json()).toEqual({
        error: 'invalid_client',
        error_description: 'Client authentication failed',
      })
    }
    expect(world.events.ofType('client.failed').map((event) => event.clientId)).toEqual(['fleet', 'other'])
  })

  test('checks the client before reading the body: a wrong secret is 401 whatever it sent', async () => {
    const world = await createWorld()
    const wrong = basicHeader('fleet', 'wrong')
    for (const [type, body] of [
      ['text/plain', 'token=x'],
      ['application/json', '{"token": 7}'],
      ['application/json', 'not json'],
      ['application/x-www-form-urlencoded', `token=${'x'.repeat(DEFAULT_MAX_BODY_BYTES)}`],
    ] as const) {
      const res = await world.request('/auth/introspect', {
        method: 'POST',
        headers: { Authorization: wrong, 'Content-Type': type },
        body,
      })
      expect(res.status, `${type} ${body.slice(0, 20)}`).toBe(401)
      expect(await res.json()).toEqual({
        error: 'invalid_client',
        error_description: 'Client authentication failed',
      })
    }
    // The right client with the same bodies is told what is wrong with them.
    const res = await world.request('/auth/introspect', {
      method: 'POST',
      headers: { Authorization: fleetBasic(), 'Content-Type': 'text/plain' },
      body: 'token=x',
    })
    expect(res.status).toBe(400)
  })

  test('verifies a secret once: later calls with it cost no password verification', async () => {
    const world = await createWorld()
    const token = await world.login()
    const before = world.hasher.verified.length
    for (let i = 0; i < 5; i++) await introspection(world, token)
    expect(world.hasher.verified.length - before).toBe(1)
    expect(world.events.ofType('client.authenticated')).toHaveLength(1)
  })

  test('throttles guessing without checking: after five wrong secrets from one address, 429 unverified, the right hashed secret too until it is verified once', async () => {
    const world = await createWorld()
    for (let i = 0; i < 5; i++)
      expect((await world.introspect('t', basicHeader('fleet', `guess ${i}`))).status).toBe(401)
    const checked = world.hasher.verified.length
    // The secret is hashed like a password and not verified since the start: a guess like any other.
    for (const authorization of [
      basicHeader('fleet', 'guess 5'),
      basicHeader('fleet', 'guess 0'),
      fleetBasic(),
    ]) {
      const res = await world.introspect('t', authorization)
      expect(res.status).toBe(429)
      expect(Number(res.headers.get('Retry-After'))).toBeGreaterThan(0)
      expect(await res.json()).toMatchObject({ error: 'temporarily_unavailable' })
    }
    expect(world.hasher.verified.length).toBe(checked)
    // Verified once from another address, it is never throttled, from the guesses' address too.
    world.setAddress('192.0.2.200')
    expect((await world.introspect('t', fleetBasic())).status).toBe(200)
    world.setAddress(ADDRESS)
    expect((await world.introspect('t', fleetBasic())).status).toBe(200)
    expect((await world.introspect('t', basicHeader('fleet', 'guess 6'))).status).toBe(429)
    expect(world.hasher.verified.length).toBe(checked + 1)
  })

  test('a malformed request is 400 invalid_request', async () => {
    const world = await createWorld()
    const res = await world.request('/auth/introspect', {
      method: 'POST',
      headers: { Authorization: fleetBasic(), 'Content-Type': 'application/json' },
      body: '{"token": 7}',
    })
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({
      error: 'invalid_request',
      error_description: 'Invalid parameter: token must be a string',
    })
  })
})

describe('a resource server checking a password (POST /auth/token with HTTP Basic)', () => {
  const grant = { grant_type: 'password', scope: '', username: 'reader', password: 'pw' }
  const asFleet = (world: World, fields: Record<string, string>, authorization = fleetBasic()) =>
    world.request('/auth/token', {
      method: 'POST',
      headers: { Authorization: authorization, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    })

  test('issues the user a token whose client is the resource server', async () => {
    const world = await createWorld()
    const res = await asFleet(world, { ...grant, client_id: 'fleet' })
    expect(res.status).toBe(200)
    const { access_token } = (await res.json()) as { access_token: string }
    expect(await introspection(world, access_token)).toMatchObject({
      active: true,
      username: 'reader',
      scope: 'read',
      client_id: 'fleet',
    })
    // Without client_id in the body too.
    expect((await asFleet(world, grant)).status).toBe(200)
  })

  test('refuses a wrong secret or another client_id with invalid_client, a wrong password with the empty 401', async () => {
    const world = await createWorld()
    const wrongSecret = await asFleet(world, grant, basicHeader('fleet', 'nope'))
    expect(wrongSecret.status).toBe(401)
    expect(wrongSecret.headers.get('WWW-Authenticate')).toBe('Basic realm="flowadmin"')
    expect((await asFleet(world, { ...grant, client_id: 'service-admin' })).status).toBe(401)
    const wrongPassword = await asFleet(world, { ...grant, password: 'nope' })
    expect(wrongPassword.status).toBe(401)
    expect(await wrongPassword.text()).toBe('')
    // A client id that only a resource server may use is not accepted without its secret.
    expect((await world.tokenRequest({ ...grant, client_id: 'fleet' })).status).toBe(401)
  })
})

describe('GET /auth/resource-servers', () => {
  test('lists each configured server with its last call, for callers with *', async () => {
    const world = await createWorld()
    const admin = await world.login()
    const list = async () => (await (await world.get('/auth/resource-servers', admin)).json()) as unknown
    expect(await list()).toEqual({
      resource_servers: [{ id: 'fleet', last_call_at: null, secret: 'password_hash' }],
    })
    await world.introspect(admin)
    expect(await list()).toEqual({
      resource_servers: [
        { id: 'fleet', last_call_at: new Date(world.clock.now()).toISOString(), secret: 'password_hash' },
      ],
    })
    const reader = await world.login('reader', 'read')
    expect((await world.get('/auth/resource-servers', reader)).status).toBe(401)
  })
})

describe('basicCredentials', () => {
  test('decodes form-urlencoded id and secret, and refuses what is not Basic', () => {
    expect(basicCredentials(basicHeader('fleet one', 'p:ss wörd%'))).toEqual({
      id: 'fleet one',
      secret: 'p:ss wörd%',
    })
    expect(basicCredentials(`basic ${btoa('a:b')}`)).toEqual({ id: 'a', secret: 'b' })
    expect(basicCredentials(`Basic ${btoa('a+b:c+d')}`)).toEqual({ id: 'a b', secret: 'c d' })
    expect(basicCredentials(undefined)).toBeNull()
    expect(basicCredentials(`Basic ${btoa(':secret')}`)).toBeNull()
    expect(basicCredentials(`Basic ${btoa('a:%zz')}`)).toBeNull()
    expect(basicCredentials('Basic \u00ff')).toBeNull()
    expect(basicCredentials(`Basic ${btoa('\u00ff:x')}`)).toBeNull()
  })
})
