// POST /auth/introspect through the built server: what resource servers see, over real sockets.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { type Core, storeUnavailable } from '@flowadmin/core'
import { describe, expect, it } from 'vitest'
import { hashPassword, startServer } from '../src/index.js'
import {
  ADMIN_PASSWORD,
  connectRaw,
  login,
  type RawRequest,
  send,
  tokenOf,
  useWorkspace,
} from './hostile-http.js'
import { captureLog } from './log-capture.js'

const workspace = useWorkspace()
const FORM = 'application/x-www-form-urlencoded'
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`
const FLEET = basic('fleet', 'fleet-secret')

/**
 * A server with the resource server `fleet`, its URL, a token of admin's for `fleet` (its audience:
 * the password grant with the fleet's credentials) and one for flowadmin's own API (`operator`).
 */
async function start(extra: Record<string, unknown> = {}) {
  await workspace.writeSettings({
    adminAuth: { resourceServers: [{ id: 'fleet', secret: await hashPassword('fleet-secret') }] },
    ...extra,
  })
  const { url } = await workspace.start()
  const token = await tokenOf(
    send(url, {
      method: 'POST',
      path: '/auth/token',
      headers: { 'content-type': FORM, authorization: FLEET },
      body: new URLSearchParams({
        grant_type: 'password',
        scope: '*',
        username: 'admin',
        password: ADMIN_PASSWORD,
      }).toString(),
    }),
  )
  const operator = await tokenOf(login(url, { username: 'admin', password: ADMIN_PASSWORD }))
  return { url, token, operator }
}

const introspect = (url: string, init: Omit<RawRequest, 'path' | 'method'>) =>
  send(url, { ...init, method: 'POST', path: '/auth/introspect' })

/** The value of one series in GET /metrics, or null when it is absent. */
async function series(url: string, token: string, name: string): Promise<number | null> {
  const metrics = await send(url, { path: '/metrics', headers: { authorization: `Bearer ${token}` } })
  const line = metrics.body.split('\n').find((candidate) => candidate.startsWith(`${name} `))
  return line === undefined ? null : Number(line.slice(name.length + 1))
}

describe('POST /auth/introspect on the server', () => {
  it('answers each kind of call with its status, headers and body', async () => {
    const { url, token } = await start()
    const form = { 'content-type': FORM, authorization: FLEET }

    const live = await introspect(url, { headers: form, body: `token=${token}`, from: '127.0.0.71' })
    expect(live.status).toBe(200)
    expect(live.headers).toMatchObject({
      'cache-control': 'no-store',
      pragma: 'no-cache',
      'content-type': 'application/json',
      'x-content-type-options': 'nosniff',
    })
    expect(JSON.parse(live.body)).toMatchObject({ active: true, username: 'admin', scope: '*' })
    const unknown = await introspect(url, {
      headers: form,
      body: 'token=not-a-token&token_type_hint=access_token',
      from: '127.0.0.71',
    })
    expect({ status: unknown.status, body: unknown.body }).toEqual({ status: 200, body: '{"active":false}' })
    // Malformed bodies: a missing, repeated or undecodable token.
    for (const body of [
      'token_type_hint=access_token',
      `token=${token}&token=x`,
      Buffer.from([...Buffer.from('token='), 0xff]),
    ]) {
      const refused = await introspect(url, { headers: form, body, from: '127.0.0.72' })
      expect(refused.status).toBe(400)
      expect(refused.headers['cache-control']).toBe('no-store')
      expect(JSON.parse(refused.body)).toMatchObject({ error: 'invalid_request' })
    }
    // A wrong secret: 401 with the Basic challenge, counted once a call.
    for (let call = 0; call < 2; call++) {
      const wrong = await introspect(url, {
        headers: { ...form, authorization: basic('fleet', 'wrong') },
        body: `token=${token}`,
        from: '127.0.0.73',
      })
      expect(wrong.status).toBe(401)
      expect(wrong.headers['www-authenticate']).toBe('Basic realm="flowadmin"')
      expect(wrong.headers['cache-control']).toBe('no-store')
      expect(JSON.parse(wrong.body)).toMatchObject({ error: 'invalid_client' })
    }
    const refusals = (await workspace.audit()).filter((line) => line.event === 'client.failed')
    expect(refusals).toHaveLength(2)

    // Revoked: not active.
    await send(url, {
      method: 'POST',
      path: '/auth/revoke',
      headers: { 'content-type': FORM, authorization: `Bearer ${token}` },
      body: `token=${token}`,
    })
    const revoked = await introspect(url, { headers: form, body: `token=${token}`, from: '127.0.0.71' })
    expect(revoked.body).toBe('{"active":false}')
  })

  it('refuses a repeated Authorization or Content-Type header, whatever their values', async () => {
    const { url, token } = await start()
    // Node keeps the first of a repeated Authorization or Content-Type; the API reads them joined,
    // so two credentials are none and two media types are neither.
    const twoCredentials = await introspect(url, {
      headers: { 'content-type': FORM, authorization: [FLEET, FLEET] },
      body: `token=${token}`,
    })
    expect(twoCredentials.status).toBe(401)
    expect(twoCredentials.headers['www-authenticate']).toBe('Basic realm="flowadmin"')
    expect(JSON.parse(twoCredentials.body)).toMatchObject({ error: 'invalid_client' })
    const twoTypes = await introspect(url, {
      headers: { 'content-type': [FORM, FORM], authorization: FLEET },
      body: `token=${token}`,
    })
    expect(twoTypes.status).toBe(400)
    expect(JSON.parse(twoTypes.body)).toMatchObject({ error: 'invalid_request' })
  })

  it('says that its answers vary with Origin when httpAdminCors is set, with or without an Origin', async () => {
    const { url, token } = await start({ httpAdminCors: { origin: ['https://editor.example'] } })
    const headers = { 'content-type': FORM, authorization: FLEET }
    const plain = await introspect(url, { headers, body: `token=${token}` })
    expect(plain.status).toBe(200)
    expect(plain.headers.vary).toBe('Origin')
    expect(plain.headers['access-control-allow-origin']).toBeUndefined()
    const listed = await introspect(url, {
      headers: { ...headers, origin: 'https://editor.example' },
      body: `token=${token}`,
    })
    expect(listed.status).toBe(200)
    expect(listed.headers.vary).toBe('Origin')
    expect(listed.headers['access-control-allow-origin']).toBe('https://editor.example')
  })

  it('counts its answers in the metrics under the route, a client gone mid-body included', async () => {
    const { url, token, operator } = await start()
    for (let call = 0; call < 3; call++) {
      const answer = await introspect(url, {
        headers: { 'content-type': FORM, authorization: FLEET },
        body: `token=${token}`,
      })
      expect(answer.status).toBe(200)
    }
    const ok =
      'flowadmin_http_request_duration_seconds_count{method="POST",route="/auth/introspect",status="200"}'
    expect(await series(url, operator, ok)).toBe(3)
    expect(await series(url, operator, 'flowadmin_introspections_total{outcome="active"}')).toBe(3)

    // A client that sends its headers and part of its body, then hangs up.
    const connection = await connectRaw(url)
    connection.socket.write(
      `POST /auth/introspect HTTP/1.1\r\nHost: x\r\nContent-Type: ${FORM}\r\nAuthorization: ${FLEET}\r\nContent-Length: 200\r\n\r\ntoken=`,
    )
    await new Promise((resolve) => setTimeout(resolve, 50))
    connection.socket.destroy()
    await connection.closed
    const cut =
      'flowadmin_http_request_duration_seconds_count{method="POST",route="/auth/introspect",status="400"}'
    // Answered (400, the body incomplete) once the server has seen the connection close.
    let counted = await series(url, operator, cut)
    for (let attempt = 0; counted === null && attempt < 200; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 25))
      counted = await series(url, operator, cut)
    }
    expect(counted).toBe(1)
    // The next call is answered as usual, and the one cut off never reached the core.
    const next = await introspect(url, {
      headers: { 'content-type': FORM, authorization: FLEET },
      body: `token=${token}`,
    })
    expect(next.status).toBe(200)
    expect(await series(url, operator, 'flowadmin_introspections_total{outcome="active"}')).toBe(4)
  })

  it('answers below httpAdminRoot only', async () => {
    const { url, token } = await start({ httpAdminRoot: '/admin' })
    const headers = { 'content-type': FORM, authorization: FLEET }
    const below = await introspect(url, { headers, body: `token=${token}` })
    expect(below.status).toBe(200)
    expect(JSON.parse(below.body)).toMatchObject({ active: true })
    const atRoot = await introspect(new URL(url).origin, { headers, body: `token=${token}` })
    expect(atRoot.status).toBe(404)
  })

  it('answers what the core throws as every route does: 503 for a store down, 500 for anything else, both reported', async () => {
    const userDir = await mkdtemp(path.join(tmpdir(), 'flowadmin-introspection-'))
    const log = captureLog()
    const server = await startServer({
      port: 0,
      userDir,
      stdout: () => {},
      logger: log.logger,
      settings: {
        adminAuth: {
          type: 'credentials',
          users: [{ username: 'admin', password: await hashPassword('pw'), permissions: '*' }],
          resourceServers: [{ id: 'fleet', secret: await hashPassword('fleet-secret') }],
        },
      },
    })
    try {
      let thrown: unknown
      // What the route calls first: the client's check, which asks the store.
      ;(server.core as { introspector: Core['introspector'] }).introspector = async () => {
        throw thrown
      }
      const call = () =>
        introspect(server.url, { headers: { 'content-type': FORM, authorization: FLEET }, body: 'token=t' })

      thrown = storeUnavailable('the database cannot be reached', 2)
      const unavailable = await call()
      expect(unavailable.status).toBe(503)
      expect(unavailable.headers['retry-after']).toBe('2')
      expect(unavailable.headers['cache-control']).toBe('no-store')
      expect(JSON.parse(unavailable.body)).toEqual({
        code: 'storage_unavailable',
        message: 'The store cannot be reached now; try again shortly',
      })

      thrown = new Error('/secret/path/in/a/stack')
      const failed = await call()
      expect(failed.status).toBe(500)
      expect(failed.headers['cache-control']).toBe('no-store')
      expect(failed.headers['x-content-type-options']).toBe('nosniff')
      expect(JSON.parse(failed.body)).toEqual({ code: 'unexpected_error', message: 'Internal error' })
      const errors = log.entries().filter((entry) => entry.level === 'error')
      expect(
        errors.map((entry) => [entry.msg, entry.path, (entry.err as { message: string }).message]),
      ).toEqual([['unexpected error answering a request', '/auth/introspect', '/secret/path/in/a/stack']])
      expect(log.said()).toContain('warn: the store cannot be reached, requests answer 503')
    } finally {
      await server.close()
      await rm(userDir, { recursive: true, force: true })
    }
  })

  it('is not there when authentication is off', async () => {
    const userDir = await mkdtemp(path.join(tmpdir(), 'flowadmin-introspection-'))
    const server = await startServer({ port: 0, userDir, stdout: () => {}, logger: captureLog().logger })
    try {
      const answer = await introspect(server.url, {
        headers: { 'content-type': FORM, authorization: FLEET },
        body: 'token=t',
      })
      expect(answer.status).toBe(404)
      expect(answer.body).toBe('')
    } finally {
      await server.close()
      await rm(userDir, { recursive: true, force: true })
    }
  })
})
