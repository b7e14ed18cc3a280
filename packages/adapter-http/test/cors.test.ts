import { createMemoryStores } from '@flowadmin/adapter-memory'
import { describe, expect, test } from 'vitest'
import { originProblem } from '../src/index.js'
import { createWorld } from './helpers.js'

const ALLOWED = 'https://editor.example'
const OTHER = 'http://127.0.0.1:8080'

/** Every `Access-Control-*` header of a response, by name. */
function corsHeaders(res: Response): Record<string, string> {
  const found: Record<string, string> = {}
  res.headers.forEach((value, name) => {
    if (name.startsWith('access-control-')) found[name] = value
  })
  return found
}

const preflight = (origin: string, method = 'PUT') => ({
  method: 'OPTIONS',
  headers: {
    Origin: origin,
    'Access-Control-Request-Method': method,
    'Access-Control-Request-Headers': 'authorization,content-type',
  },
})

describe('without the cors option', () => {
  test('no response carries a CORS header, whatever the Origin, and a preflight is 404', async () => {
    const world = await createWorld()
    const token = await world.login()
    const responses = [
      await world.request('/auth/login', { headers: { Origin: ALLOWED } }),
      await world.request('/settings', { headers: { Origin: ALLOWED, Authorization: `Bearer ${token}` } }),
      await world.request('/settings', { headers: { Origin: ALLOWED } }),
      await world.request('/nodes/node-red-node-random', preflight(ALLOWED)),
    ]
    expect(responses.map((res) => res.status)).toEqual([200, 200, 401, 404])
    for (const res of responses) {
      expect(corsHeaders(res)).toEqual({})
      expect(res.headers.get('Vary')).toBeNull()
    }
  })
})

describe('with cors: { origins }', () => {
  const world = () => createWorld({ app: { cors: { origins: [ALLOWED, OTHER] } } })

  test('a listed origin gets exactly its own origin back, on successes and refusals alike', async () => {
    const w = await world()
    const token = await w.login()
    for (const [origin, res, status] of [
      [ALLOWED, await w.request('/auth/login', { headers: { Origin: ALLOWED } }), 200],
      [
        OTHER,
        await w.request('/settings', { headers: { Origin: OTHER, Authorization: `Bearer ${token}` } }),
        200,
      ],
      [ALLOWED, await w.request('/settings', { headers: { Origin: ALLOWED } }), 401],
      [ALLOWED, await w.request('/nowhere', { headers: { Origin: ALLOWED } }), 404],
    ] as const) {
      expect(res.status).toBe(status)
      expect(corsHeaders(res)).toEqual({
        'access-control-allow-origin': origin,
        'access-control-expose-headers': 'Retry-After, WWW-Authenticate',
      })
      expect(res.headers.get('Vary')).toBe('Origin')
      expect(res.headers.get('X-Content-Type-Options')).toBe('nosniff')
    }
  })

  test('any other origin, or none, gets no CORS header (but Vary: Origin)', async () => {
    const w = await world()
    const origins: Array<Record<string, string>> = [
      {},
      { Origin: 'https://evil.example' },
      { Origin: 'https://editor.example.evil.example' },
      { Origin: 'https://EDITOR.example' },
      { Origin: 'http://editor.example' },
      { Origin: 'https://editor.example:443' },
      { Origin: 'null' },
      { Origin: '*' },
    ]
    for (const headers of origins) {
      const res = await w.request('/auth/login', { headers })
      expect(res.status).toBe(200)
      expect(corsHeaders(res)).toEqual({})
      expect(res.headers.get('Vary')).toBe('Origin')
    }
  })

  test('a preflight from a listed origin is 204 with the allowed methods and headers, without auth', async () => {
    const w = await world()
    for (const path of ['/nodes/node-red-node-random', '/auth/token', '/settings']) {
      const res = await w.request(path, preflight(ALLOWED))
      expect(res.status).toBe(204)
      expect(await res.text()).toBe('')
      expect(corsHeaders(res)).toEqual({
        'access-control-allow-origin': ALLOWED,
        'access-control-allow-methods': 'GET, HEAD, POST, PUT, DELETE',
        'access-control-allow-headers': 'Authorization, Content-Type',
        'access-control-max-age': '600',
      })
      expect(res.headers.get('Vary')).toBe('Origin')
      expect(res.headers.get('X-Content-Type-Options')).toBe('nosniff')
    }
    // The preflight changed nothing.
    expect(await w.moduleState('node-red-node-random')).toEqual([['random', true]])
  })

  test('a preflight from another origin is not answered: 404 without CORS headers', async () => {
    const w = await world()
    const res = await w.request('/nodes/node-red-node-random', preflight('https://evil.example'))
    expect(res.status).toBe(404)
    expect(corsHeaders(res)).toEqual({})
  })

  test('a plain OPTIONS (no Access-Control-Request-Method) is routed as usual', async () => {
    const w = await world()
    const res = await w.request('/settings', { method: 'OPTIONS', headers: { Origin: ALLOWED } })
    expect(res.status).toBe(404)
    expect(corsHeaders(res)['access-control-allow-methods']).toBeUndefined()
  })

  test('an unexpected error (500) still carries the CORS headers of a listed origin', async () => {
    const stores = createMemoryStores()
    const w = await createWorld({
      stores,
      app: { cors: { origins: [ALLOWED] }, onUnexpectedError: () => {} },
    })
    const token = await w.login()
    stores.modules.list = async () => {
      throw new Error('disk I/O error')
    }
    const res = await w.request('/nodes', { headers: { Origin: ALLOWED, Authorization: `Bearer ${token}` } })
    expect(res.status).toBe(500)
    expect(corsHeaders(res)['access-control-allow-origin']).toBe(ALLOWED)
    expect(res.headers.get('X-Content-Type-Options')).toBe('nosniff')
  })
})

describe('origins', () => {
  test.each([
    'https://editor.example',
    'http://127.0.0.1:8080',
    'http://[::1]:3000',
    'https://xn--bcher-kva.example',
  ])('%s is an origin', (origin) => {
    expect(originProblem(origin)).toBeNull()
  })

  test.each([
    ['*', 'is not an origin'],
    ['null', 'is not an origin'],
    ['editor.example', 'is not an origin'],
    ['https://editor.example/', 'write "https://editor.example"'],
    ['https://editor.example/app', 'write "https://editor.example"'],
    ['https://Editor.Example', 'write "https://editor.example"'],
    ['https://editor.example:443', 'write "https://editor.example"'],
    ['file:///tmp/x.html', 'is not an http:// or https:// origin'],
  ])('%s is refused', async (origin, message) => {
    expect(originProblem(origin)).toContain(message)
    await expect(createWorld({ app: { cors: { origins: [origin] } } })).rejects.toThrow(RangeError)
  })
})
