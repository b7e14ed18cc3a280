// Which requests the introspection fast path takes from the app: only plain well-formed calls.
import { type Core, storeUnavailable } from '@flowadmin/core'
import { afterEach, describe, expect, it } from 'vitest'
import { introspectionPath } from '../src/http/introspection.js'
import { DEFAULT_HTTP_LIMITS, type Listener, listen } from '../src/http/listen.js'
import { connectRaw, send } from './hostile-http.js'

const FORM = 'application/x-www-form-urlencoded'
const BASIC = `Basic ${Buffer.from('fleet:secret').toString('base64')}`
let listener: Listener | undefined

afterEach(async () => {
  await listener?.close(0)
  listener = undefined
})

/**
 * A server whose app answers 418 and whose core calls every token inactive, or throws `throws`
 * when given; what answering threw is in `thrown`.
 */
async function serve(options: { authEnabled?: boolean; basePath?: string; throws?: unknown } = {}) {
  const calls: string[] = []
  const thrown: unknown[] = []
  const core = {
    authEnabled: options.authEnabled ?? true,
    introspect: async (client: { id: string }, token: string) => {
      calls.push(`${client.id} ${token}`)
      if (options.throws !== undefined) throw options.throws
      return { ok: true, value: { active: false } }
    },
  } as unknown as Core
  const front = introspectionPath({
    core,
    basePath: options.basePath ?? '',
    maxBodyBytes: 64,
    clientAddress: () => '127.0.0.1',
    onThrown: (error) => thrown.push(error),
  })
  listener = await listen(
    async () => new Response('app', { status: 418 }),
    '127.0.0.1',
    0,
    DEFAULT_HTTP_LIMITS,
    front.handle,
  )
  return { url: `http://127.0.0.1:${listener.address.port}`, calls, thrown }
}

interface Call {
  path?: string
  method?: string
  headers?: Record<string, string>
  body?: string
}

const call = (url: string, init: Call) =>
  send(url, {
    method: init.method ?? 'POST',
    path: init.path ?? '/auth/introspect',
    headers: init.headers ?? { 'content-type': FORM, authorization: BASIC },
    body: init.body ?? 'token=t1',
  })

describe('the introspection fast path', () => {
  it('answers a plain call itself, from the core', async () => {
    const { url, calls } = await serve()
    const answer = await call(url, {})
    expect(answer.status).toBe(200)
    expect(answer.body).toBe('{"active":false}')
    expect(answer.headers['cache-control']).toBe('no-store')
    expect(calls).toEqual(['fleet t1'])
  })

  it('leaves everything else to the app, untouched', async () => {
    const { url, calls } = await serve()
    const others: Call[] = [
      { method: 'PUT' },
      { path: '/auth/introspect?x=1' },
      { path: '/auth/introspect/' },
      { headers: { 'content-type': FORM, authorization: BASIC, origin: 'https://elsewhere.example' } },
      { headers: { 'content-type': 'application/json', authorization: BASIC }, body: '{"token":"t1"}' },
      { headers: { 'content-type': `${FORM}; charset=utf-8`, authorization: BASIC } },
      { headers: { 'content-type': FORM } },
      { headers: { 'content-type': FORM, authorization: 'Bearer t1' } },
      { headers: { 'content-type': FORM, authorization: BASIC, 'transfer-encoding': 'chunked' } },
      { body: `token=${'t'.repeat(64)}` },
    ]
    for (const other of others) {
      const answer = await call(url, other)
      expect({ other, status: answer.status, body: answer.body }).toEqual({ other, status: 418, body: 'app' })
    }
    expect(calls).toEqual([])
  })

  it('answers what the core throws as the app does: 503 for a store down, 500 for anything else', async () => {
    const down = storeUnavailable('the database cannot be reached', 2)
    const outage = await serve({ throws: down })
    const unavailable = await call(outage.url, {})
    expect(unavailable.status).toBe(503)
    expect(unavailable.headers['retry-after']).toBe('2')
    expect(unavailable.headers['cache-control']).toBe('no-store')
    expect(JSON.parse(unavailable.body)).toEqual({
      code: 'storage_unavailable',
      message: 'The store cannot be reached now; try again shortly',
    })
    expect(outage.thrown).toEqual([down])
    await listener?.close(0)

    const bug = new Error('/secret/path/in/a/stack')
    const broken = await serve({ throws: bug })
    const failed = await call(broken.url, {})
    expect(failed.status).toBe(500)
    expect(failed.headers['cache-control']).toBe('no-store')
    expect(JSON.parse(failed.body)).toEqual({ code: 'unexpected_error', message: 'Internal error' })
    expect(broken.thrown).toEqual([bug])
  })

  it('survives a client that goes away mid-body, and answers the next one', async () => {
    const { url, calls } = await serve()
    const connection = await connectRaw(url)
    connection.socket.write(
      `POST /auth/introspect HTTP/1.1\r\nHost: x\r\nContent-Type: ${FORM}\r\nAuthorization: ${BASIC}\r\nContent-Length: 20\r\n\r\ntoken=`,
    )
    await new Promise((resolve) => setTimeout(resolve, 50))
    connection.socket.destroy()
    await connection.closed
    expect(connection.received).toBe('')
    expect((await call(url, {})).status).toBe(200)
    // The cut-off call never reached the core.
    expect(calls).toEqual(['fleet t1'])
  })

  it('takes nothing when auth is off, and only below the base path', async () => {
    const off = await serve({ authEnabled: false })
    expect((await call(off.url, {})).status).toBe(418)
    await listener?.close(0)
    const below = await serve({ basePath: '/admin' })
    expect((await call(below.url, {})).status).toBe(418)
    expect((await call(below.url, { path: '/admin/auth/introspect' })).status).toBe(200)
  })
})
