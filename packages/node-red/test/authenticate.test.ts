import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { flowadmin, optionsFor } from './load.js'
import { CLIENT_ID, CLIENT_SECRET, type StubFlowadmin, startStubFlowadmin } from './stub-flowadmin.js'

let stub: StubFlowadmin
beforeEach(async () => {
  stub = await startStubFlowadmin()
})
afterEach(async () => {
  await stub.close()
})

describe('adminAuth.authenticate: the login form checks the password at flowadmin', () => {
  test('right password: the user with its permissions and a flowadmin token for the editor', async () => {
    const { options, lines } = optionsFor(stub)
    const adminAuth = flowadmin.adminAuth(options)
    const user = await adminAuth.authenticate('admin', 'pw')
    expect(user).toEqual({ username: 'admin', permissions: '*', token: expect.any(String) })
    expect(stub.isLive(user?.token ?? '')).toBe(true)
    // The token Node-RED hands to the editor is good for every later request.
    expect(await adminAuth.tokens(user?.token ?? '')).toEqual({ username: 'admin', permissions: '*' })
    expect(lines).toEqual([])
  })

  test('the password grant: client credentials in Basic, the user’s own permissions (empty scope)', async () => {
    await flowadmin.adminAuth(optionsFor(stub).options).authenticate('reader', 'pw')
    const [login] = stub.to('/auth/token')
    expect(login?.form).toEqual({
      grant_type: 'password',
      client_id: CLIENT_ID,
      username: 'reader',
      password: 'pw',
      scope: '',
    })
    expect(login?.authorization).toBe(
      `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`,
    )
    expect(login?.userAgent).toBe('flowadmin-node-red/0.1.0')
  })

  test('a client id and secret with reserved characters are form-encoded before base64', async () => {
    await stub.close()
    stub = await startStubFlowadmin({ clientId: 'fleet one', clientSecret: 'p@ss:w+rd é' })
    const { options } = optionsFor(stub, { clientId: 'fleet one', clientSecret: 'p@ss:w+rd é' })
    const user = await flowadmin.adminAuth(options).authenticate('admin', 'pw')
    expect(user?.username).toBe('admin')
    expect(stub.to('/auth/token')[0]?.authorization).toBe(
      `Basic ${Buffer.from('fleet+one:p%40ss%3Aw%2Brd+%C3%A9').toString('base64')}`,
    )
  })

  test('one permission is a string, several an array, as Node-RED’s own users have them', async () => {
    const adminAuth = flowadmin.adminAuth(optionsFor(stub).options)
    expect(await adminAuth.authenticate('reader', 'pw')).toMatchObject({
      username: 'reader',
      permissions: 'read',
    })
    expect(await adminAuth.authenticate('editor', 'pw')).toMatchObject({
      username: 'editor',
      permissions: ['nodes.read', 'nodes.write'],
    })
  })

  test('wrong password or unknown user: null, and nothing logged (a failed login is not an outage)', async () => {
    const { options, lines } = optionsFor(stub)
    const adminAuth = flowadmin.adminAuth(options)
    expect(await adminAuth.authenticate('admin', 'wrong')).toBeNull()
    expect(await adminAuth.authenticate('nobody', 'pw')).toBeNull()
    expect(stub.to('/auth/introspect')).toEqual([])
    expect(lines).toEqual([])
  })

  test('a client id or secret flowadmin refuses: null, and a line that says so (it is the settings, not the person)', async () => {
    const { options, lines } = optionsFor(stub, { clientSecret: 'not-the-secret' })
    expect(await flowadmin.adminAuth(options).authenticate('admin', 'pw')).toBeNull()
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/invalid_client|client/i)
  })

  test('a person who must give a second factor (403 mfa_required): null, one line naming the way, flowadmin still trusted', async () => {
    const { options, lines } = optionsFor(stub)
    const adminAuth = flowadmin.adminAuth(options)
    expect(await adminAuth.authenticate('secured', 'pw')).toBeNull()
    expect(await adminAuth.authenticate('secured', 'pw')).toBeNull()
    expect(lines).toEqual([
      expect.stringMatching(/^"secured" must sign in with a second factor.*set the helper's sso option/),
    ])
    // Not an outage: the next person logs in.
    expect(await adminAuth.authenticate('admin', 'pw')).toMatchObject({ username: 'admin' })
    expect(lines).toHaveLength(1)
  })

  test('a throttled user (429): null, nothing logged', async () => {
    const { options, lines } = optionsFor(stub)
    expect(await flowadmin.adminAuth(options).authenticate('slow', 'pw')).toBeNull()
    expect(stub.to('/auth/token')).toHaveLength(1)
    expect(lines).toEqual([])
  })

  test('a username or password that is not a string of 1 to 4096 characters: null without asking', async () => {
    const adminAuth = flowadmin.adminAuth(optionsFor(stub).options)
    const odd = [
      ['', 'pw'],
      ['admin', ''],
      [['admin'], 'pw'],
      ['admin', { a: 1 }],
      [{ username: 'admin' }],
      ['admin', 'x'.repeat(4097)],
    ]
    for (const args of odd) {
      expect(await (adminAuth.authenticate as (...a: unknown[]) => Promise<unknown>)(...args)).toBeNull()
    }
    expect(stub.received).toEqual([])
  })

  test('flowadmin down: null, and the outage logged', async () => {
    stub.setMode('down')
    const { options, lines } = optionsFor(stub)
    expect(await flowadmin.adminAuth(options).authenticate('admin', 'pw')).toBeNull()
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain(`flowadmin at ${stub.url} is unreachable (`)
  })

  test('flowadmin answering 503: null, logged once', async () => {
    stub.setMode('unavailable')
    const { options, lines } = optionsFor(stub)
    const adminAuth = flowadmin.adminAuth(options)
    expect(await adminAuth.authenticate('admin', 'pw')).toBeNull()
    expect(await adminAuth.authenticate('admin', 'pw')).toBeNull()
    expect(lines).toEqual([
      `flowadmin at ${stub.url} answers HTTP 503 temporarily_unavailable to POST /auth/token: logins and tokens are refused until it recovers`,
    ])
  })

  test('flowadmin never answering: null once timeoutMs has passed, for both calls together', async () => {
    stub.setMode('hang')
    const { options, lines } = optionsFor(stub, { timeoutMs: 200 })
    expect(await flowadmin.adminAuth(options).authenticate('admin', 'pw')).toBeNull()
    expect(lines).toEqual([
      `flowadmin at ${stub.url} is unreachable (no answer within 200 ms): logins and tokens are refused until it answers`,
    ])
  })

  test('a url that is not flowadmin (404): null, and a line that says so', async () => {
    stub.setMode('notFound')
    const { options, lines } = optionsFor(stub)
    expect(await flowadmin.adminAuth(options).authenticate('admin', 'pw')).toBeNull()
    expect(lines).toEqual([
      `flowadmin at ${stub.url} answered HTTP 404 to POST /auth/token, not what it should: is url flowadmin's address?`,
    ])
  })
})

describe('adminAuth.users', () => {
  test('null for every name, even one that logged in: Node-RED’s own sessions are refused, logged once', async () => {
    const { options, lines } = optionsFor(stub)
    const adminAuth = flowadmin.adminAuth(options)
    await adminAuth.authenticate('admin', 'pw')
    expect(await adminAuth.users('admin')).toBeNull()
    expect(await adminAuth.users('reader')).toBeNull()
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(
      /^refused a session token Node-RED issued itself \(user "admin"\): only flowadmin tokens/,
    )
    expect(stub.received.filter((r) => r.path !== '/auth/token' && r.path !== '/auth/introspect')).toEqual([])
  })
})
