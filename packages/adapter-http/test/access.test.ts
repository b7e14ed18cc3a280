import { describe, expect, test } from 'vitest'
import { createWorld, expectChallenge, PLAIN, VERSION } from './helpers.js'

describe('bearer authentication', () => {
  test('no Authorization header: 401, empty body, bare challenge', async () => {
    const world = await createWorld()
    await expectChallenge(await world.get('/settings'))
  })

  test('an unknown token: 401 invalid_token', async () => {
    const world = await createWorld()
    await expectChallenge(await world.get('/settings', 'garbage'), 'invalid_token')
  })

  for (const header of ['Bearer', 'Bearer ', 'Basic YWRtaW46cHc=', 'Token abc', 'Bearer a b', '']) {
    test(`a header that is not a well-formed bearer (${JSON.stringify(header)}): 401 invalid_token`, async () => {
      const world = await createWorld({ defaultPermissions: 'read' })
      const res = await world.request('/settings', { headers: { Authorization: header } })
      await expectChallenge(res, 'invalid_token')
    })
  }

  test('the scheme is case-insensitive', async () => {
    const world = await createWorld()
    const token = await world.login()
    for (const scheme of ['bearer', 'BEARER', 'BeArEr']) {
      const res = await world.request('/settings', { headers: { Authorization: `${scheme} ${token}` } })
      expect(res.status, scheme).toBe(200)
    }
  })

  test('an expired token: 401 invalid_token', async () => {
    const world = await createWorld({ sessionExpiryTime: 60 })
    const token = await world.login()
    world.clock.advance(59_999)
    expect((await world.get('/settings', token)).status).toBe(200)
    world.clock.advance(1)
    await expectChallenge(await world.get('/settings', token), 'invalid_token')
  })

  test('a valid token without the permission: 401 insufficient_scope, recorded', async () => {
    const world = await createWorld()
    const token = await world.login('editor', '')
    await expectChallenge(await world.get('/settings', token), 'insufficient_scope')
    expect(world.events.ofType('permission.denied')).toEqual([
      expect.objectContaining({ permission: 'settings.read', username: 'editor', address: '203.0.113.7' }),
    ])
  })
})

describe('scopes: the token carries the granted scope, not the user', () => {
  const cases: Array<[string, string, { settings: number; nodes: number; put: number }]> = [
    ['admin', '*', { settings: 200, nodes: 200, put: 200 }],
    ['admin', 'read', { settings: 200, nodes: 200, put: 401 }],
    ['admin', '', { settings: 200, nodes: 200, put: 200 }],
    ['admin', 'read *', { settings: 200, nodes: 200, put: 200 }],
    ['reader', 'read', { settings: 200, nodes: 200, put: 401 }],
    ['reader', '', { settings: 200, nodes: 200, put: 401 }],
    ['editor', '', { settings: 401, nodes: 200, put: 200 }],
  ]
  for (const [username, scope, expected] of cases) {
    test(`${username} with scope ${JSON.stringify(scope)}`, async () => {
      const world = await createWorld()
      const token = await world.login(username, scope)
      expect((await world.get('/settings', token)).status).toBe(expected.settings)
      expect((await world.get('/nodes', token)).status).toBe(expected.nodes)
      const put = await world.put(`/nodes/${PLAIN.name}`, { enabled: false }, token)
      expect(put.status).toBe(expected.put)
      if (expected.put === 401) {
        await expectChallenge(put, 'insufficient_scope')
        expect(await world.moduleState(PLAIN.name)).toEqual([['random', true]])
      }
    })
  }

  test('the settings report the granted permissions', async () => {
    const world = await createWorld()
    const token = await world.login('admin', 'read')
    expect(await (await world.get('/settings', token)).json()).toEqual({
      version: VERSION,
      user: { username: 'admin', permissions: ['read'] },
    })
  })
})

describe('GET /settings', () => {
  test('with a token: the version and the user', async () => {
    const world = await createWorld()
    const res = await world.get('/settings', await world.login())
    expect(res.status).toBe(200)
    expect(res.headers.get('Content-Type')).toMatch(/^application\/json/)
    expect(await res.json()).toEqual({ version: VERSION, user: { username: 'admin', permissions: ['*'] } })
  })

  test('anonymous with default permissions', async () => {
    const world = await createWorld({ defaultPermissions: 'read' })
    expect(await (await world.get('/settings')).json()).toEqual({
      version: VERSION,
      user: { anonymous: true, permissions: ['read'] },
    })
  })

  test('anonymous whose default permissions lack settings.read: a bare challenge (log in)', async () => {
    const world = await createWorld({ defaultPermissions: ['nodes.read'] })
    await expectChallenge(await world.get('/settings'))
    expect((await world.get('/nodes')).status).toBe(200)
  })

  test('default permissions do not rescue a bad token', async () => {
    const world = await createWorld({ defaultPermissions: 'read' })
    await expectChallenge(await world.get('/settings', 'garbage'), 'invalid_token')
  })

  test('anonymous default permissions do not reach PUT', async () => {
    const world = await createWorld({ defaultPermissions: 'read' })
    await expectChallenge(await world.put(`/nodes/${PLAIN.name}`, { enabled: false }))
    expect(await world.moduleState(PLAIN.name)).toEqual([['random', true]])
  })

  test('auth off: anonymous with every permission', async () => {
    const world = await createWorld({ auth: false })
    expect(await (await world.get('/settings')).json()).toEqual({
      version: VERSION,
      user: { anonymous: true, permissions: ['*'] },
    })
  })

  test('HEAD: 401 without a token; with one, 200 and no body', async () => {
    const world = await createWorld()
    const anonymous = await world.request('/settings', { method: 'HEAD' })
    expect(anonymous.status).toBe(401)
    expect(anonymous.headers.get('WWW-Authenticate')).toBe('Bearer realm="flowadmin"')
    const token = await world.login()
    const res = await world.request('/settings', {
      method: 'HEAD',
      headers: { Authorization: `Bearer ${token}` },
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('Content-Type')).toMatch(/^application\/json/)
    expect(await res.text()).toBe('')
  })
})

describe('auth off: the API is open', () => {
  test('every route works without a token, and a garbage token is ignored', async () => {
    const world = await createWorld({ auth: false })
    expect((await world.get('/settings')).status).toBe(200)
    expect((await world.get('/nodes')).status).toBe(200)
    expect((await world.get(`/nodes/${PLAIN.name}`, 'garbage')).status).toBe(200)
    expect((await world.put(`/nodes/${PLAIN.name}`, { enabled: false })).status).toBe(200)
    const res = await world.request(`/nodes/${PLAIN.name}`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json', Authorization: 'Basic x' },
      body: '{"enabled":true}',
    })
    expect(res.status).toBe(200)
    expect(world.events.ofType('module.disabled')).toEqual([
      expect.objectContaining({ username: null, clientId: null, address: '203.0.113.7' }),
    ])
  })

  test('POST /auth/token and POST /auth/revoke do not exist: 404 with an empty body', async () => {
    const world = await createWorld({ auth: false })
    for (const path of ['/auth/token', '/auth/revoke']) {
      const res = await world.request(path, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'token=x&grant_type=password',
      })
      expect(res.status, path).toBe(404)
      expect(await res.text()).toBe('')
    }
  })
})

describe('audience: flowadmin’s API takes only tokens for flowadmin', () => {
  test('a resource server’s token is as unknown on every bearer route of the OpenAPI document but the revocation', async () => {
    const world = await createWorld()
    const admin = await world.login()
    const fleet = await world.loginAsFleet()
    const document = (await (await world.get('/openapi.json')).json()) as {
      paths: Record<string, Record<string, { operationId: string; security?: unknown[] }>>
    }
    const checked: string[] = []
    for (const [template, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        // Routes without a bearer (public, or HTTP Basic for resource servers) are not flowadmin's
        // API for tokens; POST /auth/revoke takes any token to end itself (see revoke.test.ts).
        if (operation.security !== undefined || operation.operationId === 'revokeToken') continue
        const path = template.replace(/\{[^}]+\}/g, 'x')
        const send = (token: string) =>
          world.send(method.toUpperCase(), path, method === 'get' ? undefined : {}, token)
        const unknown = await send('garbage')
        const refused = await send(fleet)
        expect([refused.status, refused.headers.get('WWW-Authenticate')], `${method} ${template}`).toEqual([
          401,
          'Bearer realm="flowadmin", error="invalid_token"',
        ])
        expect(await refused.text()).toBe(await unknown.text())
        checked.push(`${method} ${template}`)
      }
    }
    expect(checked).toEqual(expect.arrayContaining(['get /settings', 'get /nodes', 'get /auth/tokens']))
    // The same user's token for flowadmin still works.
    expect((await world.get('/auth/tokens?user=*', admin)).status).toBe(200)
  })
})
