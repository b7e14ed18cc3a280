import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer as createTlsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { type Caller, createStubIdentity } from './stub-identity.js'

/** A request the stub received. */
export interface Received {
  method: string
  path: string
  authorization: string | undefined
  userAgent: string | undefined
  form: Record<string, string>
  /** The body as it came. */
  text: string
  headers: IncomingMessage['headers']
  /** When it came, and when it was answered (0 until then), in ms since the epoch. */
  at: number
  answeredAt: number
}

/** A desired state as flowadmin's `GET /fleet/instances/{id}/desired` answers it. */
export interface Desired {
  version: string
  prune: boolean
  hold?: number
  modules: Array<{ name: string; sets: Array<{ name: string; enabled: boolean }> }>
  installs: Array<{ module: string; version: string | null; integrity?: string; tarball?: string }>
  removals: string[]
  /** The instance's rollout target, when it has one. */
  flows?: { rollout: string; snapshot: string; mode: 'report' | 'enforce'; variables: string }
}

/** A rollout's target as `GET /fleet/instances/{id}/flows/target` answers it. */
export interface FlowsTarget {
  rollout: string
  snapshot: string
  mode: 'report' | 'enforce'
  variables: string
  flows: Array<Record<string, unknown>>
  modules: Array<{ name: string; version: string }>
  env: Array<{ name: string; value: string; type: 'str' | 'cred' }>
}

/** A tarball's Content-Length: its own ('true'), none (chunked), or this number (the rest never sent). */
export type TarballLength = 'true' | 'unsaid' | number

/** A report an instance sent, with its id. */
export interface Report {
  id: string
  body: Record<string, unknown>
  at: number
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
  /** Serve https with this key and certificate instead of plain http. */
  tls?: { key: string; cert: string }
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

async function textOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

const formOf = (req: IncomingMessage, text: string): Record<string, string> =>
  req.headers['content-type']?.startsWith('application/x-www-form-urlencoded')
    ? Object.fromEntries(new URLSearchParams(text))
    : {}

/** Seconds of `Prefer: wait=N`, 0 without it. */
const waitOf = (header: string | undefined) => Number(/wait=(\d+)/.exec(header ?? '')?.[1] ?? 0)

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers })
  res.end(JSON.stringify(body))
}

/**
 * A flowadmin that implements the contract the package is written against (password grant, the
 * code grant of a sign-in, RFC 7662 introspection, revocation, audit events, and the fleet's poll
 * and report) on 127.0.0.1, a free port. `close()` ends it.
 */
export async function startStubFlowadmin(options: StubOptions = {}) {
  const clientId = options.clientId ?? CLIENT_ID
  const clientSecret = options.clientSecret ?? CLIENT_SECRET
  const users = options.users ?? USERS
  /** Live tokens; `instance`: issued through that instance's credential (inactive at others). */
  const live = new Map<string, { username: string; scope: string; exp: number; instance: string | null }>()
  const identity = createStubIdentity(clientId)
  const received: Received[] = []
  const waiters: Array<{ test: (r: Received) => boolean; resolve: (r: Received) => void }> = []
  let mode: Mode = 'up'
  /** While true, revocations are received and recorded, and answered only at release. */
  let holdingRevocations = false
  const heldRevocations: Array<() => void> = []
  /** Codes of sign-ins (the code grant), each for one user. */
  const codes = new Map<string, string>()
  const fleet = {
    desired: null as Desired | null,
    /** The most seconds a poll is held (flowadmin's `fleet.hold`). */
    hold: 15,
    reports: [] as Report[],
    /** What a report is answered. */
    reportStatus: 204,
    /** Held polls, woken when the desired state changes. */
    held: new Set<() => void>(),
    /** Each instance's rollout target (none: 404 no_target), and the flows reports received. */
    targets: new Map<string, FlowsTarget>(),
    flowReports: [] as Report[],
  }
  /** Tarballs served at `/tarballs/…`, as a registry would. */
  const tarballs = new Map<string, { bytes: Buffer; length: TarballLength }>()
  /** Paths answered with a redirect to their location. */
  const redirects = new Map<string, string>()
  const audit = {
    events: [] as Array<Record<string, unknown>>,
    /** The statuses of the next answers to `POST /audit/events`, then 200. */
    statuses: [] as Array<{ status: number; retryAfter?: string }>,
  }

  /** The shared resource server, an instance by its own credential, or null (refused). */
  function callerOf(req: IncomingMessage): Caller {
    const pair = decodeBasic(req.headers.authorization)
    if (pair === null) return null
    if (pair[0] === clientId && pair[1] === clientSecret) return { kind: 'shared' }
    return identity.callerOf(pair[0], pair[1])
  }

  const clientOk = (req: IncomingMessage) => callerOf(req) !== null

  function issue(username: string, scope: string, instance: string | null = null) {
    const token = randomBytes(32).toString('base64url')
    live.set(token, { username, scope, exp: Math.floor(Date.now() / 1000) + 3600, instance })
    return token
  }

  /** The instance a caller is bound to, or null (the shared secret). */
  const instanceOf = (caller: Caller) => (caller?.kind === 'instance' ? caller.instance : null)

  /** An instance's credential used for another instance's route: 403, as flowadmin refuses it. */
  function mismatch(res: ServerResponse, caller: Caller, id: string) {
    if (caller?.kind !== 'instance' || caller.instance === id) return false
    refusedAs.push({ caller: caller.instance, claimed: id })
    json(res, 403, { code: 'instance_mismatch', message: 'The credential is for another instance' })
    return true
  }
  /** Requests refused as instance_mismatch: whose credential, which id it named. */
  const refusedAs: Array<{ caller: string; claimed: string }> = []

  /** `GET /fleet/instances/{id}/desired`: held while `If-None-Match` names the version. */
  async function poll(req: IncomingMessage, res: ServerResponse, id: string) {
    const caller = callerOf(req)
    if (caller === null) return json(res, 401, { error: 'invalid_client' })
    if (mismatch(res, caller, id)) return
    // Asked to rotate its credential: answered at once, with the flag.
    if (caller.kind === 'instance' && identity.rotateAsked(caller.instance) && fleet.desired !== null) {
      return json(
        res,
        200,
        { hold: fleet.hold, ...fleet.desired, rotate: true },
        { ETag: `"${fleet.desired.version}"` },
      )
    }
    const known = /"([^"]*)"/.exec(req.headers['if-none-match'] ?? '')?.[1] ?? null
    const deadline = Date.now() + Math.min(waitOf(String(req.headers.prefer ?? '')), fleet.hold) * 1000
    while (known !== null && fleet.desired?.version === known && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer)
          fleet.held.delete(wake)
          resolve()
        }
        const timer = setTimeout(wake, deadline - Date.now())
        fleet.held.add(wake)
        res.once('close', wake)
      })
    }
    if (res.destroyed) return
    const desired = fleet.desired
    if (desired === null) return json(res, 404, { code: 'not_found', message: 'No fleet here' })
    if (known === desired.version) return res.writeHead(304, { ETag: `"${desired.version}"` }).end()
    return json(res, 200, { hold: fleet.hold, ...desired }, { ETag: `"${desired.version}"` })
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    if (mode === 'down') {
      req.socket.destroy()
      return
    }
    const text = await textOf(req)
    const form = formOf(req, text)
    const path = (req.url ?? '').split('?')[0] ?? ''
    const request: Received = {
      method: req.method ?? '',
      path,
      authorization: req.headers.authorization,
      userAgent: req.headers['user-agent'],
      form,
      text,
      headers: req.headers,
      at: Date.now(),
      answeredAt: 0,
    }
    received.push(request)
    res.once('finish', () => {
      request.answeredAt = Date.now()
    })
    for (const waiter of waiters.filter((w) => w.test(request))) {
      waiters.splice(waiters.indexOf(waiter), 1)
      waiter.resolve(request)
    }
    if (mode === 'hang') return
    if (mode === 'unavailable') return json(res, 503, { error: 'temporarily_unavailable' })
    if (mode === 'notFound') return json(res, 404, { message: 'Not Found' })
    const moved = req.method === 'GET' ? redirects.get(path) : undefined
    if (moved !== undefined) return res.writeHead(302, { location: moved }).end()
    const tarball = req.method === 'GET' ? tarballs.get(path) : undefined
    if (tarball !== undefined) {
      const { bytes, length } = tarball
      res.writeHead(200, {
        'content-type': 'application/octet-stream',
        ...(length !== 'unsaid' && { 'content-length': String(length === 'true' ? bytes.length : length) }),
      })
      // A length said larger than what is sent: the rest never comes.
      return typeof length === 'number' ? res.write(bytes.subarray(0, 1)) : res.end(bytes)
    }
    const instance = /^\/fleet\/instances\/([^/]+)\/(desired|report|flows\/target|flows\/report)$/.exec(path)
    const named = decodeURIComponent(instance?.[1] ?? '')
    if (instance?.[2] === 'desired' && req.method === 'GET') return poll(req, res, named)
    if (instance?.[2]?.startsWith('flows/')) {
      const caller = callerOf(req)
      if (caller === null) return json(res, 401, { error: 'invalid_client' })
      if (mismatch(res, caller, named)) return
      if (instance[2] === 'flows/report' && req.method === 'POST') {
        fleet.flowReports.push({ id: named, body: JSON.parse(text), at: Date.now() })
        return res.writeHead(204).end()
      }
      const target = fleet.targets.get(named)
      if (instance[2] === 'flows/target' && req.method === 'GET' && target !== undefined)
        return json(res, 200, target)
      return json(res, 404, { code: 'no_target', message: 'No target' })
    }
    if (identity.handle(req, res, path, text, callerOf(req))) return
    if (req.method !== 'POST') return json(res, 404, { message: 'Not Found' })
    if (instance?.[2] === 'report') {
      const caller = callerOf(req)
      if (caller === null) return json(res, 401, { error: 'invalid_client' })
      if (mismatch(res, caller, named)) return
      fleet.reports.push({
        id: decodeURIComponent(instance[1] ?? ''),
        body: JSON.parse(text),
        at: Date.now(),
      })
      return res.writeHead(fleet.reportStatus).end()
    }
    if (path === '/audit/events') {
      const caller = callerOf(req)
      if (caller === null) return json(res, 401, { error: 'invalid_client' })
      const next = audit.statuses.shift()
      if (next !== undefined && next.status !== 200) {
        return json(
          res,
          next.status,
          { code: 'too_many_requests', message: 'Slow down' },
          next.retryAfter === undefined ? {} : { 'Retry-After': next.retryAfter },
        )
      }
      const { events } = JSON.parse(text) as { events: Array<Record<string, unknown>> }
      // Kept as sent (flowadmin files an enrolled instance's events under its own id, whatever
      // they say; the tests look at what the helper said).
      audit.events.push(...events)
      return json(res, 200, { accepted: events.length })
    }

    if (path === '/auth/token' && form.grant_type === 'authorization_code') {
      if (!clientOk(req)) return json(res, 401, { error: 'invalid_client' }, { 'WWW-Authenticate': 'Basic' })
      const username = codes.get(form.code ?? '')
      codes.delete(form.code ?? '')
      const user = users[username ?? '']
      if (username === undefined || user === undefined) {
        return json(res, 400, { error: 'invalid_grant', error_description: 'unknown code' })
      }
      return json(res, 200, {
        access_token: issue(username, user.scope, instanceOf(callerOf(req))),
        expires_in: 3600,
        token_type: 'Bearer',
      })
    }
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
        access_token: issue(form.username ?? '', user.scope, instanceOf(callerOf(req))),
        expires_in: 3600,
        token_type: 'Bearer',
      })
    }
    if (path === '/auth/introspect') {
      if (!clientOk(req)) return json(res, 401, { error: 'invalid_client' }, { 'WWW-Authenticate': 'Basic' })
      const record = live.get(form.token ?? '')
      const asking = instanceOf(callerOf(req))
      // A token issued through one instance is inactive at another.
      if (
        record === undefined ||
        (record.instance !== null && asking !== null && record.instance !== asking)
      ) {
        return json(res, 200, { active: false })
      }
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

  const listener = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch((error: unknown) => json(res, 500, { message: String(error) }))
  }
  const server = options.tls === undefined ? createServer(listener) : createTlsServer(options.tls, listener)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo

  return {
    url: `${options.tls === undefined ? 'http' : 'https'}://127.0.0.1:${port}`,
    port,
    /** The fleet's side: the desired state (null: 404), the reports, the hold. */
    fleet: {
      reports: fleet.reports,
      /** Reports of one instance. */
      reportsOf: (id: string) => fleet.reports.filter((report) => report.id === id).map((r) => r.body),
      /** Polls of one instance, in order. */
      pollsOf: (id: string) => received.filter((r) => r.path === `/fleet/instances/${id}/desired`),
      setDesired(next: Desired | null) {
        fleet.desired = next
        for (const wake of [...fleet.held]) wake()
      },
      setHold(seconds: number) {
        fleet.hold = seconds
      },
      /** An instance's rollout target (null: none). */
      setTarget(id: string, target: FlowsTarget | null) {
        if (target === null) fleet.targets.delete(id)
        else fleet.targets.set(id, target)
      },
      /** Every flows report, with its instance and when it came. */
      flowReports: fleet.flowReports,
      /** The flows reports of one instance, their bodies. */
      flowReportsOf: (id: string) =>
        fleet.flowReports.filter((report) => report.id === id).map((report) => report.body),
      setReportStatus(status: number) {
        fleet.reportStatus = status
      },
      /** Answers `/moved/<file>` with a redirect to `location`; its URL. */
      redirect(file: string, location: string) {
        redirects.set(`/moved/${file}`, location)
        return `${options.tls === undefined ? 'http' : 'https'}://127.0.0.1:${port}/moved/${file}`
      },
      /** Serves `bytes` at `/tarballs/<file>`, saying their length as `length` tells; its URL. */
      serveTarball(file: string, bytes: Buffer, length: TarballLength = 'true') {
        tarballs.set(`/tarballs/${file}`, { bytes, length })
        return `${options.tls === undefined ? 'http' : 'https'}://127.0.0.1:${port}/tarballs/${file}`
      },
    },
    /** The trail's side: the events taken, and the statuses of the next answers. */
    audit: {
      events: audit.events,
      answerNext(...statuses: Array<{ status: number; retryAfter?: string }>) {
        audit.statuses.push(...statuses)
      },
    },
    /** The instances' identities: enrolment tokens, credentials, rotation, revocation. */
    identity: { ...identity.api, refusedAs },
    /** A code of a sign-in by `username`, as flowadmin's /auth/authorize gives the browser. */
    code(username: string) {
      const code = randomBytes(16).toString('base64url')
      codes.set(code, username)
      return code
    },
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
