import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** A request the stub received. */
export interface Received {
  path: string
  authorization: string | undefined
  userAgent: string | undefined
  form: Record<string, string>
}

/**
 * up: the contract; down: the connection is dropped; hang: no answer ever; unavailable: 503;
 * notFound: 404 (a url that is not flowadmin).
 */
export type Mode = 'up' | 'down' | 'hang' | 'unavailable' | 'notFound'

interface StubUser {
  password: string
  scope: string
  throttled?: boolean
  /** The password grant answers 403 mfa_required for them. */
  secondFactor?: boolean
}

export interface StubOptions {
  clientId?: string
  clientSecret?: string
  users?: Record<string, StubUser>
}

export const CLIENT_ID = 'fleet'
export const CLIENT_SECRET = 's3cret'

/**
 * Users (password `pw`): admin `*`, reader `read`, editor `nodes.read nodes.write`, slow (throttled),
 * secured (has a second factor: the password grant refuses them, as flowadmin does).
 */
export const USERS: Record<string, StubUser> = {
  admin: { password: 'pw', scope: '*' },
  reader: { password: 'pw', scope: 'read' },
  editor: { password: 'pw', scope: 'nodes.read nodes.write' },
  slow: { password: 'pw', scope: '*', throttled: true },
  secured: { password: 'pw', scope: '*', secondFactor: true },
}

/** RFC 6749 §2.3.1: form-decoded after base64. */
function decodeBasic(header: string | undefined): [string, string] | null {
  if (header === undefined || !header.startsWith('Basic ')) return null
  const pair = Buffer.from(header.slice(6), 'base64').toString('utf8')
  const colon = pair.indexOf(':')
  if (colon < 0) return null
  const decode = (part: string) => decodeURIComponent(part.replace(/\+/g, ' '))
  return [decode(pair.slice(0, colon)), decode(pair.slice(colon + 1))]
}

async function formOf(req: IncomingMessage): Promise<Record<string, string>> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')))
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers })
  res.end(JSON.stringify(body))
}

/**
 * A flowadmin that implements the contract the package is written against (password grant,
 * RFC 7662 introspection, revocation) on 127.0.0.1, a free port. `close()` ends it.
 */
export async function startStubFlowadmin(options: StubOptions = {}) {
  const clientId = options.clientId ?? CLIENT_ID
  const clientSecret = options.clientSecret ?? CLIENT_SECRET
  const users = options.users ?? USERS
  const live = new Map<string, { username: string; scope: string; exp: number }>()
  const received: Received[] = []
  const waiters: Array<{ test: (r: Received) => boolean; resolve: (r: Received) => void }> = []
  let mode: Mode = 'up'
  /** While true, revocations are received and recorded, and answered only at release. */
  let holdingRevocations = false
  const heldRevocations: Array<() => void> = []

  function clientOk(req: IncomingMessage) {
    const pair = decodeBasic(req.headers.authorization)
    return pair !== null && pair[0] === clientId && pair[1] === clientSecret
  }

  function issue(username: string, scope: string) {
    const token = randomBytes(32).toString('base64url')
    live.set(token, { username, scope, exp: Math.floor(Date.now() / 1000) + 3600 })
    return token
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    if (mode === 'down') {
      req.socket.destroy()
      return
    }
    const form = await formOf(req)
    const path = (req.url ?? '').split('?')[0] ?? ''
    const request = {
      path,
      authorization: req.headers.authorization,
      userAgent: req.headers['user-agent'],
      form,
    }
    received.push(request)
    for (const waiter of waiters.filter((w) => w.test(request))) {
      waiters.splice(waiters.indexOf(waiter), 1)
      waiter.resolve(request)
    }
    if (mode === 'hang') return
    if (mode === 'unavailable') return json(res, 503, { error: 'temporarily_unavailable' })
    if (mode === 'notFound' || req.method !== 'POST') return json(res, 404, { message: 'Not Found' })

    if (path === '/auth/token') {
      const user = users[form.username ?? '']
      // As flowadmin answers a refused client (RFC 6749 §5.2).
      if (!clientOk(req)) return json(res, 401, { error: 'invalid_client' }, { 'WWW-Authenticate': 'Basic' })
      if (user?.throttled)
        return json(res, 429, { error: 'temporarily_unavailable' }, { 'Retry-After': '60' })
      if (user?.secondFactor && user.password === form.password)
        return json(res, 403, { error: 'mfa_required', error_description: 'sign in on the sign-in page' })
      const scope = form.scope ?? ''
      if (user === undefined || user.password !== form.password || (scope !== '' && scope !== user.scope)) {
        return res.writeHead(401).end()
      }
      return json(res, 200, {
        access_token: issue(form.username ?? '', user.scope),
        expires_in: 3600,
        token_type: 'Bearer',
      })
    }
    if (path === '/auth/introspect') {
      if (!clientOk(req)) return json(res, 401, { error: 'invalid_client' }, { 'WWW-Authenticate': 'Basic' })
      const record = live.get(form.token ?? '')
      if (record === undefined) return json(res, 200, { active: false })
      return json(res, 200, {
        active: true,
        username: record.username,
        scope: record.scope,
        client_id: clientId,
        token_type: 'Bearer',
        exp: record.exp,
        iat: record.exp - 3600,
        sub: record.username,
      })
    }
    if (path === '/auth/revoke') {
      if (holdingRevocations) await new Promise<void>((resolve) => heldRevocations.push(resolve))
      const bearer = req.headers.authorization?.startsWith('Bearer ')
        ? req.headers.authorization.slice(7)
        : ''
      if (!live.has(bearer)) return res.writeHead(401).end()
      live.delete(form.token ?? '')
      return res.writeHead(200).end()
    }
    return json(res, 404, { message: 'Not Found' })
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => json(res, 500, { message: String(error) }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo

  return {
    url: `http://127.0.0.1:${port}`,
    /** Every request received, in order. */
    received,
    /** Requests to one path. */
    to: (path: string) => received.filter((r) => r.path === path),
    setMode(next: Mode) {
      mode = next
    },
    /** Revocations from now on wait (unanswered, not applied) until releaseRevocations(). */
    holdRevocations() {
      holdingRevocations = true
    },
    /** Applies and answers the revocations held, and stops holding them. */
    releaseRevocations() {
      holdingRevocations = false
      for (const release of heldRevocations.splice(0)) release()
    },
    /** A token issued as a login would, without one. */
    issue,
    isLive: (token: string) => live.has(token),
    /** A live token's `exp`, in seconds. */
    expiryOf: (token: string) => live.get(token)?.exp ?? 0,
    /** The first request, already received or still to come, that passes `test`. */
    waitFor(test: (r: Received) => boolean): Promise<Received> {
      const found = received.find(test)
      if (found !== undefined) return Promise.resolve(found)
      return new Promise((resolve) => waiters.push({ test, resolve }))
    },
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

export type StubFlowadmin = Awaited<ReturnType<typeof startStubFlowadmin>>
