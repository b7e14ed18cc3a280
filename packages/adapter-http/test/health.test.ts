import { createMemoryStores } from '@flowadmin/adapter-memory'
import { describe, expect, test } from 'vitest'
import type { ResponseSample } from '../src/index.js'
import { createWorld, PLAIN } from './helpers.js'
import { createResponseValidator } from './openapi-validate.js'

const EXPOSITION = { contentType: 'text/plain; version=0.0.4; charset=utf-8', body: 'up 1\n' }

describe('GET /healthz', () => {
  test('200 {"status":"ok"} without a token when auth is on, never cached, below the base path too', async () => {
    for (const basePath of ['', '/admin']) {
      const world = await createWorld({ app: { basePath } })
      const res = await world.request('/healthz')
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ status: 'ok' })
      expect(res.headers.get('Cache-Control')).toBe('no-store')
      expect(res.headers.get('X-Content-Type-Options')).toBe('nosniff')
    }
    expect((await (await createWorld({ app: { basePath: '/admin' } })).app.request('/healthz')).status).toBe(
      404,
    )
  })
})

describe('GET /readyz', () => {
  test('ready by default, and whenever the check says so', async () => {
    let reason: string | null = null
    const world = await createWorld({ app: { readiness: async () => reason } })
    const ready = await world.request('/readyz')
    expect(ready.status).toBe(200)
    expect(await ready.json()).toEqual({ status: 'ready' })
    expect(ready.headers.get('Cache-Control')).toBe('no-store')

    reason = 'storage_unavailable'
    const not = await world.request('/readyz')
    expect(not.status).toBe(503)
    expect(await not.json()).toEqual({ status: 'not_ready', reason: 'storage_unavailable' })
    expect(not.headers.get('Cache-Control')).toBe('no-store')

    const plain = await createWorld()
    expect(await (await plain.request('/readyz')).json()).toEqual({ status: 'ready' })
  })

  test('a check that throws is 503 check_failed, with none of its message', async () => {
    const world = await createWorld({
      app: {
        readiness: async () => {
          throw new Error('SQLITE_CANTOPEN: /srv/secret/flowadmin.db')
        },
      },
    })
    const res = await world.request('/readyz')
    expect(res.status).toBe(503)
    expect(await res.text()).toBe('{"status":"not_ready","reason":"check_failed"}')
  })

  test('a check that never answers is 503 check_timeout after two seconds', async () => {
    const world = await createWorld({ app: { readiness: () => new Promise<string | null>(() => {}) } })
    const res = await world.request('/readyz')
    expect(res.status).toBe(503)
    expect(await res.json()).toEqual({ status: 'not_ready', reason: 'check_timeout' })
  })
})

describe('GET /metrics', () => {
  test('absent unless the app is given metrics', async () => {
    const world = await createWorld()
    const admin = await world.login()
    expect((await world.get('/metrics', admin)).status).toBe(404)
  })

  test('needs metrics.read (read grants it), and serves the exposition as it is', async () => {
    const world = await createWorld({ app: { metrics: async () => EXPOSITION } })
    const validator = createResponseValidator(await (await world.request('/openapi.json')).json())
    const none = await world.get('/metrics')
    expect(none.status).toBe(401)
    expect(await none.text()).toBe('')
    const editor = await world.get('/metrics', await world.login('editor', ''))
    expect(editor.status).toBe(401)
    expect(editor.headers.get('WWW-Authenticate')).toContain('error="insufficient_scope"')
    expect((await validator.check('GET', '/metrics', editor)).problems).toEqual([])

    for (const user of ['reader', 'admin']) {
      const res = await world.get('/metrics', await world.login(user, user === 'admin' ? '*' : 'read'))
      expect(res.status).toBe(200)
      expect(res.headers.get('Content-Type')).toBe(EXPOSITION.contentType)
      expect(res.headers.get('Cache-Control')).toBe('no-store')
      expect(await res.clone().text()).toBe(EXPOSITION.body)
      expect((await validator.check('GET', '/metrics', res)).problems).toEqual([])
    }
    const document = (await (await world.request('/openapi.json')).json()) as { paths: object }
    expect(Object.keys(document.paths)).toContain('/metrics')
  })
})

describe('onResponse', () => {
  test('reports the route template, never the raw path, with the status and a duration', async () => {
    const samples: ResponseSample[] = []
    const stores = createMemoryStores()
    const world = await createWorld({
      stores,
      app: { basePath: '/admin', onResponse: (s) => samples.push(s) },
    })
    const admin = await world.login()
    await world.get('/nodes/@acme/flow-kit/beta', admin)
    await world.put(`/nodes/${PLAIN.name}`, { enabled: false }, admin)
    await world.get('/healthz')
    await world.request('/no/such/path?x=1')
    await world.app.request('/outside')
    stores.modules.find = async () => {
      throw new Error('disk I/O error')
    }
    await world.get(`/nodes/${PLAIN.name}`, admin)

    expect(samples.map(({ method, route, status }) => [method, route, status])).toEqual([
      ['POST', '/auth/token', 200],
      ['GET', '/nodes/*', 200],
      ['PUT', '/nodes/*', 200],
      ['GET', '/healthz', 200],
      ['GET', 'unmatched', 404],
      ['GET', 'unmatched', 404],
      ['GET', '/nodes/*', 500],
    ])
    for (const sample of samples) {
      expect(sample.seconds).toBeGreaterThanOrEqual(0)
      expect(sample.seconds).toBeLessThan(60)
    }
  })

  test('a reporter that throws changes no answer', async () => {
    const world = await createWorld({
      app: {
        onResponse: () => {
          throw new Error('broken reporter')
        },
      },
    })
    const res = await world.request('/auth/login')
    expect(res.status).toBe(200)
  })
})
