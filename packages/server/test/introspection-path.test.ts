// POST /auth/introspect is answered on Node's request before the app (the server's fast path for
// resource servers). The same calls, answered by the app instead, must come back the same.
// A call with an `Origin` header is always the app's (CORS is its business); with no CORS
// configured, the app sends no CORS header, so the two answers can be compared whole.
import { describe, expect, it } from 'vitest'
import { hashPassword } from '../src/index.js'
import { ADMIN_PASSWORD, login, type RawResponse, send, tokenOf, useWorkspace } from './hostile-http.js'

const workspace = useWorkspace()
const FORM = 'application/x-www-form-urlencoded'
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`
const FLEET = basic('fleet', 'fleet-secret')
const PER_RESPONSE = new Set(['date', 'connection', 'keep-alive'])

/** A token of admin for the resource server `fleet` (its audience): the password grant with the fleet's credentials. */
const fleetToken = (url: string) =>
  tokenOf(
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

/** Status, headers (without the per-response ones, names in lower case) and body. */
function shape(response: RawResponse) {
  const headers: Record<string, string> = {}
  for (let index = 0; index < response.rawHeaders.length; index += 2) {
    const name = (response.rawHeaders[index] as string).toLowerCase()
    if (!PER_RESPONSE.has(name)) headers[name] = response.rawHeaders[index + 1] as string
  }
  return { status: response.status, headers, body: response.body }
}

describe('introspection answered before the app', () => {
  it('answers every kind of call as the app does', async () => {
    await workspace.writeSettings({
      adminAuth: { resourceServers: [{ id: 'fleet', secret: await hashPassword('fleet-secret') }] },
    })
    const { url } = await workspace.start()
    const token = await fleetToken(url)
    // Each call twice: as it comes (answered before the app) and with an Origin (the app's).
    const both = async (headers: Record<string, string>, body: string | Buffer, from: string) => {
      const call = (extra: Record<string, string>) =>
        send(url, { method: 'POST', path: '/auth/introspect', from, headers: { ...headers, ...extra }, body })
      const front = shape(await call({}))
      const app = shape(await call({ origin: 'https://elsewhere.example' }))
      expect(front).toEqual(app)
      return front
    }
    const form = { 'content-type': FORM, authorization: FLEET }

    const live = await both(form, `token=${token}`, '127.0.0.71')
    expect(live.status).toBe(200)
    expect(live.headers).toMatchObject({
      'cache-control': 'no-store',
      pragma: 'no-cache',
      'content-type': 'application/json',
      'x-content-type-options': 'nosniff',
    })
    expect(JSON.parse(live.body)).toMatchObject({ active: true, username: 'admin', scope: '*' })
    expect(await both(form, 'token=not-a-token&token_type_hint=access_token', '127.0.0.71')).toMatchObject({
      status: 200,
      body: '{"active":false}',
    })
    // Malformed bodies: a missing, repeated or undecodable token.
    for (const body of [
      'token_type_hint=access_token',
      `token=${token}&token=x`,
      Buffer.from([...Buffer.from('token='), 0xff]),
    ]) {
      const refused = await both(form, body, '127.0.0.72')
      expect(refused.status).toBe(400)
      expect(JSON.parse(refused.body)).toMatchObject({ error: 'invalid_request' })
    }
    // A wrong secret: 401 with the Basic challenge, counted once a call (five are allowed).
    const wrong = await both(
      { ...form, authorization: basic('fleet', 'wrong') },
      `token=${token}`,
      '127.0.0.73',
    )
    expect(wrong.status).toBe(401)
    expect(wrong.headers['www-authenticate']).toBe('Basic realm="flowadmin"')
    expect(JSON.parse(wrong.body)).toMatchObject({ error: 'invalid_client' })
    const refusals = (await workspace.audit()).filter((line) => line.event === 'client.failed')
    expect(refusals).toHaveLength(2)

    // Revoked: not active through either.
    await send(url, {
      method: 'POST',
      path: '/auth/revoke',
      headers: { 'content-type': FORM, authorization: `Bearer ${token}` },
      body: `token=${token}`,
    })
    expect((await both(form, `token=${token}`, '127.0.0.71')).body).toBe('{"active":false}')
  })

  it('counts its answers in the metrics under the route, as the app does', async () => {
    await workspace.writeSettings({
      adminAuth: { resourceServers: [{ id: 'fleet', secret: await hashPassword('fleet-secret') }] },
    })
    const { url } = await workspace.start()
    const admin = await tokenOf(login(url, { username: 'admin', password: ADMIN_PASSWORD }))
    const token = await fleetToken(url)
    for (const origin of [undefined, 'https://elsewhere.example', undefined]) {
      const answer = await send(url, {
        method: 'POST',
        path: '/auth/introspect',
        headers: { 'content-type': FORM, authorization: FLEET, ...(origin && { origin }) },
        body: `token=${token}`,
      })
      expect(answer.status).toBe(200)
    }
    const metrics = await send(url, { path: '/metrics', headers: { authorization: `Bearer ${admin}` } })
    expect(metrics.body).toContain(
      'flowadmin_http_request_duration_seconds_count{method="POST",route="/auth/introspect",status="200"} 3',
    )
    expect(metrics.body).toContain('flowadmin_introspections_total{outcome="active"} 3')
  })
})
