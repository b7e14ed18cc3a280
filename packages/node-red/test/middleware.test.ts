import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest'
import type { AdminAuth, FlowadminOptions } from '../index.js'
import { fixedClock, flowadmin, optionsFor } from './load.js'
import { type StubFlowadmin, startStubFlowadmin } from './stub-flowadmin.js'

const require = createRequire(import.meta.url)

let stub: StubFlowadmin
let nodeRed: Server | undefined
beforeEach(async () => {
  stub = await startStubFlowadmin()
})
afterEach(async () => {
  if (nodeRed !== undefined) {
    nodeRed.closeAllConnections()
    await new Promise((resolve) => nodeRed?.close(resolve))
    nodeRed = undefined
  }
  await stub.close()
})

/**
 * A stand-in for Node-RED's admin app: the middleware, then (what Node-RED does after it) the
 * routes, each checking the bearer token through adminAuth.tokens as Node-RED's `tokens`
 * strategy does: 401 without a user, else 200. `nexts` counts the calls of next().
 */
async function startNodeRed(options: FlowadminOptions) {
  const adminAuth: AdminAuth = flowadmin.adminAuth(options)
  const middleware = flowadmin.httpAdminMiddleware(options)
  const seen = { nexts: 0 }
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    middleware(req, res, (error?: unknown) => {
      seen.nexts += 1
      if (error !== undefined) return res.writeHead(500).end(`error: ${String(error)}`)
      const header = req.headers.authorization ?? ''
      // As passport-http-bearer reads it: the scheme in any case.
      const token = /^bearer /i.test(header) ? header.slice(7) : ''
      adminAuth.tokens(token).then((user) => res.writeHead(user ? 200 : 401).end())
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  nodeRed = server
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { adminAuth, seen, base }
}

/** The editor's logout: its token as bearer and, form-encoded, in the body. */
function logout(base: string, token: string, path = '/auth/revoke', scheme = 'Bearer') {
  return fetch(`${base}${path}`, {
    method: 'POST',
    headers: { Authorization: `${scheme} ${token}`, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token }),
  })
}

type Next = (error?: unknown) => void
type RequestHandler = (req: IncomingMessage, res: ServerResponse, next: Next) => void
type ErrorHandler = (error: unknown, req: IncomingMessage, res: ServerResponse, next: Next) => void

const revokeOf = (token: string) => (r: { path: string; form: Record<string, string> }) =>
  r.path === '/auth/revoke' && r.form.token === token

describe('httpAdminMiddleware: the editor’s logout also revokes the token at flowadmin', () => {
  test('POST /auth/revoke: flowadmin revokes the token, then Node-RED’s revoke runs and answers 200', async () => {
    const { options } = optionsFor(stub)
    const { adminAuth, seen, base } = await startNodeRed(options)
    const token = (await adminAuth.authenticate('admin', 'pw'))?.token ?? ''

    const response = await logout(base, token)
    // 200: Node-RED's own check of the bearer passed, with a ticket in place of the dead token.
    expect(response.status).toBe(200)
    expect(seen.nexts).toBe(1)
    const revoke = await stub.waitFor(revokeOf(token))
    expect(revoke.authorization).toBe(`Bearer ${token}`)
    expect(revoke.form).toEqual({ token })
    expect(stub.isLive(token)).toBe(false)
    expect(await adminAuth.tokens(token)).toBeNull()
  })

  test('the bearer scheme in any case, as Node-RED reads it: the token is revoked at flowadmin too', async () => {
    const { options } = optionsFor(stub)
    const { adminAuth, base } = await startNodeRed(options)
    const token = (await adminAuth.authenticate('admin', 'pw'))?.token ?? ''
    expect((await logout(base, token, '/auth/revoke', 'bearer')).status).toBe(200)
    await stub.waitFor(revokeOf(token))
    expect(stub.isLive(token)).toBe(false)
  })

  test('with a cache: the logout drops the token from it, so it is refused at once', async () => {
    const { options } = optionsFor(stub, { cacheMs: 5000, now: fixedClock().now })
    const { adminAuth, base } = await startNodeRed(options)
    const token = (await adminAuth.authenticate('admin', 'pw'))?.token ?? ''
    expect(await adminAuth.tokens(token)).not.toBeNull()

    expect((await logout(base, token)).status).toBe(200)
    await stub.waitFor(revokeOf(token))
    expect(await adminAuth.tokens(token)).toBeNull()
  })

  test('the path as Express matches it: any case, a trailing slash, a query', async () => {
    const { options } = optionsFor(stub)
    const { adminAuth, base } = await startNodeRed(options)
    for (const path of ['/AUTH/Revoke', '/auth/revoke/', '/auth/revoke?x=1']) {
      const token = (await adminAuth.authenticate('admin', 'pw'))?.token ?? ''
      await logout(base, token, path)
      await stub.waitFor(revokeOf(token))
    }
  })

  test('other requests pass straight to Node-RED: nothing is revoked', async () => {
    const { options } = optionsFor(stub)
    const { adminAuth, seen, base } = await startNodeRed(options)
    const token = (await adminAuth.authenticate('admin', 'pw'))?.token ?? ''
    const headers = { Authorization: `Bearer ${token}` }
    expect((await fetch(`${base}/settings`, { headers })).status).toBe(200)
    expect((await fetch(`${base}/auth/revoke`, { headers })).status).toBe(200) // GET
    expect((await fetch(`${base}/auth/revoked`, { method: 'POST', headers })).status).toBe(200)
    expect((await fetch(`${base}/flows`, { method: 'POST', headers })).status).toBe(200)
    expect(seen.nexts).toBe(4)

    // A logout afterwards is the only revocation flowadmin gets.
    await logout(base, token)
    await stub.waitFor(revokeOf(token))
    expect(stub.to('/auth/revoke')).toHaveLength(1)
  })

  test('a logout without a bearer token: Node-RED answers 401, nothing is sent to flowadmin', async () => {
    const { options } = optionsFor(stub)
    const { adminAuth, base } = await startNodeRed(options)
    const token = (await adminAuth.authenticate('admin', 'pw'))?.token ?? ''
    const response = await fetch(`${base}/auth/revoke`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token }),
    })
    expect(response.status).toBe(401)
    await logout(base, token)
    await stub.waitFor(revokeOf(token))
    expect(stub.to('/auth/revoke')).toHaveLength(1)
  })

  test('a token flowadmin says is not valid: Node-RED refuses the logout (401), nothing is revoked', async () => {
    const { options } = optionsFor(stub)
    const { seen, base } = await startNodeRed(options)
    expect((await logout(base, 'not-a-token')).status).toBe(401)
    expect(seen.nexts).toBe(1)
    expect(stub.to('/auth/revoke')).toEqual([])
  })
})

/** The status of a request with the token, as the editor sends it. */
async function statusWith(base: string, token: string): Promise<number> {
  const response = await fetch(`${base}/settings`, { headers: { Authorization: `Bearer ${token}` } })
  await response.arrayBuffer()
  return response.status
}

describe('httpAdminMiddleware: the logout’s 200 means the token is dead', () => {
  test('the logout is held until flowadmin has revoked the token: used right after the 200, it is refused', async () => {
    const { options } = optionsFor(stub, { timeoutMs: 30_000 })
    const { adminAuth, base } = await startNodeRed(options)
    const token = (await adminAuth.authenticate('admin', 'pw'))?.token ?? ''
    stub.holdRevocations()
    let answered = false
    const response = logout(base, token).then((res) => {
      answered = true
      return res
    })
    await stub.waitFor(revokeOf(token))
    // flowadmin has the revocation and has not answered it: neither has the logout.
    expect(answered).toBe(false)
    stub.releaseRevocations()
    expect((await response).status).toBe(200)
    expect(await statusWith(base, token)).toBe(401)
    expect(stub.isLive(token)).toBe(false)
  })

  test('flowadmin slow to revoke: after timeoutMs the logout answers 200 and the token is refused here at once', async () => {
    const { options } = optionsFor(stub, { timeoutMs: 300 })
    const { adminAuth, base } = await startNodeRed(options)
    const token = (await adminAuth.authenticate('admin', 'pw'))?.token ?? ''
    stub.holdRevocations()
    expect((await logout(base, token)).status).toBe(200)
    // Still live at flowadmin (its revocation is held), refused on this instance.
    expect(stub.isLive(token)).toBe(true)
    expect(await statusWith(base, token)).toBe(401)
    expect(await adminAuth.tokens(token)).toBeNull()
  })

  test('flowadmin down at logout: 200, the token is refused here, and the revocation reaches flowadmin once it is back, then stops', async () => {
    const { options, lines } = optionsFor(stub, { cacheMs: 5000, now: fixedClock().now })
    const { adminAuth, seen, base } = await startNodeRed(options)
    const token = (await adminAuth.authenticate('admin', 'pw'))?.token ?? ''
    const other = (await adminAuth.authenticate('reader', 'pw'))?.token ?? ''
    stub.setMode('down')
    expect((await logout(base, token)).status).toBe(200)
    expect(seen.nexts).toBe(1)
    expect(await statusWith(base, token)).toBe(401)

    // flowadmin is back: the token is live there until the retry, and still refused here.
    stub.setMode('up')
    expect(stub.isLive(token)).toBe(true)
    expect(await statusWith(base, token)).toBe(401)
    expect(await statusWith(base, other)).toBe(200)
    await stub.waitFor(revokeOf(token))
    expect(stub.isLive(token)).toBe(false)
    expect(stub.isLive(other)).toBe(true)
    await vi.waitFor(() => expect(lines).toHaveLength(4))
    expect(lines).toEqual([
      expect.stringContaining(`flowadmin at ${stub.url} is unreachable (`),
      `a logout could not be revoked at flowadmin at ${stub.url}: its token is refused on this instance and the revocation is retried until flowadmin takes it`,
      `flowadmin at ${stub.url} is reachable again`,
      `the logouts that waited for flowadmin at ${stub.url} are revoked there`,
    ])

    // Done: another outage and recovery send it no more.
    stub.setMode('down')
    expect(await adminAuth.tokens(stub.issue('admin', '*'))).toBeNull()
    stub.setMode('up')
    expect(await adminAuth.tokens(other)).not.toBeNull()
    const last = (await adminAuth.authenticate('admin', 'pw'))?.token ?? ''
    expect((await logout(base, last)).status).toBe(200)
    expect(stub.to('/auth/revoke').map((r) => r.form.token)).toEqual([token, last])
  })

  test('flowadmin down, no cache: the logout still answers 200 and the token is refused; a second logout of it too', async () => {
    const { options } = optionsFor(stub)
    const { adminAuth, base } = await startNodeRed(options)
    const token = (await adminAuth.authenticate('admin', 'pw'))?.token ?? ''
    stub.setMode('down')
    expect((await logout(base, token)).status).toBe(200)
    expect((await logout(base, token)).status).toBe(200)
    stub.setMode('up')
    expect(await statusWith(base, token)).toBe(401)
    await stub.waitFor(revokeOf(token))
    expect(stub.isLive(token)).toBe(false)
    expect(await statusWith(base, token)).toBe(401)
  })
})

describe('httpAdminMiddleware: logouts of any bearer string while flowadmin is unreachable', () => {
  type Middleware = (req: object, res: object, next: () => void) => void
  const { createMiddleware } = require('../lib/middleware.js') as {
    createMiddleware: (settings: object, state: object) => Middleware
  }
  const { createRevocations, MAX_PENDING } = require('../lib/revocations.js') as {
    createRevocations: (settings: object, client: object) => { refuses(token: string): boolean }
    MAX_PENDING: number
  }

  test('a flood of junk tokens goes on to Node-RED as any logout, and a real user’s logout is still taken', async () => {
    const settings = { middleware: [], timeoutMs: 1000, log: () => {}, now: Date.now, url: 'https://fa' }
    // flowadmin unreachable: every introspection and revocation fails.
    const client = { introspect: async () => ({ outcome: 'failed' }), revoke: async () => 'failed' }
    const revocations = createRevocations(settings, client)
    const cache = {
      get: (token: string) => (token === 'real' ? { username: 'ann', permissions: '*' } : undefined),
      forget: () => {},
    }
    const middleware = createMiddleware(settings, { client, cache, revocations })
    /** One POST /auth/revoke with this bearer: `next` (on to Node-RED) or the status answered. */
    const logoutOf = (token: string) =>
      new Promise<number | 'next'>((resolve) => {
        const req = { method: 'POST', url: '/auth/revoke', headers: { authorization: `Bearer ${token}` } }
        const res = {
          statusCode: 200,
          setHeader: () => {},
          once: () => {},
          end() {
            resolve(res.statusCode)
          },
        }
        middleware(req, res, () => resolve('next'))
      })
    for (let i = 0; i <= MAX_PENDING; i++) expect(await logoutOf(`junk-${i}`)).toBe('next')
    expect(await logoutOf('real')).toBe('next')
    expect(revocations.refuses('real')).toBe(true)
  })
})

describe('httpAdminMiddleware: a logout that cannot be done is an error, never a 200', () => {
  type Middleware = (req: object, res: object, next: Next) => void
  const { createMiddleware } = require('../lib/middleware.js') as {
    createMiddleware: (settings: object, state: object) => Middleware
  }

  /** The middleware over `state` (its parts replaced), before a Node-RED that answers 200. */
  async function withState(state: { client: object; revocations: object }) {
    const lines: string[] = []
    const seen = { nexts: 0 }
    const middleware = createMiddleware(
      { middleware: [], timeoutMs: 1000, log: (line: string) => lines.push(line) },
      { cache: { get: () => undefined, forget: () => {} }, ...state },
    )
    const server = createServer((req, res) =>
      middleware(req, res, () => {
        seen.nexts += 1
        res.writeHead(200).end()
      }),
    )
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    nodeRed = server
    return { lines, seen, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
  }

  const unverified = { introspect: async () => ({ outcome: 'failed' }) }

  test('too many logouts waiting for flowadmin: the next is answered 503 and does not reach Node-RED', async () => {
    const { seen, base } = await withState({
      client: unverified,
      revocations: { refuses: () => false, revoke: async () => 'full' },
    })
    const response = await logout(base, 'a-token')
    expect(response.status).toBe(503)
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8')
    expect(await response.json()).toEqual({
      code: 'logout_unavailable',
      message: 'The logout could not reach flowadmin and could not be kept: try again later',
    })
    expect(seen.nexts).toBe(0)
  })

  test('an unexpected error: 503, one line, nothing for Node-RED', async () => {
    const { lines, seen, base } = await withState({
      client: unverified,
      revocations: {
        refuses: () => false,
        revoke: async () => {
          throw new Error('broke')
        },
      },
    })
    const response = await logout(base, 'a-token')
    expect(response.status).toBe(503)
    expect(await response.json()).toMatchObject({ code: 'logout_unavailable' })
    expect(seen.nexts).toBe(0)
    expect(lines).toEqual(['the logout failed unexpectedly (Error: broke): answered 503'])
  })
})

describe('httpAdminMiddleware: the instance’s own middleware (option `middleware`)', () => {
  test('runs first, in order, nested arrays flattened, then Node-RED', async () => {
    const order: string[] = []
    const mark =
      (name: string): RequestHandler =>
      (_req, res, next) => {
        order.push(name)
        res.setHeader(`x-${name}`, '1')
        next()
      }
    const { options } = optionsFor(stub, { middleware: [mark('a'), [mark('b'), mark('c')]] })
    const { seen, base } = await startNodeRed(options)
    const response = await fetch(`${base}/settings`)
    expect(response.headers.get('x-a')).toBe('1')
    expect(response.headers.get('x-c')).toBe('1')
    expect(order).toEqual(['a', 'b', 'c'])
    expect(seen.nexts).toBe(1)
  })

  test('one function works as well as an array', async () => {
    let ran = 0
    const { options } = optionsFor(stub, {
      middleware: (_req: unknown, _res: unknown, next: () => void) => {
        ran += 1
        next()
      },
    })
    const { seen, base } = await startNodeRed(options)
    await fetch(`${base}/settings`)
    expect([ran, seen.nexts]).toEqual([1, 1])
  })

  test('a gate that answers itself: neither Node-RED nor flowadmin sees the logout', async () => {
    const gate: RequestHandler = (_req, res) => {
      res.writeHead(403).end()
    }
    const { options } = optionsFor(stub, { middleware: gate })
    const { adminAuth, seen, base } = await startNodeRed(options)
    const token = (await adminAuth.authenticate('admin', 'pw'))?.token ?? ''
    expect((await logout(base, token)).status).toBe(403)
    expect(seen.nexts).toBe(0)
    expect(stub.to('/auth/revoke')).toEqual([])
    expect(stub.isLive(token)).toBe(true)
  })

  test('an error goes to the next error handler of the chain, as in Express', async () => {
    const failing: RequestHandler = (_req, _res, next) => next(new Error('boom'))
    const skipped: RequestHandler = () => {
      throw new Error('a plain middleware must be skipped after an error')
    }
    const handler: ErrorHandler = (error, _req, res, _next) => {
      res.writeHead(418).end(String((error as Error).message))
    }
    const { options } = optionsFor(stub, { middleware: [failing, skipped, handler] })
    const { seen, base } = await startNodeRed(options)
    const response = await fetch(`${base}/settings`)
    expect([response.status, await response.text()]).toEqual([418, 'boom'])
    expect(seen.nexts).toBe(0)
  })

  test('an error no handler of the chain takes goes on to Node-RED, and so does a throw', async () => {
    const throwing: RequestHandler = () => {
      throw new Error('thrown')
    }
    const { options } = optionsFor(stub, { middleware: throwing })
    const { seen, base } = await startNodeRed(options)
    const response = await fetch(`${base}/settings`)
    expect([response.status, await response.text()]).toEqual([500, 'error: Error: thrown'])
    expect(seen.nexts).toBe(1)
  })
})

describe('httpAdminMiddleware: the fleet agent’s own token is accepted from this machine only', () => {
  test('from another machine: 401 before anything else; from loopback: on to Node-RED', async () => {
    const { options } = optionsFor(stub)
    const middleware = flowadmin.httpAdminMiddleware(options)
    const { stateOf } = require('../lib/state.js') as {
      stateOf(options: object): { fleet: { isAgentToken(token: string): boolean } | null }
    }
    stateOf(options).fleet = { isAgentToken: (token: string) => token === 'agent-token' }
    const run = (remoteAddress: string, token: string) => {
      const req = {
        method: 'GET',
        url: '/nodes',
        headers: { authorization: `Bearer ${token}` },
        socket: { remoteAddress },
      }
      const answer = { status: 0, body: '', nexts: 0 }
      const res = {
        statusCode: 200,
        setHeader() {},
        end(body: string) {
          answer.status = this.statusCode
          answer.body = body
        },
      }
      ;(middleware as unknown as RequestHandler)(
        req as unknown as IncomingMessage,
        res as unknown as ServerResponse,
        () => {
          answer.nexts += 1
        },
      )
      return answer
    }
    expect(run('203.0.113.9', 'agent-token')).toEqual({
      status: 401,
      body: '{"code":"unauthorized","message":"Unauthorized"}',
      nexts: 0,
    })
    expect(run('::ffff:203.0.113.9', 'agent-token').status).toBe(401)
    expect(run('127.0.0.1', 'agent-token')).toEqual({ status: 0, body: '', nexts: 1 })
    expect(run('::ffff:127.0.0.1', 'agent-token').nexts).toBe(1)
    expect(run('::1', 'agent-token').nexts).toBe(1)
    // Any other token from anywhere: Node-RED's to judge.
    expect(run('203.0.113.9', 'someone-else').nexts).toBe(1)
  })
})
