// Helpers for the hostile-client tests: a userDir with two users and an audit file, raw HTTP
// requests from a chosen loopback source address, and the audit lines the server wrote.
import { readFile } from 'node:fs/promises'
import { request } from 'node:http'
import { connect, type Socket } from 'node:net'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import * as argon2 from 'argon2'
import { beforeEach } from 'vitest'
import { type BuiltServer, copyDemo, startBuiltServer, useUserDir, writeSettings } from './cli-process.js'

const PROBE = fileURLToPath(new URL('./hostile-verify-probe.cjs', import.meta.url))

export const ADMIN_PASSWORD = 'admin-secret-pw'
export const VIEWER_PASSWORD = 'viewer-secret-pw'

export interface Workspace {
  userDir: string
  settingsFile: string
  auditFile: string
  /** The argon2id hashes of the two users' passwords, as the settings hold them. */
  hashes: { admin: string; viewer: string }
  /** Rewrites the settings: two users, the audit file, and `extra` on top. */
  writeSettings(extra?: Record<string, unknown>): Promise<void>
  /**
   * Starts the built CLI on a free port of 127.0.0.1 and waits until it listens. With
   * `countVerifications`, every argon2 verification it makes is recorded (see `verifications`).
   */
  start(options?: { countVerifications?: boolean }): Promise<BuiltServer>
  /** The hash of each argon2 verification so far, in order (with `countVerifications`). */
  verifications(): Promise<string[]>
  /** Every audit line written so far, parsed. */
  audit(): Promise<AuditLine[]>
}

export interface AuditLine {
  time: string
  event: string
  user: string | null
  client: string | null
  address: string | null
  [detail: string]: unknown
}

let hashes: Promise<{ admin: string; viewer: string }> | null = null
const hash = (password: string) =>
  argon2.hash(password, { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 })

/**
 * Registers a suite's hooks over the built server (see {@link useUserDir}): a fresh workspace for
 * each test, a userDir with the demo's node modules and flows (whose `greeting` type is in use).
 * The object returned holds the workspace of the test running (its fields are replaced before
 * each test).
 */
export function useWorkspace(): Workspace {
  const dir = useUserDir('hostile', (userDir) => copyDemo(userDir, { flows: true }))
  const current = {} as Workspace
  beforeEach(async () => {
    Object.assign(current, await createWorkspace(dir.userDir))
  })
  return current
}

/** The workspace in `userDir`, its settings written. */
async function createWorkspace(userDir: string): Promise<Workspace> {
  const settingsFile = path.join(userDir, 'settings.json')
  const auditFile = path.join(userDir, 'audit.log')
  const verifyLog = path.join(userDir, 'verifications.log')
  hashes ??= Promise.all([hash(ADMIN_PASSWORD), hash(VIEWER_PASSWORD)]).then(([admin, viewer]) => ({
    admin,
    viewer,
  }))
  const { admin, viewer } = await hashes
  const workspace: Workspace = {
    userDir,
    settingsFile,
    auditFile,
    hashes: { admin, viewer },
    async writeSettings(extra = {}) {
      const { adminAuth: extraAuth, ...rest } = extra as { adminAuth?: Record<string, unknown> }
      await writeSettings(settingsFile, {
        auditLog: { file: 'audit.log' },
        adminAuth: {
          type: 'credentials',
          users: [
            { username: 'admin', password: admin, permissions: '*' },
            { username: 'viewer', password: viewer, permissions: 'read' },
          ],
          ...extraAuth,
        },
        ...rest,
      })
    },
    start(options = {}) {
      const probe = {
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require=${PROBE}`.trim(),
        FLOWADMIN_VERIFY_LOG: verifyLog,
      }
      return startBuiltServer(settingsFile, options.countVerifications ? { env: probe } : {})
    },
    async verifications() {
      const text = await readFile(verifyLog, 'utf8').catch(() => '')
      return text.split('\n').filter((line) => line !== '')
    },
    async audit() {
      const text = await readFile(auditFile, 'utf8').catch(() => '')
      return text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as AuditLine)
    },
  }
  await workspace.writeSettings()
  return workspace
}

export interface RawResponse {
  status: number
  /** Header names and values in the order received, names as sent. */
  rawHeaders: string[]
  headers: Record<string, string | string[] | undefined>
  body: string
}

export interface RawRequest {
  method?: string
  path: string
  headers?: Record<string, string | string[]>
  body?: string | Buffer
  /** The source address of the connection, e.g. '127.0.0.2' (all of 127.0.0.0/8 is loopback). */
  from?: string
}

/** One request over a new connection, from `from` when given. */
export function send(base: string, init: RawRequest): Promise<RawResponse> {
  const url = new URL(base)
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method: init.method ?? 'GET',
        path: `${url.pathname.replace(/\/$/, '')}${init.path}`,
        headers: { connection: 'close', ...init.headers },
        localAddress: init.from,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            rawHeaders: res.rawHeaders,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        )
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(init.body)
  })
}

export interface LoginFields {
  username: string
  password: string
  scope?: string
  /** Default `service-admin`; undefined leaves the field out. */
  client_id?: string | undefined
}

/** POST /auth/token as a form (default) or JSON, from `from`. */
export function login(base: string, fields: LoginFields, from?: string, as: 'form' | 'json' = 'form') {
  const all: Record<string, string> = {}
  for (const [name, value] of Object.entries({
    client_id: 'service-admin',
    grant_type: 'password',
    scope: '*',
    ...fields,
  })) {
    if (value !== undefined) all[name] = value
  }
  return send(base, {
    method: 'POST',
    path: '/auth/token',
    from,
    headers: {
      'content-type': as === 'json' ? 'application/json' : 'application/x-www-form-urlencoded',
    },
    body: as === 'json' ? JSON.stringify(all) : new URLSearchParams(all).toString(),
  })
}

/** The access token of a 200 login; throws with the response otherwise. */
export async function tokenOf(response: Promise<RawResponse> | RawResponse): Promise<string> {
  const res = await response
  if (res.status !== 200) throw new Error(`login answered ${res.status}: ${res.body}`)
  return (JSON.parse(res.body) as { access_token: string }).access_token
}

export interface RawConnection {
  socket: Socket
  /** Everything the server sent so far. */
  readonly received: string
  /** Milliseconds from connecting until the server closed the connection. */
  closed: Promise<number>
}

/** A bare TCP connection to the server, to speak HTTP as slowly or as badly as a test likes. */
export async function connectRaw(base: string, from?: string): Promise<RawConnection> {
  const url = new URL(base)
  const socket = connect({ host: url.hostname, port: Number(url.port), localAddress: from })
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  const opened = performance.now()
  let received = ''
  socket.setEncoding('utf8').on('data', (chunk: string) => {
    received += chunk
  })
  // A reset by the server counts as a close.
  socket.on('error', () => {})
  const closed = new Promise<number>((resolve) =>
    socket.once('close', () => resolve(performance.now() - opened)),
  )
  return {
    socket,
    get received() {
      return received
    },
    closed,
  }
}
