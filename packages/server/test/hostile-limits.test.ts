// Limits against slow and greedy clients, on the built server with short configured limits:
// header and request timeouts, keep-alive timeout, header size and body size.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  ADMIN_PASSWORD,
  connectRaw,
  login,
  type RawConnection,
  send,
  tokenOf,
  useWorkspace,
} from './hostile-http.js'

const LIMITS = { headersTimeout: 600, requestTimeout: 1_200, keepAliveTimeout: 400, maxHeaderSize: 4_096 }
// Node checks for expired connections every quarter of the shortest timeout; allow for that and
// for a loaded machine. With Node's own defaults (60 s, checked every 30 s) these would not hold.
const SLACK = 2_000

const workspace = useWorkspace()
let url: string
const connections: RawConnection[] = []
const timers: NodeJS.Timeout[] = []

beforeEach(async () => {
  await workspace.writeSettings({ httpServer: LIMITS, apiMaxLength: '2kb' })
  url = (await workspace.start()).url
})
afterEach(() => {
  for (const timer of timers.splice(0)) clearInterval(timer)
  for (const connection of connections.splice(0)) connection.socket.destroy()
})

async function open(from: string): Promise<RawConnection> {
  const connection = await connectRaw(url, from)
  connections.push(connection)
  return connection
}

/** Writes `text` every `ms` until the connection closes. */
function trickle(connection: RawConnection, text: string, ms = 100): void {
  const timer = setInterval(() => {
    if (!connection.socket.destroyed) connection.socket.write(text)
  }, ms)
  timers.push(timer)
  connection.closed.then(() => clearInterval(timer))
}

describe('timeouts', () => {
  it('answers 408 and closes a connection whose headers trickle in, within headersTimeout', async () => {
    const slow = await open('127.0.0.30')
    slow.socket.write('POST /auth/token HTTP/1.1\r\nHost: flowadmin\r\n')
    trickle(slow, 'X-Slow: a\r\n')
    const after = await slow.closed
    expect(slow.received).toMatch(/^HTTP\/1\.1 408 /)
    expect(after).toBeGreaterThanOrEqual(LIMITS.headersTimeout - 50)
    expect(after).toBeLessThan(LIMITS.headersTimeout + SLACK)
  })

  it('closes a connection that sends nothing', async () => {
    const idle = await open('127.0.0.31')
    const after = await idle.closed
    expect(after).toBeLessThan(LIMITS.headersTimeout + SLACK)
    expect(idle.received).toMatch(/^(HTTP\/1\.1 408 |$)/)
  })

  it('answers 408 and closes a connection whose body trickles in, within requestTimeout', async () => {
    const slow = await open('127.0.0.32')
    slow.socket.write(
      'POST /auth/token HTTP/1.1\r\nHost: flowadmin\r\nContent-Type: application/x-www-form-urlencoded\r\n' +
        'Content-Length: 1000\r\n\r\n',
    )
    trickle(slow, 'a')
    const after = await slow.closed
    expect(slow.received).toMatch(/^HTTP\/1\.1 408 /)
    expect(after).toBeGreaterThanOrEqual(LIMITS.requestTimeout - 50)
    expect(after).toBeLessThan(LIMITS.requestTimeout + SLACK)
  })

  it('closes an idle keep-alive connection after keepAliveTimeout', async () => {
    const client = await open('127.0.0.33')
    client.socket.write('GET /auth/login HTTP/1.1\r\nHost: flowadmin\r\n\r\n')
    const answered = performance.now()
    const after = await client.closed
    expect(client.received).toMatch(/^HTTP\/1\.1 200 /)
    expect(performance.now() - answered).toBeLessThan(LIMITS.keepAliveTimeout + SLACK)
    expect(after).toBeGreaterThanOrEqual(LIMITS.keepAliveTimeout - 50)
  })

  it('still serves clients while a slow one waits to be cut off', async () => {
    const slow = await open('127.0.0.34')
    slow.socket.write('GET /auth/login HTTP/1.1\r\n')
    trickle(slow, 'X-Slow: a\r\n')
    const res = await login(url, { username: 'admin', password: ADMIN_PASSWORD }, '127.0.0.35')
    expect(res.status).toBe(200)
    await slow.closed
  })
})

describe('sizes', () => {
  it('answers 431 to headers over maxHeaderSize and serves headers under it', async () => {
    const big = await send(url, { path: '/auth/login', headers: { 'x-padding': 'a'.repeat(5_000) } })
    expect(big.status).toBe(431)
    const fits = await send(url, { path: '/auth/login', headers: { 'x-padding': 'a'.repeat(2_000) } })
    expect(fits.status).toBe(200)
  })

  it('answers 413 to bodies over apiMaxLength, in each route shape, and reads bodies under it', async () => {
    const form = (padding: number) =>
      new URLSearchParams({
        client_id: 'service-admin',
        grant_type: 'password',
        scope: '*',
        username: 'admin',
        password: ADMIN_PASSWORD,
        padding: 'p'.repeat(padding),
      }).toString()
    const tooBig = await send(url, {
      method: 'POST',
      path: '/auth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form(2_048),
    })
    expect(tooBig.status).toBe(413)
    expect(tooBig.headers['x-content-type-options']).toBe('nosniff')
    expect(JSON.parse(tooBig.body)).toEqual({
      error: 'invalid_request',
      error_description: 'Request body too large',
    })
    const token = await tokenOf(
      send(url, {
        method: 'POST',
        path: '/auth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form(1_800),
      }),
    )

    const put = (body: string) =>
      send(url, {
        method: 'PUT',
        path: '/nodes/flowadmin-example-greeting',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body,
      })
    const bigPut = await put(JSON.stringify({ enabled: true, padding: 'p'.repeat(2_048) }))
    expect(bigPut.status).toBe(413)
    expect(JSON.parse(bigPut.body)).toEqual({
      code: 'payload_too_large',
      message: 'Request body larger than 2048 bytes',
    })
    expect((await put(JSON.stringify({ enabled: true, padding: 'p'.repeat(1_900) }))).status).toBe(200)
  })

  it('reads a body alike whether it comes with its headers or after them, in pieces', async () => {
    const body = new URLSearchParams({
      client_id: 'service-admin',
      grant_type: 'password',
      scope: 'read',
      username: 'admin',
      password: ADMIN_PASSWORD,
    }).toString()
    const head = (framing: string) =>
      'POST /auth/token HTTP/1.1\r\nHost: flowadmin\r\nConnection: close\r\n' +
      `Content-Type: application/x-www-form-urlencoded\r\n${framing}\r\n\r\n`
    /** Sends `parts` on a raw connection, `gapMs` apart; resolves with what came back. */
    const exchange = async (parts: string[], gapMs = 0) => {
      const connection = await open('127.0.0.41')
      for (const part of parts) {
        connection.socket.write(part)
        if (gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs))
      }
      await connection.closed
      return connection.received
    }
    const issued = (received: string) => {
      expect(received).toMatch(/^HTTP\/1\.1 200 /)
      expect(JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4))).toMatchObject({
        access_token: expect.any(String),
        token_type: 'Bearer',
      })
    }
    const length = `Content-Length: ${Buffer.byteLength(body)}`
    // In one write: the parser has the whole body before the route reads it.
    issued(await exchange([head(length) + body]))
    // The headers first, then the body in three pieces, 60 ms apart.
    const third = Math.ceil(body.length / 3)
    issued(
      await exchange(
        [head(length), body.slice(0, third), body.slice(third, 2 * third), body.slice(2 * third)],
        60,
      ),
    )
    // A whole chunked body in one write, past apiMaxLength: refused like one that trickles in.
    const big = `${body}&padding=${'p'.repeat(2_100)}`
    const over = await exchange([
      `${head('Transfer-Encoding: chunked')}${big.length.toString(16)}\r\n${big}\r\n0\r\n\r\n`,
    ])
    expect(over).toMatch(/^HTTP\/1\.1 413 /)
    expect(over).toContain('{"error":"invalid_request","error_description":"Request body too large"}')
  })

  it('counts the bytes of a chunked body (no Content-Length), and survives a body cut off midway', async () => {
    const token = await tokenOf(login(url, { username: 'admin', password: ADMIN_PASSWORD }))
    /** A PUT sent in chunks of `body` on a raw connection; resolves with what came back. */
    const chunkedPut = async (body: string, { cut = false } = {}) => {
      const connection = await open('127.0.0.40')
      connection.socket.write(
        'PUT /nodes/flowadmin-example-greeting HTTP/1.1\r\nHost: flowadmin\r\nConnection: close\r\n' +
          `Authorization: Bearer ${token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
      )
      for (let at = 0; at < body.length; at += 500) {
        const chunk = body.slice(at, at + 500)
        connection.socket.write(`${Buffer.byteLength(chunk).toString(16)}\r\n${chunk}\r\n`)
        if (cut && at >= 500) {
          connection.socket.destroy()
          return ''
        }
      }
      connection.socket.write('0\r\n\r\n')
      await connection.closed
      return connection.received
    }
    const over = await chunkedPut(JSON.stringify({ enabled: true, padding: 'p'.repeat(2_100) }))
    expect(over).toMatch(/^HTTP\/1\.1 413 /)
    expect(over).toContain('{"code":"payload_too_large","message":"Request body larger than 2048 bytes"}')
    const under = await chunkedPut(JSON.stringify({ enabled: true, padding: 'p'.repeat(1_900) }))
    expect(under).toMatch(/^HTTP\/1\.1 200 /)

    await chunkedPut(JSON.stringify({ enabled: true, padding: 'p'.repeat(1_900) }), { cut: true })
    // The server goes on serving.
    const after = await send(url, {
      path: '/nodes/flowadmin-example-greeting',
      headers: { authorization: `Bearer ${token}` },
    })
    expect(after.status).toBe(200)
  })
})
