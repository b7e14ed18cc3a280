// A scripted session of failed and successful logins over the built server, whose audit file is
// kept under test-results/fail2ban/ with the address of each failed login, in order. CI then runs
// Debian's fail2ban-regex with contrib/fail2ban/filter.d/flowadmin.conf over that file
// (scripts/check-fail2ban.sh): it must find exactly those addresses, and nothing in the rest.
// Wrong second-factor codes are failures too.
import { createHash } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { hashPassword } from '../src/index.js'
import { ADMIN_PASSWORD, type LoginFields, send, useWorkspace, VIEWER_PASSWORD } from './hostile-http.js'

const workspace = useWorkspace()

const RESULTS = fileURLToPath(new URL('../../../test-results/fail2ban/', import.meta.url))
const PROXY = '127.0.0.70'
const FAILED = new Set([
  'login.failed',
  'login.throttled',
  'client.failed',
  'client.throttled',
  'mfa.failed',
  'mfa.throttled',
  'passkey.failed',
])

/** A password grant from `from`, through the trusted proxy when `forwardedFor` is given. */
function attempt(url: string, fields: LoginFields, from: string, forwardedFor?: string) {
  const body = new URLSearchParams({ client_id: 'service-admin', grant_type: 'password', scope: '*' })
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) body.set(name, value)
  return send(url, {
    method: 'POST',
    path: '/auth/token',
    from: forwardedFor === undefined ? from : PROXY,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor }),
    },
    body: body.toString(),
  })
}

/** An introspection by the resource server `id` with this secret, from `from`. */
function introspect(url: string, secret: string, from: string, id = 'fleet') {
  return send(url, {
    method: 'POST',
    path: '/auth/introspect',
    from,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`,
    },
    body: 'token=some-token',
  })
}

describe('audit lines for fail2ban', () => {
  it('carry the client address on every login event, and hostile usernames as one escaped line', async () => {
    await workspace.writeSettings({
      trustProxy: [PROXY],
      adminAuth: {
        resourceServers: [
          { id: 'fleet', secret: `sha256:${createHash('sha256').update('fleet-secret').digest('hex')}` },
          { id: 'legacy', secret: await hashPassword('legacy-secret') },
        ],
        mfa: { key: 'a-second-factor-key-of-forty-characters!' },
        webauthn: { rpId: 'localhost', origins: ['http://localhost:1880'] },
      },
    })
    const { run, url } = await workspace.start()
    const expected: Array<{
      status: number
      address: string
      client?: boolean
      mfa?: boolean
      passkey?: boolean
    }> = []
    const fail = async (fields: LoginFields, from: string, forwardedFor?: string, status = 401) => {
      expect((await attempt(url, fields, from, forwardedFor)).status).toBe(status)
      expected.push({ status, address: forwardedFor ?? from })
    }
    const succeed = async (fields: LoginFields, from: string, forwardedFor?: string) => {
      const res = await attempt(url, fields, from, forwardedFor)
      expect(res.status).toBe(200)
      return (JSON.parse(res.body) as { access_token: string }).access_token
    }

    const admin = await succeed({ username: 'admin', password: ADMIN_PASSWORD }, '127.0.0.61')
    for (let i = 0; i < 3; i++) await fail({ username: 'admin', password: `guess-${i}` }, '127.0.0.62')
    await fail({ username: 'ghost', password: 'x' }, '127.0.0.62')
    // Usernames made to look like another address, another line, a terminal command.
    await fail({ username: 'x","address":"192.0.2.99', password: 'x' }, '127.0.0.63')
    await fail(
      {
        username:
          'a\n{"time":"2026-01-01T00:00:00.000Z","event":"login.failed","user":"a","client":null,"address":"192.0.2.98"}',
        password: 'x',
      },
      '127.0.0.64',
    )
    await fail({ username: `\u001b[2J\u202e\u2028${'u'.repeat(5_000)}`, password: 'x' }, '127.0.0.65')
    await fail({ username: 'admin', password: ADMIN_PASSWORD, client_id: 'not-a-client' }, '127.0.0.66')
    await fail({ username: 'admin', password: 'x', client_id: undefined }, '127.0.0.66')
    // Behind the trusted proxy: the forwarded client, IPv4 and IPv6.
    await fail({ username: 'admin', password: 'x' }, PROXY, '203.0.113.5')
    await fail({ username: 'viewer', password: 'x' }, PROXY, '2001:db8::7')
    await succeed({ username: 'admin', password: ADMIN_PASSWORD }, PROXY, '198.51.100.20')
    // Throttled attempts are failures too, the right password's included.
    for (let i = 0; i < 5; i++) await fail({ username: 'viewer', password: `guess-${i}` }, '127.0.0.67')
    await fail({ username: 'viewer', password: VIEWER_PASSWORD, scope: 'read' }, '127.0.0.67', undefined, 429)
    await succeed({ username: 'viewer', password: VIEWER_PASSWORD, scope: 'read' }, '127.0.0.68')
    // A resource server's wrong secrets are guesses too, throttled like logins; its right one (a
    // digest) never is, not even from the address the guesses came from.
    const client = async (secret: string, from: string, status: number, id = 'fleet') => {
      expect((await introspect(url, secret, from, id)).status).toBe(status)
      if (status !== 200) expected.push({ status, address: from, client: true })
    }
    for (let i = 0; i < 5; i++) await client(`guess-${i}`, '127.0.0.71', 401)
    await client('guess-5', '127.0.0.71', 429)
    await client('fleet-secret', '127.0.0.71', 200)
    await client('fleet-secret', '127.0.0.69', 200)
    // An old hashed secret not verified yet is throttled like a password: its right one too.
    for (let i = 0; i < 5; i++) await client(`guess-${i}`, '127.0.0.72', 401, 'legacy')
    await client('legacy-secret', '127.0.0.72', 429, 'legacy')
    await client('legacy-secret', '127.0.0.73', 200, 'legacy')
    // A person's wrong second-factor codes are guesses too, throttled per user.
    const asAdmin = { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }
    const started = await send(url, {
      method: 'POST',
      path: '/auth/mfa/totp',
      from: '127.0.0.61',
      headers: asAdmin,
    })
    expect(started.status).toBe(200)
    const code = async (from: string, status: number) => {
      const body = JSON.stringify({ code: '000000' })
      const res = await send(url, {
        method: 'POST',
        path: '/auth/mfa/totp/confirm',
        from,
        headers: asAdmin,
        body,
      })
      expect(res.status).toBe(status)
      expected.push({ status, address: from, mfa: true })
    }
    for (let i = 0; i < 5; i++) await code('127.0.0.74', 400)
    await code('127.0.0.75', 429)
    // A passkey answer to a challenge this server never gave that browser is a guess too.
    const page = await send(url, { path: '/auth/signin', from: '127.0.0.76' })
    const cookie = String(page.headers['set-cookie']?.[0] ?? '').split(';')[0] ?? ''
    const clientData = Buffer.from(
      JSON.stringify({ type: 'webauthn.get', challenge: 'bm90LWdpdmVu', origin: 'http://localhost:1880' }),
    ).toString('base64url')
    const forged = await send(url, {
      method: 'POST',
      path: '/auth/signin/passkey',
      from: '127.0.0.76',
      headers: { 'content-type': 'application/json', cookie },
      body: JSON.stringify({
        response: {
          id: 'Y3JlZA',
          rawId: 'Y3JlZA',
          type: 'public-key',
          response: { clientDataJSON: clientData },
        },
        destination: { return_to: '/' },
      }),
    })
    expect(forged.status).toBe(400)
    expected.push({ status: 400, address: '127.0.0.76', passkey: true })

    run.child.kill('SIGTERM')
    expect(await run.exited).toBe(0)

    const text = await readFile(workspace.auditFile, 'utf8')
    const lines = text.split('\n')
    expect(lines.pop()).toBe('')
    // One line each, with no control, format or separator character left: they are escaped.
    for (const line of lines) {
      expect(line).toMatch(
        /^\{"level":"info","time":"[^"]+","event":"[a-z.]+",[^\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+\}$/u,
      )
    }
    const events = lines.map((line) => JSON.parse(line) as { event: string; user: string; address: string })
    const failed = events.filter((event) => FAILED.has(event.event))
    expect(failed.map((event) => event.address)).toEqual(expected.map((attempt) => attempt.address))
    expect(failed.map((event) => event.event)).toEqual(
      expected.map(
        (attempt) =>
          `${attempt.client ? 'client' : attempt.mfa ? 'mfa' : attempt.passkey ? 'passkey' : 'login'}.${attempt.status === 429 ? 'throttled' : 'failed'}`,
      ),
    )
    expect(events.filter((event) => event.event === 'login.succeeded').map((event) => event.address)).toEqual(
      ['127.0.0.61', '198.51.100.20', '127.0.0.68'],
    )
    expect(events.every((event) => typeof event.address === 'string' && event.address !== '')).toBe(true)
    // Usernames are kept as sent, capped.
    expect(failed[4]?.user).toBe('x","address":"192.0.2.99')
    expect(failed[5]?.user).toContain('\n{"time"')
    expect(failed[6]?.user).toBe(`\u001b[2J\u202e\u2028${'u'.repeat(250)}… (5006 characters)`)

    await mkdir(RESULTS, { recursive: true })
    await writeFile(path.join(RESULTS, 'audit.log'), text)
    await writeFile(
      path.join(RESULTS, 'failed-addresses.txt'),
      `${failed.map((event) => event.address).join('\n')}\n`,
    )
  })
})
