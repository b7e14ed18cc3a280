import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { fixedClock, flowadmin, optionsFor } from './load.js'
import { CLIENT_ID, CLIENT_SECRET, type StubFlowadmin, startStubFlowadmin } from './stub-flowadmin.js'

let stub: StubFlowadmin
beforeEach(async () => {
  stub = await startStubFlowadmin()
})
afterEach(async () => {
  await stub.close()
})

describe('adminAuth.tokens: every bearer token is introspected at flowadmin', () => {
  test('an active token: its user and permissions', async () => {
    const token = stub.issue('editor', 'nodes.read nodes.write')
    const { options, lines } = optionsFor(stub)
    expect(await flowadmin.adminAuth(options).tokens(token)).toEqual({
      username: 'editor',
      permissions: ['nodes.read', 'nodes.write'],
    })
    const [introspection] = stub.to('/auth/introspect')
    expect(introspection?.form).toEqual({ token })
    expect(introspection?.authorization).toBe(
      `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`,
    )
    expect(lines).toEqual([])
  })

  test('an inactive token (unknown, revoked): null, nothing logged', async () => {
    const { options, lines } = optionsFor(stub)
    expect(await flowadmin.adminAuth(options).tokens('not-a-token')).toBeNull()
    expect(lines).toEqual([])
  })

  test('a token that is not a string, empty or over 1024 characters: null without asking', async () => {
    const adminAuth = flowadmin.adminAuth(optionsFor(stub).options)
    for (const token of [undefined, 42, { a: 1 }, '', 'x'.repeat(1025)]) {
      expect(await adminAuth.tokens(token as string)).toBeNull()
    }
    expect(stub.received).toEqual([])
  })

  test('a wrong client secret: null for every token, and one line naming the client', async () => {
    const token = stub.issue('admin', '*')
    const { options, lines } = optionsFor(stub, { clientSecret: 'wrong' })
    const adminAuth = flowadmin.adminAuth(options)
    for (let i = 0; i < 5; i++) expect(await adminAuth.tokens(token)).toBeNull()
    expect(lines).toEqual([
      `flowadmin at ${stub.url} refused client "fleet" (HTTP 401 invalid_client): check clientId and clientSecret; every token is refused until it accepts them`,
    ])
  })

  test('the user object is a copy: changing one does not change the next answer', async () => {
    const token = stub.issue('editor', 'nodes.read nodes.write')
    const adminAuth = flowadmin.adminAuth(optionsFor(stub, { cacheMs: 1000 }).options)
    const first = await adminAuth.tokens(token)
    if (!Array.isArray(first?.permissions)) throw new Error('expected several permissions')
    first.permissions.push('*')
    expect(await adminAuth.tokens(token)).toEqual({
      username: 'editor',
      permissions: ['nodes.read', 'nodes.write'],
    })
  })
})

describe('cacheMs', () => {
  test('0 (the default): flowadmin is asked for every request, and a revocation counts at once', async () => {
    const token = stub.issue('admin', '*')
    const adminAuth = flowadmin.adminAuth(optionsFor(stub).options)
    expect(await adminAuth.tokens(token)).not.toBeNull()
    expect(await adminAuth.tokens(token)).not.toBeNull()
    await Promise.all([adminAuth.tokens(token), adminAuth.tokens(token)])
    expect(stub.to('/auth/introspect')).toHaveLength(4)
  })

  test('N: an answer is reused for N ms, then asked again; a revocation counts after N at most', async () => {
    const clock = fixedClock()
    const token = stub.issue('admin', '*')
    const adminAuth = flowadmin.adminAuth(optionsFor(stub, { cacheMs: 2000, now: clock.now }).options)
    expect(await adminAuth.tokens(token)).toEqual({ username: 'admin', permissions: '*' })
    clock.advance(1999)
    await stub.close() // flowadmin gone: the cached answer is still served
    expect(await adminAuth.tokens(token)).toEqual({ username: 'admin', permissions: '*' })
    clock.advance(1)
    expect(await adminAuth.tokens(token)).toBeNull()
    stub = await startStubFlowadmin()
  })

  test('N: asked again after N ms, and a token revoked meanwhile is then refused', async () => {
    const clock = fixedClock()
    const token = stub.issue('admin', '*')
    const adminAuth = flowadmin.adminAuth(optionsFor(stub, { cacheMs: 1000, now: clock.now }).options)
    await adminAuth.tokens(token)
    clock.advance(500)
    await adminAuth.tokens(token)
    expect(stub.to('/auth/introspect')).toHaveLength(1)
    const other = stub.issue('reader', 'read')
    await fetch(`${stub.url}/auth/revoke`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${other}`, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token }),
    })
    expect(await adminAuth.tokens(token)).not.toBeNull()
    clock.advance(500)
    expect(await adminAuth.tokens(token)).toBeNull()
    expect(stub.to('/auth/introspect')).toHaveLength(2)
  })

  test('N: concurrent requests for one token share one introspection', async () => {
    const token = stub.issue('admin', '*')
    const adminAuth = flowadmin.adminAuth(optionsFor(stub, { cacheMs: 1000, now: fixedClock().now }).options)
    const users = await Promise.all(Array.from({ length: 10 }, () => adminAuth.tokens(token)))
    expect(users.every((user) => user?.username === 'admin')).toBe(true)
    expect(stub.to('/auth/introspect')).toHaveLength(1)
  })

  test('N: inactive tokens are not kept', async () => {
    const adminAuth = flowadmin.adminAuth(optionsFor(stub, { cacheMs: 5000, now: fixedClock().now }).options)
    await adminAuth.tokens('unknown')
    await adminAuth.tokens('unknown')
    expect(stub.to('/auth/introspect')).toHaveLength(2)
  })

  test('N: no answer is reused past the token’s own expiry (`exp`)', async () => {
    const token = stub.issue('admin', '*')
    const expiresAt = stub.expiryOf(token) * 1000
    const clock = fixedClock(expiresAt - 1000)
    const adminAuth = flowadmin.adminAuth(optionsFor(stub, { cacheMs: 5000, now: clock.now }).options)
    await adminAuth.tokens(token)
    clock.advance(999)
    await adminAuth.tokens(token)
    expect(stub.to('/auth/introspect')).toHaveLength(1)
    clock.advance(1)
    await adminAuth.tokens(token)
    await adminAuth.tokens(token)
    expect(stub.to('/auth/introspect')).toHaveLength(3)
  })

  test('N: a login seeds the cache, so the editor’s first requests need no introspection', async () => {
    const adminAuth = flowadmin.adminAuth(optionsFor(stub, { cacheMs: 1000, now: fixedClock().now }).options)
    const user = await adminAuth.authenticate('admin', 'pw')
    await adminAuth.tokens(user?.token ?? '')
    expect(stub.to('/auth/introspect')).toHaveLength(1)
  })
})

describe('outages: fail closed, no hang, one line when it starts and one when it ends', () => {
  test('flowadmin never answering: null within timeoutMs', async () => {
    stub.setMode('hang')
    const token = stub.issue('admin', '*')
    const { options, lines } = optionsFor(stub, { timeoutMs: 200 })
    expect(await flowadmin.adminAuth(options).tokens(token)).toBeNull()
    expect(lines).toEqual([
      `flowadmin at ${stub.url} is unreachable (no answer within 200 ms): logins and tokens are refused until it answers`,
    ])
  })

  test('many failing calls log one "unreachable" line, the first success one "reachable again"', async () => {
    const token = stub.issue('admin', '*')
    const { options, lines } = optionsFor(stub)
    const adminAuth = flowadmin.adminAuth(options)
    expect(await adminAuth.tokens(token)).not.toBeNull()

    stub.setMode('down')
    const during = await Promise.all(Array.from({ length: 20 }, () => adminAuth.tokens(token)))
    for (let i = 0; i < 5; i++) during.push(await adminAuth.tokens(token))
    expect(during.every((user) => user === null)).toBe(true)
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(
      new RegExp(
        `^flowadmin at ${stub.url} is unreachable \\(.+\\): logins and tokens are refused until it answers$`,
      ),
    )

    stub.setMode('up')
    expect(await adminAuth.tokens(token)).toEqual({ username: 'admin', permissions: '*' })
    expect(await adminAuth.tokens(token)).not.toBeNull()
    expect(lines).toHaveLength(2)
    expect(lines[1]).toBe(`flowadmin at ${stub.url} is reachable again`)
  })

  test('5xx is an outage too: null, one line, then one when it recovers', async () => {
    const token = stub.issue('admin', '*')
    const { options, lines } = optionsFor(stub)
    const adminAuth = flowadmin.adminAuth(options)
    stub.setMode('unavailable')
    for (let i = 0; i < 5; i++) expect(await adminAuth.tokens(token)).toBeNull()
    stub.setMode('up')
    expect(await adminAuth.tokens(token)).not.toBeNull()
    expect(lines).toEqual([
      `flowadmin at ${stub.url} answers HTTP 503 temporarily_unavailable to POST /auth/introspect: logins and tokens are refused until it recovers`,
      `flowadmin at ${stub.url} is reachable again`,
    ])
  })

  test('nothing listening at url: null, one line', async () => {
    const url = stub.url
    await stub.close()
    const lines: string[] = []
    const adminAuth = flowadmin.adminAuth({
      url,
      clientId: 'fleet',
      clientSecret: 'x',
      log: (l) => lines.push(l),
    })
    expect(await adminAuth.tokens('t')).toBeNull()
    expect(await adminAuth.authenticate('admin', 'pw')).toBeNull()
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain(`flowadmin at ${url} is unreachable (`)
    stub = await startStubFlowadmin()
  })
})

describe('no hook ever rejects: Node-RED does not catch every one, and would stop', () => {
  test('a log function that throws: the outage still ends as null', async () => {
    stub.setMode('down')
    const adminAuth = flowadmin.adminAuth({
      ...optionsFor(stub).options,
      log: () => {
        throw new Error('log broke')
      },
    })
    await expect(adminAuth.tokens('t')).resolves.toBeNull()
    await expect(adminAuth.authenticate('admin', 'pw')).resolves.toBeNull()
  })

  test('an unexpected error inside a hook: null, and one line saying so', async () => {
    const token = stub.issue('admin', '*')
    const { options, lines } = optionsFor(stub, {
      cacheMs: 1000,
      now: () => {
        throw new Error('clock broke')
      },
    })
    await expect(flowadmin.adminAuth(options).tokens(token)).resolves.toBeNull()
    expect(lines).toEqual(['adminAuth.tokens failed unexpectedly (Error: clock broke): refused'])
  })
})
