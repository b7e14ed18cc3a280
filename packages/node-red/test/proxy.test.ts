// Every call the helper makes to flowadmin goes through the environment's forward proxy
// (HTTPS_PROXY, HTTP_PROXY, and NO_PROXY for what goes directly), as an edge device behind one needs:
// introspection, login, the sign-in's code exchange, revocation, audit events, the fleet's poll
// and report. Its calls to its own Node-RED never do.
import { spawn } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { waitFor } from '@flowadmin/testkit'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import type { StrategyAdminAuth } from '../index.js'
import { type FakeNodeRed, startFakeNodeRed } from './fake-node-red.js'
import { type ForwardProxy, startForwardProxy } from './forward-proxy.js'
import { flowadmin } from './load.js'
import { agentOf, auditHandlerOf, loadSettingsModule } from './settings-module.js'
import { type StubFlowadmin, startStubFlowadmin } from './stub-flowadmin.js'
import { TEST_CERT, TEST_KEY } from './tls-fixture.js'

const require = createRequire(import.meta.url)
const PROXY_VARIABLES = ['HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY', 'https_proxy', 'http_proxy', 'no_proxy']
const saved = Object.fromEntries(PROXY_VARIABLES.map((name) => [name, process.env[name]]))

let stub: StubFlowadmin
let proxy: ForwardProxy
let nodeRed: FakeNodeRed
beforeEach(async () => {
  for (const name of PROXY_VARIABLES) delete process.env[name]
  stub = await startStubFlowadmin()
  proxy = await startForwardProxy()
  nodeRed = await startFakeNodeRed([])
})
afterEach(async () => {
  for (const name of PROXY_VARIABLES) {
    if (saved[name] === undefined) delete process.env[name]
    else process.env[name] = saved[name]
  }
  await Promise.all([stub.close(), proxy.close(), nodeRed.close()])
})

/** The editor's logout through the middleware, as Node-RED's admin app runs it. */
function logout(options: object, token: string) {
  const middleware = flowadmin.httpAdminMiddleware(options as never)
  return new Promise<void>((resolve) => {
    const req = {
      method: 'POST',
      url: '/auth/revoke',
      headers: { authorization: `Bearer ${token}` },
      socket: { remoteAddress: '127.0.0.1' },
    }
    const res = { statusCode: 200, once: () => res, setHeader: () => res, end: () => resolve() }
    middleware(req as never, res as never, () => resolve())
  })
}

/** A sign-in through the "Sign in with …" button, up to the code's exchange at flowadmin. */
async function signIn(adminAuth: StrategyAdminAuth, code: string) {
  const Strategy = adminAuth.strategy.strategy
  const strategy = new Strategy(adminAuth.strategy.options, () => undefined)
  const session: Record<string, unknown> = {}
  const run = (query: Record<string, string>) =>
    new Promise<string>((resolve) =>
      Object.assign(Object.create(strategy), {
        redirect: (url: string) => resolve(`redirect ${url}`),
        success: (user: { username: string }) => resolve(`signed in ${user.username}`),
        error: (error: Error) => resolve(`error ${error.message}`),
      }).authenticate({ query, session }),
    )
  await run({})
  const state = Object.keys(session.flowadminSignIns as Record<string, unknown>)[0] ?? ''
  return run({ code, state })
}

describe('HTTP_PROXY and NO_PROXY', () => {
  test('every call to flowadmin goes through the proxy; the agent’s calls to its own Node-RED never do', async () => {
    process.env.HTTP_PROXY = proxy.url
    stub.fleet.setDesired({ version: '1', prune: false, modules: [], installs: [], removals: [] })
    const settings = loadSettingsModule(stub.url, {
      options: { fleet: true, instanceId: 'edge-1', audit: { delayMs: 0 } },
      serverPort: nodeRed.port,
      auditLogger: true,
    })
    nodeRed.authenticateWith(settings.adminAuth.tokens)
    const handle = auditHandlerOf(settings)

    const login = await settings.adminAuth.authenticate('admin', 'pw')
    expect(login?.username).toBe('admin')
    expect(await settings.adminAuth.tokens(login?.token ?? '')).toMatchObject({ username: 'admin' })
    await logout(settings.options, login?.token ?? '')
    expect(stub.isLive(login?.token ?? '')).toBe(false)
    handle({ level: 98, event: 'flows.set', user: { username: 'admin' }, timestamp: Date.now() })
    const sso = flowadmin.adminAuth({
      ...settings.options,
      sso: { redirectUri: 'http://127.0.0.1:1880/auth/strategy/callback' },
    }) as StrategyAdminAuth
    expect(await signIn(sso, stub.code('editor'))).toBe('signed in editor')
    await waitFor(
      () => stub.fleet.reportsOf('edge-1').length > 0 && stub.audit.events.length > 0,
      () => `reports ${stub.fleet.reports.length}, audit events ${stub.audit.events.length}`,
    )
    await agentOf(settings).stop()

    const paths = new Set(stub.received.map((r) => r.path))
    for (const called of [
      '/auth/token',
      '/auth/introspect',
      '/auth/revoke',
      '/audit/events',
      '/fleet/instances/edge-1/desired',
      '/fleet/instances/edge-1/report',
    ]) {
      expect(paths).toContain(called)
    }
    expect(stub.received.map((r) => r.form.grant_type).filter(Boolean)).toEqual([
      'password',
      'authorization_code',
    ])
    // Everything flowadmin received came through the proxy…
    expect(stub.received.filter((r) => r.headers.via !== '1.1 forward-proxy')).toEqual([])
    expect(proxy.seen.length).toBe(stub.received.length)
    // …and nothing to this Node-RED did, though the agent called it.
    expect(nodeRed.calls.length).toBeGreaterThan(0)
    expect(proxy.seen.filter((entry) => entry.target.includes(`:${nodeRed.port}/`))).toEqual([])
  })

  test('NO_PROXY naming flowadmin’s host: every call goes directly', async () => {
    process.env.HTTP_PROXY = proxy.url
    process.env.NO_PROXY = 'flowadmin.example, 127.0.0.1'
    const adminAuth = flowadmin.adminAuth({ url: stub.url, clientId: 'fleet', clientSecret: 's3cret' })
    const login = await adminAuth.authenticate('admin', 'pw')
    expect(await adminAuth.tokens(login?.token ?? '')).toMatchObject({ username: 'admin' })
    expect(stub.received.map((r) => r.path)).toEqual(['/auth/token', '/auth/introspect', '/auth/introspect'])
    expect(proxy.seen).toEqual([])
  })

  test('the lower-case names count first; a proxy’s user and password go as Proxy-Authorization', async () => {
    process.env.HTTP_PROXY = 'http://127.0.0.1:9'
    process.env.http_proxy = proxy.url.replace('http://', 'http://edge:p%40ss@')
    process.env.no_proxy = `127.0.0.1:${stub.port + 1}`
    const adminAuth = flowadmin.adminAuth({ url: stub.url, clientId: 'fleet', clientSecret: 's3cret' })
    expect(await adminAuth.authenticate('admin', 'pw')).toMatchObject({ username: 'admin' })
    expect(proxy.seen.map((entry) => entry.proxyAuthorization)).toEqual([
      `Basic ${Buffer.from('edge:p@ss').toString('base64')}`,
      `Basic ${Buffer.from('edge:p@ss').toString('base64')}`,
    ])
  })

  test('NO_PROXY’s forms: *, a host and its subdomains, .domain, *.domain, a port, an IPv6 address', () => {
    const { proxyFor } = require('../lib/proxy.js') as { proxyFor(url: URL): URL | null }
    process.env.HTTPS_PROXY = 'proxy.corp:3128'
    const through = (address: string) => proxyFor(new URL(address))?.href ?? 'direct'
    expect(through('https://flowadmin.example')).toBe('http://proxy.corp:3128/')
    process.env.NO_PROXY = 'example.com,.internal, *.lan ,host:8443,[::1]'
    expect(through('https://example.com')).toBe('direct')
    expect(through('https://a.example.com')).toBe('direct')
    expect(through('https://notexample.com')).not.toBe('direct')
    expect(through('https://flowadmin.internal')).toBe('direct')
    expect(through('https://internal')).toBe('direct')
    expect(through('https://x.lan')).toBe('direct')
    expect(through('https://host:8443')).toBe('direct')
    expect(through('https://host')).not.toBe('direct')
    expect(through('https://[::1]:1880')).toBe('direct')
    // http:// addresses take HTTP_PROXY, which is not set.
    expect(through('http://flowadmin.example')).toBe('direct')
    process.env.NO_PROXY = '*'
    expect(through('https://flowadmin.example')).toBe('direct')
  })
})

describe('HTTPS_PROXY', () => {
  test('an https flowadmin is reached through a CONNECT tunnel, its certificate checked as directly', async () => {
    const secure = await startStubFlowadmin({ tls: { key: TEST_KEY, cert: TEST_CERT } })
    try {
      const dir = mkdtempSync(path.join(tmpdir(), 'flowadmin-proxy-'))
      const ca = path.join(dir, 'ca.pem')
      writeFileSync(ca, TEST_CERT)
      // A process of its own: the test certificate is trusted there only (NODE_EXTRA_CA_CERTS).
      const script = `
        const flowadmin = require(${JSON.stringify(require.resolve('../index.js'))})
        const options = { url: ${JSON.stringify(secure.url)}, clientId: 'fleet', clientSecret: 's3cret',
          audit: { instance: 'edge-2', delayMs: 0 }, log: (line) => console.log(line) }
        const handle = flowadmin.auditLogger(options).handler({})
        flowadmin.adminAuth(options).authenticate('admin', 'pw').then((user) => {
          console.log(JSON.stringify({ user: user && user.username }))
          handle({ level: 98, event: 'flows.set', user: { username: 'admin' }, timestamp: Date.now() })
          setTimeout(() => process.exit(0), 500)
        })`
      const child = spawn(process.execPath, ['-e', script], {
        env: { ...process.env, https_proxy: proxy.url, NODE_EXTRA_CA_CERTS: ca },
      })
      let output = ''
      child.stdout.on('data', (chunk) => {
        output += chunk
      })
      child.stderr.on('data', (chunk) => {
        output += chunk
      })
      const code = await new Promise((resolve) => child.on('exit', resolve))
      expect(output.trim()).toBe('{"user":"admin"}')
      expect(code).toBe(0)
      expect(secure.received.map((r) => r.path)).toEqual(['/auth/token', '/auth/introspect', '/audit/events'])
      expect(proxy.seen.length).toBeGreaterThan(0)
      expect(new Set(proxy.seen.map((entry) => `${entry.method} ${entry.target}`))).toEqual(
        new Set([`CONNECT 127.0.0.1:${secure.port}`]),
      )
    } finally {
      await secure.close()
    }
  })
})
