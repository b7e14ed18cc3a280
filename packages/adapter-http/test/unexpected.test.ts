import { createMemoryStores } from '@flowadmin/adapter-memory'
import { afterEach, describe, expect, test, vi } from 'vitest'
import { createHttpApp } from '../src/index.js'
import { createWorld } from './helpers.js'

afterEach(() => {
  vi.restoreAllMocks()
})

describe('unexpected failures: one logged 500 without detail', () => {
  const brokenWorld = async (failure: unknown, auth = false) => {
    const stores = createMemoryStores()
    const world = await createWorld({ stores, auth })
    const logged: unknown[] = []
    const app = createHttpApp(world.core, {
      version: '1',
      onUnexpectedError: (error) => logged.push(error),
    })
    const fail = async () => {
      throw failure
    }
    stores.modules.list = fail
    stores.modules.find = fail
    stores.tokens.save = fail
    return { app, logged }
  }

  const expectInternalError = async (res: Response) => {
    expect(res.status).toBe(500)
    expect(res.headers.get('Content-Type')).toMatch(/^application\/json/)
    expect(res.headers.get('X-Content-Type-Options')).toBe('nosniff')
    const text = await res.text()
    expect(JSON.parse(text)).toStrictEqual({ code: 'unexpected_error', message: 'Internal error' })
    return text
  }

  test('a port that throws: 500, logged once, no stack or path in the body', async () => {
    const failure = new Error('disk I/O error at /var/lib/flowadmin/flowadmin.db')
    const { app, logged } = await brokenWorld(failure)
    const text = await expectInternalError(await app.request('/nodes'))
    expect(text).not.toContain('/var/lib')
    expect(text).not.toContain('at ')
    expect(logged).toEqual([failure])
  })

  test('during a PUT', async () => {
    const { app, logged } = await brokenWorld(new Error('boom'))
    await expectInternalError(
      await app.request('/nodes/node-red-node-random', {
        method: 'PUT',
        headers: { 'Content-Type': 'application/json' },
        body: '{"enabled":false}',
      }),
    )
    expect(logged).toHaveLength(1)
  })

  test('during a login: still no-store', async () => {
    const { app, logged } = await brokenWorld(new Error('boom'), true)
    const login = await app.request('/auth/token', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'client_id=service-admin&grant_type=password&scope=*&username=admin&password=pw',
    })
    await expectInternalError(login)
    expect(login.headers.get('Cache-Control')).toBe('no-store')
    expect(logged).toHaveLength(1)
  })

  test('something thrown that is not an Error is handled alike', async () => {
    const { app, logged } = await brokenWorld('a string')
    await expectInternalError(await app.request('/nodes'))
    expect(logged).toEqual(['a string'])
  })

  test('by default the error goes to console.error, once', async () => {
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {})
    const stores = createMemoryStores()
    const world = await createWorld({ stores, auth: false })
    const failure = new Error('boom')
    stores.modules.list = async () => {
      throw failure
    }
    const app = createHttpApp(world.core, { version: '1' })
    await expectInternalError(await app.request('/nodes'))
    expect(spy).toHaveBeenCalledTimes(1)
    expect(spy.mock.calls[0]).toContain(failure)
  })

  test('a logger that throws still yields the 500', async () => {
    const stores = createMemoryStores()
    const world = await createWorld({ stores, auth: false })
    stores.modules.list = async () => {
      throw new Error('boom')
    }
    const app = createHttpApp(world.core, {
      version: '1',
      onUnexpectedError: () => {
        throw new Error('logger down')
      },
    })
    await expectInternalError(await app.request('/nodes'))
  })
})
