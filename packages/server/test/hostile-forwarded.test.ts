// The client address behind a reverse proxy, end to end: X-Forwarded-For counts only from a
// trusted proxy, and the address it yields is what the audit log and the throttle use.
import { describe, expect, it } from 'vitest'
import { ADMIN_PASSWORD, login, send, useWorkspace } from './hostile-http.js'
import { passwordGrant } from './password-grant.js'

const PROXY = '127.0.0.20'

const workspace = useWorkspace()

/** A failed login from `from` carrying these X-Forwarded-For headers; returns the audited address. */
async function auditedAddress(url: string, from: string, forwardedFor?: string | string[]) {
  const before = (await workspace.audit()).length
  const res = await send(url, {
    method: 'POST',
    path: '/auth/token',
    from,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor }),
    },
    body: new URLSearchParams({
      client_id: 'service-admin',
      grant_type: 'password',
      scope: '*',
      username: `probe-${before}`,
      password: 'x',
    }).toString(),
  })
  expect(res.status).toBe(401)
  const lines = await workspace.audit()
  expect(lines).toHaveLength(before + 1)
  return lines[before]?.address
}

describe('X-Forwarded-For', () => {
  it('is ignored without trustProxy: the socket peer is the client', async () => {
    const { url } = await workspace.start()
    expect(await auditedAddress(url, '127.0.0.22', '203.0.113.9')).toBe('127.0.0.22')
  })

  it('counts from a trusted proxy only, right-most untrusted hop first', async () => {
    await workspace.writeSettings({ trustProxy: [PROXY, '10.0.0.0/8'] })
    const { url } = await workspace.start()

    expect(await auditedAddress(url, PROXY, '203.0.113.9')).toBe('203.0.113.9')
    // A forged entry sent by the client sits left of the one the proxy appended.
    expect(await auditedAddress(url, PROXY, '198.51.100.1, 203.0.113.9')).toBe('203.0.113.9')
    // Hops that are trusted proxies themselves are skipped.
    expect(await auditedAddress(url, PROXY, '203.0.113.9, 10.1.2.3')).toBe('203.0.113.9')
    // Several headers make one list.
    expect(await auditedAddress(url, PROXY, ['198.51.100.1', '203.0.113.10'])).toBe('203.0.113.10')
    expect(await auditedAddress(url, PROXY, '2001:DB8:0:0::7')).toBe('2001:db8::7')
    // Malformed or absent: the proxy itself.
    expect(await auditedAddress(url, PROXY, '203.0.113.9:4711')).toBe(PROXY)
    expect(await auditedAddress(url, PROXY, 'unknown, 203.0.113.9')).toBe(PROXY)
    expect(await auditedAddress(url, PROXY)).toBe(PROXY)
    // Anyone else's header is ignored.
    expect(await auditedAddress(url, '127.0.0.21', '203.0.113.9')).toBe('127.0.0.21')
  })

  it('throttles the forwarded client, not the proxy every client shares', async () => {
    await workspace.writeSettings({ trustProxy: [PROXY] })
    const { url } = await workspace.start()
    const through = (client: string, password: string) =>
      send(url, {
        method: 'POST',
        path: '/auth/token',
        from: PROXY,
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': client },
        body: passwordGrant(password).toString(),
      })

    for (let i = 0; i < 5; i++) expect((await through('203.0.113.11', 'guess')).status).toBe(401)
    expect((await through('203.0.113.11', ADMIN_PASSWORD)).status).toBe(429)
    // Another client behind the same proxy, and the proxy's own requests, are not throttled.
    expect((await through('203.0.113.12', ADMIN_PASSWORD)).status).toBe(200)
    expect((await login(url, { username: 'admin', password: ADMIN_PASSWORD }, PROXY)).status).toBe(200)

    const lines = await workspace.audit()
    expect(lines.slice(5).map((line) => `${line.event} ${line.address}`)).toEqual([
      'login.throttled 203.0.113.11',
      'login.succeeded 203.0.113.12',
      `login.succeeded ${PROXY}`,
    ])
  })
})
