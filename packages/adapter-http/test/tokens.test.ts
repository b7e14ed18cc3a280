import { describe, expect, test } from 'vitest'
import { ADDRESS, createWorld, expectChallenge, sendJson, type World } from './helpers.js'

const DAY = 86_400_000

interface TokenJson {
  id: string
  user: string
  kind: 'session' | 'api'
  name: string | null
  client_id: string
  audience: string
  scope: string[]
  created_at: string
  expires_at: string | null
  last_used_at: string | null
  last_address: string | null
  agent: string | null
  current: boolean
  sign_in: string | null
}

async function list(world: World, token: string, query = ''): Promise<TokenJson[]> {
  const res = await world.get(`/auth/tokens${query}`, token)
  expect(res.status).toBe(200)
  expect(res.headers.get('Cache-Control')).toBe('no-store')
  return ((await res.json()) as { tokens: TokenJson[] }).tokens
}

describe('GET /auth/tokens', () => {
  test("lists the caller's own sessions with every field, the one in use marked, never a token", async () => {
    const world = await createWorld()
    const first = await world.login()
    world.clock.advance(1000)
    const second = await world.login('admin', 'read', 'service-editor')
    await world.login('reader', 'read')
    const mine = await list(world, second)
    expect(mine).toEqual([
      {
        id: expect.stringMatching(/^[A-Za-z0-9_-]{16}$/),
        user: 'admin',
        kind: 'session',
        name: null,
        client_id: 'service-admin',
        audience: 'flowadmin',
        scope: ['*'],
        created_at: new Date(world.clock.now() - 1000).toISOString(),
        expires_at: new Date(world.clock.now() - 1000 + 7 * DAY).toISOString(),
        last_used_at: new Date(world.clock.now() - 1000).toISOString(), // the login
        last_address: ADDRESS,
        agent: null,
        current: false,
        sign_in: 'password',
      },
      expect.objectContaining({
        client_id: 'service-editor',
        scope: ['read'],
        current: true,
        last_used_at: new Date(world.clock.now()).toISOString(),
        last_address: ADDRESS,
      }),
    ])
    const text = JSON.stringify(mine)
    expect(text).not.toContain(first)
    expect(text).not.toContain(second)
  })

  test('tells how each session signed in: a password login says password, an API token null', async () => {
    const world = await createWorld()
    const token = await world.login()
    const created = await sendJson(world, 'POST', '/auth/tokens', token, { name: 'deploy' })
    expect(created.status).toBe(201)
    const { token: apiToken } = (await created.json()) as { token: string }
    const expected = [
      { kind: 'session', sign_in: 'password' },
      { kind: 'api', sign_in: null },
    ]
    // The same whichever of them asks, and in everyone's listing.
    for (const caller of [token, apiToken]) {
      expect((await list(world, caller)).map(({ kind, sign_in }) => ({ kind, sign_in }))).toEqual(expected)
    }
    expect((await list(world, token, '?user=*')).map(({ sign_in }) => sign_in)).toEqual(['password', null])
  })

  test('tells sessions and API tokens apart by the browser or tool that asked for them', async () => {
    const world = await createWorld()
    const firefox = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0'
    const login = await world.request('/auth/token', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'User-Agent': firefox },
      body: 'client_id=service-admin&grant_type=password&scope=*&username=admin&password=pw',
    })
    const { access_token: token } = (await login.json()) as { access_token: string }
    const created = await world.request('/auth/tokens', {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': 'curl/8.5.0',
        Authorization: `Bearer ${token}`,
      },
      body: JSON.stringify({ name: 'deploy' }),
    })
    expect(created.status).toBe(201)
    expect((await list(world, token)).map(({ kind, agent }) => ({ kind, agent }))).toEqual([
      { kind: 'session', agent: 'Firefox 133 on Linux' },
      { kind: 'api', agent: 'curl 8.5.0' },
    ])
  })

  test('one user’s or everyone’s needs `*`; without it 401 insufficient_scope', async () => {
    const world = await createWorld()
    const admin = await world.login()
    const reader = await world.login('reader', 'read')
    expect((await list(world, admin, '?user=*')).map((view) => view.user)).toEqual(['admin', 'reader'])
    expect((await list(world, admin, '?user=reader')).map((view) => view.current)).toEqual([false])
    expect((await list(world, reader, '?user=reader')).map((view) => view.current)).toEqual([true])
    await expectChallenge(await world.get('/auth/tokens?user=admin', reader), 'insufficient_scope')
    await expectChallenge(await world.get('/auth/tokens?user=*', reader), 'insufficient_scope')
    await expectChallenge(await world.get('/auth/tokens'), undefined)
  })

  test('does not exist when authentication is off', async () => {
    const world = await createWorld({ auth: false })
    expect((await world.get('/auth/tokens')).status).toBe(404)
    expect((await sendJson(world, 'POST', '/auth/tokens', null, { name: 'x' })).status).toBe(404)
  })
})

describe('DELETE /auth/tokens/{id} and ?user=', () => {
  test("ends one's own token: 204, then that token is refused and the other works", async () => {
    const world = await createWorld()
    const caller = await world.login('reader', 'read')
    const other = await world.login('reader', 'read')
    const target = (await list(world, caller)).find((view) => !view.current)
    const res = await sendJson(world, 'DELETE', `/auth/tokens/${target?.id}`, caller)
    expect(res.status).toBe(204)
    expect(await res.text()).toBe('')
    await expectChallenge(await world.get('/settings', other), 'invalid_token')
    expect((await world.get('/settings', caller)).status).toBe(200)
    expect(world.events.ofType('token.revoked')).toEqual([
      expect.objectContaining({ owner: 'reader', id: target?.id, username: 'reader', address: ADDRESS }),
    ])
  })

  test("another user's token: 404 without `*` and nothing happens; with `*` it ends", async () => {
    const world = await createWorld()
    const admin = await world.login()
    const reader = await world.login('reader', 'read')
    const [adminView] = await list(world, admin)
    const [readerView] = await list(world, reader)
    expect((await sendJson(world, 'DELETE', `/auth/tokens/${adminView?.id}`, reader)).status).toBe(404)
    expect((await world.get('/settings', admin)).status).toBe(200)
    expect((await sendJson(world, 'DELETE', `/auth/tokens/${readerView?.id}`, admin)).status).toBe(204)
    await expectChallenge(await world.get('/settings', reader), 'invalid_token')
    expect((await sendJson(world, 'DELETE', `/auth/tokens/${readerView?.id}`, admin)).status).toBe(404)
    for (const id of ['no-such-id', 'x'.repeat(65), '%2F..', 'a/b']) {
      expect((await sendJson(world, 'DELETE', `/auth/tokens/${id}`, admin)).status).toBe(404)
    }
  })

  test('ends every token of a user: own or with `*`; a user is required', async () => {
    const world = await createWorld()
    const admin = await world.login()
    const reader1 = await world.login('reader', 'read')
    const reader2 = await world.login('reader', 'read')
    await expectChallenge(
      await sendJson(world, 'DELETE', '/auth/tokens?user=admin', reader1),
      'insufficient_scope',
    )
    const missing = await sendJson(world, 'DELETE', '/auth/tokens', admin)
    expect(missing.status).toBe(400)
    expect(await missing.json()).toEqual({
      error: 'invalid_request',
      error_description: 'Missing required parameter: user',
    })
    const res = await sendJson(world, 'DELETE', '/auth/tokens?user=reader', admin)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ revoked: 2 })
    for (const token of [reader1, reader2])
      await expectChallenge(await world.get('/settings', token), 'invalid_token')
    expect((await world.get('/settings', admin)).status).toBe(200)
    expect(world.events.ofType('tokens.revoked_all')).toEqual([
      expect.objectContaining({
        owner: 'reader',
        count: 2,
        reason: 'request',
        username: 'admin',
        address: ADDRESS,
      }),
    ])
  })

  test('?user=* ends everyone’s tokens, with `*` only', async () => {
    const world = await createWorld()
    const admin = await world.login()
    const reader = await world.login('reader', 'read')
    const editor = await world.login('editor', '')
    await expectChallenge(
      await sendJson(world, 'DELETE', '/auth/tokens?user=*', reader),
      'insufficient_scope',
    )
    const res = await sendJson(world, 'DELETE', '/auth/tokens?user=*', admin)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ revoked: 3 })
    for (const token of [admin, reader, editor]) {
      await expectChallenge(await world.get('/settings', token), 'invalid_token')
    }
  })
})

describe('POST /auth/tokens', () => {
  test('201 with an fa_ token shown once, 90 days by default; it works as a bearer and is listed', async () => {
    const world = await createWorld()
    const editor = await world.login('editor', '')
    const res = await sendJson(world, 'POST', '/auth/tokens', editor, { name: 'nightly deploy' })
    expect(res.status).toBe(201)
    expect(res.headers.get('Cache-Control')).toBe('no-store')
    const body = (await res.json()) as { id: string; token: string }
    expect(body).toEqual({
      id: expect.any(String),
      name: 'nightly deploy',
      token: expect.stringMatching(/^fa_[A-Za-z0-9_-]{43}$/),
      scope: ['nodes.read', 'nodes.write'],
      audience: 'flowadmin',
      expires_at: new Date(world.clock.now() + 90 * DAY).toISOString(),
    })
    expect((await world.get('/nodes', body.token)).status).toBe(200)
    await expectChallenge(await world.get('/settings', body.token), 'insufficient_scope')
    const listed = await list(world, editor)
    expect(listed.find((view) => view.id === body.id)).toMatchObject({ kind: 'api', name: 'nightly deploy' })
    expect(JSON.stringify(listed)).not.toContain(body.token)
    expect(world.events.ofType('token.created')).toEqual([
      expect.objectContaining({ owner: 'editor', id: body.id, name: 'nightly deploy', address: ADDRESS }),
    ])
  })

  test('names its audience: a resource server’s token works there alone, and is listed with it', async () => {
    const world = await createWorld()
    const admin = await world.login()
    world.clock.advance(1000)
    const res = await sendJson(world, 'POST', '/auth/tokens', admin, {
      name: 'probe',
      scope: 'read',
      audience: 'fleet',
    })
    expect(res.status).toBe(201)
    const body = (await res.json()) as { id: string; token: string; audience: string }
    expect(body.audience).toBe('fleet')
    await expectChallenge(await world.get('/nodes', body.token), 'invalid_token')
    expect(await (await world.introspect(body.token)).json()).toMatchObject({ active: true, aud: 'fleet' })
    world.clock.advance(1000)
    const fleetSession = await world.loginAsFleet('admin', 'read')
    const listed = await list(world, admin)
    expect(listed.map((view) => [view.kind, view.client_id, view.audience])).toEqual([
      ['session', 'service-admin', 'flowadmin'],
      ['api', 'api', 'fleet'],
      ['session', 'fleet', 'fleet'],
    ])
    // The resource server's tokens are worth nothing on flowadmin's own API, the inventory included.
    await expectChallenge(await world.get('/auth/tokens?user=*', fleetSession), 'invalid_token')
    await expectChallenge(
      await sendJson(world, 'POST', '/auth/tokens', fleetSession, { name: 'x' }),
      'invalid_token',
    )
  })

  test.each([
    ['nowhere', 'Unknown audience: nowhere (flowadmin, or the id of a configured resource server)'],
    ['', 'Invalid field: audience must not be empty'],
    [7, 'Invalid field: audience must be a string, not a number'],
  ])('an unknown audience %j is refused: 400, nothing created', async (audience, description) => {
    const world = await createWorld()
    const admin = await world.login()
    const res = await sendJson(world, 'POST', '/auth/tokens', admin, { name: 'x', audience })
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({ error: 'invalid_request', error_description: description })
    expect(await list(world, admin)).toHaveLength(1)
  })

  test('takes any subset of the caller’s rights as its scope, in permission words', async () => {
    const world = await createWorld()
    const editor = await world.login('editor', '')
    const create = async (scope: string) =>
      sendJson(world, 'POST', '/auth/tokens', editor, { name: 'x', scope })
    const narrow = await create('nodes.read')
    expect(narrow.status).toBe(201)
    const { token, scope } = (await narrow.json()) as { token: string; scope: string[] }
    expect(scope).toEqual(['nodes.read'])
    expect((await world.get('/nodes', token)).status).toBe(200)
    await expectChallenge(
      await world.put('/nodes/node-red-node-random', { enabled: false }, token),
      'insufficient_scope',
    )
    for (const [words, description] of [
      ['flows.read', 'The scope exceeds the rights of the token owner'],
      ['nodes.delete', 'Unsupported scope: nodes.delete'],
    ]) {
      const res = await create(words as string)
      expect(res.status).toBe(400)
      expect(((await res.json()) as { error_description: string }).error_description).toContain(description)
    }
  })

  test.each([
    [{ name: 'x', scope: '*' }, 'invalid_scope'],
    [{ name: 'x', scope: 'write' }, 'invalid_scope'],
    [{ name: 'x', expires_in: 400 * 86_400 }, 'invalid_request'],
    [{ name: 'x', expires_in: null }, 'invalid_request'],
    [{ name: 'x', expires_in: -1 }, 'invalid_request'],
    [{ name: '' }, 'invalid_request'],
    [{ name: '   ' }, 'invalid_request'],
    [{}, 'invalid_request'],
    ['name=x', 'invalid_request'],
  ])('%j is refused: 400 %s, nothing created', async (body, error) => {
    const world = await createWorld()
    const reader = await world.login('reader', 'read')
    const res = await sendJson(world, 'POST', '/auth/tokens', reader, body)
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({ error, error_description: expect.any(String) })
    expect(await list(world, reader)).toHaveLength(1)
  })

  test('needs a user: anonymous callers with default permissions get 401', async () => {
    const world = await createWorld({ defaultPermissions: '*' })
    await expectChallenge(await sendJson(world, 'POST', '/auth/tokens', null, { name: 'x' }), undefined)
  })

  test("a downgraded user's token acts with the intersection from the next request", async () => {
    const world = await createWorld()
    const editor = await world.login('editor', '')
    await world.core.setUsers([
      { username: 'editor', password: world.hasher.hash('pw'), permissions: ['nodes.read'] },
    ])
    expect((await world.get('/nodes', editor)).status).toBe(200)
    await expectChallenge(
      await world.put('/nodes/node-red-node-random', { enabled: false }, editor),
      'insufficient_scope',
    )
    const settings = await world.get('/auth/tokens', editor)
    expect(settings.status).toBe(200)
  })
})
