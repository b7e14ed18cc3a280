// Shared by the fleet mode tests: Node-RED instances whose @flowadmin/node-red helper has
// `fleet: true`, their userDirs, and what each instance's own admin API says of a module.
import { randomBytes } from 'node:crypto'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect } from 'vitest'
import { hashPassword } from '../src/adapters/argon2.js'
import { SHOUT, TOOLS, writeNodeModulePackage } from './ecosystem.js'
import type { NodeRedRun } from './node-red-process.js'
import { logIn } from './password-grant.js'

export const HELPER = fileURLToPath(new URL('../../node-red/index.js', import.meta.url))
/** The resource server the instances authenticate as. */
export const CLIENT_ID = 'fleet'
/** flowadmin's user `admin`'s password. */
export const PASSWORD = 'fleet admin password'
/** The resource server's secret, which the instances get as FLOWADMIN_SECRET. */
export const SECRET = randomBytes(24).toString('base64url')
/** Generous: several Node-REDs and npm on a busy shared machine. Not a timing assertion. */
export const PATIENCE_MS = 120_000

/**
 * A settings.js's parts for the helper in fleet mode; without an id, the helper keeps one. With
 * `audit`, Node-RED's audit events go to flowadmin's trail too (the helper's auditLogger), so the
 * agent knows who changed a module by hand.
 */
export function helperSettings(url: string, instanceId: string | null, audit = false) {
  return {
    preamble: `
const flowadmin = require(${JSON.stringify(HELPER)})
const options = {
  url: ${JSON.stringify(url)},
  clientId: ${JSON.stringify(CLIENT_ID)},
  clientSecret: process.env.FLOWADMIN_SECRET,
  fleet: true,${instanceId === null ? '' : `\n  instanceId: ${JSON.stringify(instanceId)},`}
}
`,
    adminAuth: 'flowadmin.adminAuth(options)',
    httpAdminMiddleware: 'flowadmin.httpAdminMiddleware(options)',
    ...(audit && {
      logging: `{ console: { level: 'info', metrics: false, audit: false }, flowadmin: flowadmin.auditLogger(options) }`,
    }),
  }
}

/** flowadmin's adminAuth: `admin` with PASSWORD and every permission; the resource server with SECRET. */
export async function fleetAdminAuth() {
  return {
    type: 'credentials',
    users: [{ username: 'admin', password: await hashPassword(PASSWORD), permissions: '*' }],
    resourceServers: [{ id: CLIENT_ID, secret: await hashPassword(SECRET), fleet: true }],
  }
}

/** SHOUT and TOOLS in `userDir`'s node_modules. */
export async function writeFleetModules(userDir: string): Promise<void> {
  const modules: Array<[{ name: string; version: string }, Record<string, string[]>]> = [
    [SHOUT, { shout: ['shout'] }],
    [TOOLS, { upper: ['upper-case'], lower: ['lower-case', 'lower-all'] }],
  ]
  for (const [module, sets] of modules) {
    await writeNodeModulePackage(path.join(userDir, 'node_modules', ...module.name.split('/')), module, sets)
  }
}

/**
 * A token from the instance's own login (the helper asks flowadmin). A busy machine may shed a
 * login (Node-RED then answers 403): tried again a few times.
 */
export async function instanceToken(run: NodeRedRun): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(`${run.url}/auth/token`, {
      method: 'POST',
      body: new URLSearchParams({
        client_id: 'node-red-admin',
        grant_type: 'password',
        scope: '*',
        username: 'admin',
        password: PASSWORD,
      }),
    })
    if (res.status === 200 || attempt === 10) {
      expect(res.status).toBe(200)
      return ((await res.json()) as { access_token: string }).access_token
    }
    await new Promise((resolve) => setTimeout(resolve, 1000))
  }
}

/** An instance's own view of a module through its admin API: `set=enabled` of each node set, or the status. */
export async function ownState(run: NodeRedRun, token: string, module: string): Promise<string> {
  const res = await fetch(`${run.url}/nodes/${module}`, {
    headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
  })
  if (res.status !== 200) return String(res.status)
  const body = (await res.json()) as { nodes: Array<{ name: string; enabled: boolean }> }
  return body.nodes.map((set) => `${set.name}=${set.enabled}`).join(' ')
}

/** An instance's own view of a module's version (GET /nodes/:module): `version`, `pending_version`. */
export async function ownVersion(
  run: NodeRedRun,
  token: string,
  module: string,
): Promise<{ version?: string; pending_version?: string } | number> {
  const res = await fetch(`${run.url}/nodes/${module}`, {
    headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
  })
  if (res.status !== 200) return res.status
  const { version, pending_version } = (await res.json()) as { version?: string; pending_version?: string }
  return { version, ...(pending_version !== undefined && { pending_version }) }
}

/** Polls `read` until `done` holds of its value, up to PATIENCE_MS; returns the last value. */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + PATIENCE_MS
  let value = await read()
  while (!done(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200))
    value = await read()
  }
  return value
}

/** A token for flowadmin's own API as `admin` (the console's login); a busy machine may shed one. */
export async function operatorToken(url: string): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const res = await logIn(url, PASSWORD)
    if (res.status === 200 || attempt === 10) {
      expect(res.status).toBe(200)
      return ((await res.json()) as { access_token: string }).access_token
    }
    await new Promise((resolve) => setTimeout(resolve, 1000))
  }
}

export interface TrailEvent {
  instance: string
  actor: string | null
  event: string
  details: Record<string, unknown>
}

/** GET /audit?<query> at flowadmin, as an operator. */
export async function trailOf(url: string, token: string, query: string): Promise<TrailEvent[]> {
  const res = await fetch(`${url}/audit?${query}`, { headers: { authorization: `Bearer ${token}` } })
  expect(res.status).toBe(200)
  return ((await res.json()) as { events: TrailEvent[] }).events
}

export interface FleetInstance {
  id: string
  resourceServer: string
  connected: boolean
  applied: string | null
  lastSeen: string
  lastReport: string | null
  drift: Array<{ module: string; reason: string; message?: string; by?: string | null; at?: number }>
}

/** GET /fleet/instances at flowadmin, as an operator. */
export async function fleetInstances(url: string, token: string): Promise<FleetInstance[]> {
  const res = await fetch(`${url}/fleet/instances`, { headers: { authorization: `Bearer ${token}` } })
  expect(res.status).toBe(200)
  return (await res.json()) as FleetInstance[]
}

/** Polls `read` until `done` holds of its value, up to `ms`; returns the last value (the test then asserts it). */
export async function within<T>(ms: number, read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + ms
  let value = await read()
  while (!done(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    value = await read()
  }
  return value
}

/** A call to flowadmin's API with `token`, a JSON body when given: the response. */
export function callFlowadmin(url: string, token: string, method: string, route: string, body?: unknown) {
  return fetch(`${url}${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  })
}

/** The desired state's version, as an instance's poll (with the shared secret) is answered. */
export async function desiredVersionAt(url: string, instance: string): Promise<string> {
  const basic = `Basic ${Buffer.from(`${CLIENT_ID}:${SECRET}`).toString('base64')}`
  const res = await fetch(`${url}/fleet/instances/${instance}/desired`, { headers: { authorization: basic } })
  expect(res.status).toBe(200)
  return ((await res.json()) as { version: string }).version
}
