// A stand-in for a stock Node-RED 4.1 admin API, as the fleet agent uses it over loopback: its
// node modules (GET /nodes, PUT /nodes/<module>[/<set>], POST /nodes, DELETE /nodes/<module>),
// GET /flows and GET /settings, each request authenticated through adminAuth.tokens, and the
// audit messages Node-RED 4.1.15 logs for them (@node-red/runtime lib/api/nodes.js, editor-api
// lib/auth/strategies.js), given to the audit logger's handler when one is set.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { NodeRedLogMessage } from '../index.js'
import { manifestOf } from './tarball-fixture.js'

export interface FakeModule {
  name: string
  version: string
  pendingVersion?: string
  sets: Array<{ name: string; types: string[]; enabled: boolean }>
}

type User = { username: string; permissions: string | string[] } | null
const AUDIT = 98

export interface FakeOptions {
  /** How long an install or upgrade takes (npm), in ms. */
  installMs?: number
}

/** The file field `tarball` of a multipart/form-data body, as Node-RED's multer takes it; null without. */
function uploadOf(type: string | undefined, body: Buffer): Buffer | null {
  const boundary = /^multipart\/form-data;\s*boundary=(.+)$/i.exec(type ?? '')?.[1]
  if (boundary === undefined) return null
  const start = body.indexOf(Buffer.from('\r\n\r\n'))
  const end = body.lastIndexOf(Buffer.from(`\r\n--${boundary}--`))
  const head = body.subarray(0, Math.max(start, 0)).toString('latin1')
  if (start < 0 || end < start || !/name="tarball"/.test(head)) return null
  return body.subarray(start + 4, end)
}

export async function startFakeNodeRed(initial: FakeModule[], options: FakeOptions = {}) {
  const modules = new Map<string, FakeModule>(initial.map((module) => [module.name, structuredClone(module)]))
  let flows: Array<{ id: string; type: string }> = [{ id: 't', type: 'tab' }]
  const calls: string[] = []
  /** Refusals by `METHOD module`, e.g. `POST wave`: Node-RED's message. */
  const refusals = new Map<string, string>()
  let installMs = options.installMs ?? 0
  let authenticate: ((token: string) => Promise<User>) | null = null
  let audit: ((msg: NodeRedLogMessage) => void) | null = null
  let installing = 0
  /** Whether uploads are taken (false: `editorTheme.palette.upload` is false). */
  let uploads = true
  /** Each tarball uploaded, as received. */
  const uploaded: Buffer[] = []

  const log = (msg: Record<string, unknown>, user?: User) =>
    audit?.({ level: AUDIT, timestamp: Date.now(), ...msg, ...(user !== undefined && { user }) } as never)

  function list() {
    return [...modules.values()].flatMap((module) =>
      module.sets.map((set) => ({
        id: `${module.name}/${set.name}`,
        name: set.name,
        types: set.types,
        enabled: set.enabled,
        local: false,
        user: true,
        module: module.name,
        version: module.version,
        ...(module.pendingVersion !== undefined && { pending_version: module.pendingVersion }),
      })),
    )
  }

  function install(name: string, version: string | undefined) {
    const here = modules.get(name)
    if (here !== undefined) {
      // Node-RED 4.1 keeps the loaded version until it restarts.
      here.pendingVersion = version
      return
    }
    modules.set(name, {
      name,
      version: version ?? '1.0.0',
      sets: [{ name, types: [name], enabled: true }],
    })
  }

  /** POST /nodes with a tarball: its package installed; refused as Node-RED does when uploads are off. */
  function upload(tarball: Buffer, user: User): [number, unknown] {
    if (!uploads) {
      // Node-RED drops the file, so the request names no module.
      log({ event: 'nodes.install', error: 'invalid_request' }, user)
      return [400, { code: 'invalid_request', message: 'Invalid request' }]
    }
    uploaded.push(tarball)
    const manifest = manifestOf(tarball)
    if (manifest === null) return [400, { code: 'unexpected_error', message: 'Error: not a module' }]
    install(manifest.name, manifest.version)
    log({ event: 'nodes.install', module: manifest.name, path: '/nodes' }, user)
    return [200, { name: manifest.name }]
  }

  async function route(req: IncomingMessage, raw: Buffer, user: User): Promise<[number, unknown]> {
    const body = raw.toString('utf8')
    const url = req.url ?? ''
    const method = req.method ?? ''
    if (method === 'GET' && url === '/nodes') {
      log({ event: 'nodes.list.get', path: '/nodes', ip: '127.0.0.1' }, user)
      return [200, list()]
    }
    if (method === 'GET' && url === '/flows') {
      log({ event: 'flows.get', path: '/flows', ip: '127.0.0.1' }, user)
      return [200, flows]
    }
    if (method === 'GET' && url === '/settings') return [200, { httpNodeRoot: '/', version: '4.1.15' }]
    const match = /^\/nodes\/((?:@[^/]+\/)?[^/@]+)(?:\/([^/]+))?$/.exec(url)
    const name = match?.[1] ?? ''
    const refused = refusals.get(`${method} ${name}`)
    if (method === 'PUT' && match) {
      const { enabled } = JSON.parse(body) as { enabled: boolean }
      const module = modules.get(name)
      if (module === undefined) return [404, { code: 'not_found', message: 'Module not found' }]
      if (refused !== undefined) return [400, { code: 'type_in_use', message: refused }]
      const setName = match[2] === undefined ? undefined : decodeURIComponent(match[2])
      for (const set of module.sets) if (setName === undefined || set.name === setName) set.enabled = enabled
      // Node-RED 4.1 logs a module's enable or disable only when it fails; a set's always.
      if (setName !== undefined)
        log({ event: 'nodes.info.set', id: `${name}/${setName}`, enabled, path: url, ip: '127.0.0.1' }, user)
      return [200, {}]
    }
    if (method === 'POST' && url === '/nodes') {
      const tarball = uploadOf(req.headers['content-type'], raw)
      if (tarball !== null) return upload(tarball, user)
      const request = JSON.parse(body) as { module: string; version?: string }
      installing++
      try {
        await new Promise((resolve) => setTimeout(resolve, installMs))
      } finally {
        installing--
      }
      const refusal = refusals.get(`POST ${request.module}`)
      if (refusal !== undefined) {
        log(
          {
            event: 'nodes.install',
            module: request.module,
            version: request.version,
            error: 'unexpected_error',
          },
          user,
        )
        return [400, { code: 'unexpected_error', message: refusal }]
      }
      install(request.module, request.version)
      log({ event: 'nodes.install', module: request.module, version: request.version, path: '/nodes' }, user)
      return [200, { name: request.module }]
    }
    if (method === 'DELETE' && match) {
      if (!modules.delete(name)) return [404, { code: 'not_found', message: 'Module not found' }]
      log({ event: 'nodes.remove', module: name, path: url }, user)
      return [204, undefined]
    }
    return [404, { code: 'not_found', message: 'Not found' }]
  }

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => {
      chunks.push(chunk)
    })
    req.on('end', async () => {
      const raw = Buffer.concat(chunks)
      const body = /^multipart\//.test(req.headers['content-type'] ?? '')
        ? `(upload of ${raw.length} bytes)`
        : raw.toString('utf8')
      calls.push(`${req.method} ${req.url}${body ? ` ${body}` : ''}`)
      const header = req.headers.authorization ?? ''
      const token = /^bearer /i.test(header) ? header.slice(7) : ''
      // Node-RED's bearer strategy looks in its own sessions first, and logs this bare event for
      // any token it did not issue; then its tokens strategy asks adminAuth.tokens.
      log({ event: 'auth.invalid-token' })
      const user = authenticate === null ? null : await authenticate(token)
      if (authenticate !== null && user === null) return res.writeHead(401).end()
      const [status, answer] = await route(req, raw, user)
      res.writeHead(status, { 'Content-Type': 'application/json' })
      res.end(answer === undefined ? '' : JSON.stringify(answer))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port

  return {
    port,
    calls,
    modules,
    /** Calls that change something: PUT, POST, DELETE. */
    changes: () => calls.filter((call) => !call.startsWith('GET')),
    /** Requests are authenticated by this (adminAuth.tokens); 401 without a user. */
    authenticateWith(tokens: (token: string) => Promise<User>) {
      authenticate = tokens
    },
    /** Audit messages go to this handler, as Node-RED's logger calls a custom logger's. */
    auditTo(handler: (msg: NodeRedLogMessage) => void) {
      audit = handler
    },
    refuse(what: string, message: string) {
      refusals.set(what, message)
    },
    /** Whether uploads are taken, as `editorTheme.palette.upload` says. */
    setUploads(on: boolean) {
      uploads = on
    },
    uploaded,
    setInstallMs(ms: number) {
      installMs = ms
    },
    isInstalling: () => installing > 0,
    setFlows(next: Array<{ id: string; type: string }>) {
      flows = next
      log(
        { event: 'flows.set', type: 'full', path: '/flows', ip: '10.0.0.9' },
        { username: 'alice', permissions: '*' },
      )
    },
    /** What a person does through this Node-RED's editor or admin API, with its audit message. */
    byHand: {
      setEnabled(name: string, setName: string, enabled: boolean, username: string) {
        const set = modules.get(name)?.sets.find((each) => each.name === setName)
        if (set === undefined) throw new Error(`no set ${name}/${setName}`)
        set.enabled = enabled
        log(
          {
            event: 'nodes.info.set',
            id: `${name}/${setName}`,
            enabled,
            path: `/nodes/${name}/${setName}`,
            ip: '10.0.0.9',
          },
          { username, permissions: '*' },
        )
      },
      /** A whole module at once: Node-RED 4.1 logs nothing when it succeeds. */
      setModuleEnabled(name: string, enabled: boolean) {
        for (const set of modules.get(name)?.sets ?? []) set.enabled = enabled
      },
      install(name: string, version: string, username: string) {
        install(name, version)
        log(
          { event: 'nodes.install', module: name, version, path: '/nodes', ip: '10.0.0.9' },
          { username, permissions: '*' },
        )
      },
      /**
       * As Node-RED 4.1 removes: the module is unloaded at once, and the audit message comes once
       * npm is done (`auditAfterMs` later).
       */
      remove(name: string, username: string, auditAfterMs = 0) {
        modules.delete(name)
        const audit = () =>
          log(
            { event: 'nodes.remove', module: name, path: `/nodes/${name}`, ip: '10.0.0.9' },
            { username, permissions: '*' },
          )
        if (auditAfterMs === 0) audit()
        else setTimeout(audit, auditAfterMs)
      },
    },
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

export type FakeNodeRed = Awaited<ReturnType<typeof startFakeNodeRed>>
