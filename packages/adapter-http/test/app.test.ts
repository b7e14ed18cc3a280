import { describe, expect, test } from 'vitest'
import { createWorld, expectNotFound, PLAIN, snapshot } from './helpers.js'

describe('unknown routes and methods', () => {
  for (const [method, path] of [
    ['GET', '/'],
    ['GET', '/nope'],
    ['GET', '/auth/token'],
    ['GET', '/auth/revoke'],
    ['POST', '/auth/login'],
    ['DELETE', '/settings'],
    ['DELETE', '/auth/login'],
    ['POST', '/nodes/node-red-node-random'],
    ['PUT', '/settings'],
    ['GET', '/settings/'],
    ['OPTIONS', '/settings'],
    ['HEAD', '/auth/token'],
  ]) {
    test(`${method} ${path}: 404 with an empty body`, async () => {
      const world = await createWorld()
      const res = await world.request(path as string, { method })
      await expectNotFound(res)
      expect(res.headers.get('X-Content-Type-Options')).toBe('nosniff')
    })
  }
})

describe('basePath (httpAdminRoot)', () => {
  for (const basePath of ['/admin', '/admin/', 'admin']) {
    test(`${JSON.stringify(basePath)}: every route lives below /admin`, async () => {
      const world = await createWorld({ app: { basePath } })
      const app = world.app
      expect((await app.request('/admin/auth/login')).status).toBe(200)
      await expectNotFound(await app.request('/auth/login'))
      await expectNotFound(await app.request('/adminx/auth/login'))
      await expectNotFound(await app.request('/admin'))

      const login = await app.request('/admin/auth/token', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          client_id: 'service-admin',
          grant_type: 'password',
          scope: '*',
          username: 'admin',
          password: 'pw',
        }),
      })
      expect(login.status).toBe(200)
      const { access_token: token } = (await login.json()) as { access_token: string }
      const auth = { Authorization: `Bearer ${token}` }
      expect((await app.request('/admin/settings', { headers: auth })).status).toBe(200)
      await expectNotFound(await app.request('/settings', { headers: auth }))
      expect((await app.request('/admin/nodes', { headers: auth })).status).toBe(200)
      expect((await app.request('/admin/nodes/@acme%2Fflow-kit/beta', { headers: auth })).status).toBe(200)
      const put = await app.request('/admin/nodes/%40acme%2Fflow-kit', {
        method: 'PUT',
        headers: { ...auth, 'Content-Type': 'application/json' },
        body: '{"enabled":false}',
      })
      expect(put.status).toBe(200)
      await expectNotFound(
        await app.request('/nodes/node-red-node-random', {
          method: 'PUT',
          headers: { ...auth, 'Content-Type': 'application/json' },
          body: '{"enabled":false}',
        }),
      )
      const revoke = await app.request('/admin/auth/revoke', {
        method: 'POST',
        headers: { ...auth, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token }).toString(),
      })
      expect(revoke.status).toBe(200)
    })
  }

  test("'/' is the root", async () => {
    const world = await createWorld({ app: { basePath: '/' } })
    expect((await world.app.request('/auth/login')).status).toBe(200)
  })
})

describe('headers on every response', () => {
  test('nosniff everywhere; no CORS, no X-Powered-By', async () => {
    const world = await createWorld({ app: { maxBodyBytes: 1000 }, typesInUse: ['random'] })
    const token = await world.login()
    const form = { 'Content-Type': 'application/x-www-form-urlencoded' }
    const responses = [
      await world.request('/auth/login'),
      await world.request('/auth/login', { method: 'HEAD' }),
      await world.tokenRequest({
        client_id: 'service-admin',
        grant_type: 'password',
        scope: '*',
        username: 'admin',
        password: 'pw',
      }),
      await world.tokenRequest({ grant_type: 'nope' }),
      await world.tokenRequest({
        client_id: 'service-admin',
        grant_type: 'password',
        scope: '*',
        username: 'x',
        password: 'y',
      }),
      await world.request('/auth/token', { method: 'POST', headers: form, body: 'x'.repeat(2000) }),
      await world.get('/settings', token),
      await world.get('/settings'),
      await world.get('/nodes', token),
      await world.get('/nodes/nope', token),
      await world.put(`/nodes/${PLAIN.name}`, { enabled: false }, token),
      await world.put(`/nodes/${PLAIN.name}`, { enabled: 1 }, token),
      await world.request('/auth/revoke', {
        method: 'POST',
        headers: { ...form, Authorization: `Bearer ${token}`, Origin: 'https://evil.example' },
        body: 'token=x',
      }),
      await world.request('/settings', { method: 'OPTIONS', headers: { Origin: 'https://evil.example' } }),
      await world.request('/missing'),
    ]
    const wrongLogin = () =>
      world.tokenRequest({
        client_id: 'service-admin',
        grant_type: 'password',
        scope: '*',
        username: 'a',
        password: 'b',
      })
    for (let i = 0; i < 5; i++) await wrongLogin()
    responses.push(await wrongLogin())
    const statuses = new Set<number>()
    for (const res of responses) {
      const { status, headers } = await snapshot(res)
      statuses.add(status)
      const names = headers.map(([name]) => name)
      expect(res.headers.get('X-Content-Type-Options'), `${status}`).toBe('nosniff')
      expect(names.filter((name) => name.startsWith('access-control-'))).toEqual([])
      expect(names).not.toContain('x-powered-by')
    }
    expect([...statuses].sort()).toEqual([200, 400, 401, 404, 413, 429])
  })
})
