// Fleet mode on two built flowadmin instances sharing one PostgreSQL database: a real Node-RED
// connected to one of them applies a change made at the other, and both list it; an instance
// (here a lean client speaking the protocol) is connected and disconnected once, seen from both.
import * as path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { useTestDatabase } from '../../adapter-postgres/test/pg-server.js'
import { type BuiltServer, startBuiltServer, useServerFolder } from './cli-process.js'
import { SHOUT } from './ecosystem.js'
import {
  CLIENT_ID,
  eventually,
  fleetAdminAuth,
  helperSettings,
  instanceToken,
  ownState,
  PASSWORD,
  SECRET,
  writeFleetModules,
} from './fleet-setup.js'
import { type NodeRedRun, startNodeRed, stopNodeReds } from './node-red-process.js'
import { logIn } from './password-grant.js'

const database = useTestDatabase()
/** Seconds a poll is held: short, so that a lease runs out within the test. */
const HOLD = 5
const basic = `Basic ${Buffer.from(`${CLIENT_ID}:${SECRET}`).toString('base64')}`
const work = useServerFolder('fleet-pg')
const urls: string[] = []
const servers: BuiltServer[] = []
let nodeRed: NodeRedRun
let settings: Record<string, unknown>

beforeAll(async () => {
  settings = {
    storage: 'postgres',
    postgres: { url: database.current().url, pool: 4 },
    auditLog: 'off',
    fleet: { modules: true, hold: HOLD, groups: { edges: ['edge'] } },
    adminAuth: await fleetAdminAuth(),
  }
  for (const name of ['flowadmin-a', 'flowadmin-b']) {
    const dir = path.join(work.dir, name)
    const server = await startBuiltServer(path.join(dir, 'settings.json'), {
      settings: { ...settings, userDir: dir },
    })
    servers.push(server)
    urls.push(server.url)
  }
  const userDir = path.join(work.dir, 'edge')
  await writeFleetModules(userDir)
  // The instance is connected to flowadmin B only.
  nodeRed = await startNodeRed(userDir, helperSettings(urls[1] as string, 'edge'), {
    FLOWADMIN_SECRET: SECRET,
  })
}, 180_000)

afterAll(stopNodeReds)

async function adminToken(url: string): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const res = await logIn(url, PASSWORD)
    if (res.status === 200 || attempt === 10) {
      expect(res.status).toBe(200)
      return ((await res.json()) as { access_token: string }).access_token
    }
    await new Promise((resolve) => setTimeout(resolve, 1000))
  }
}

type Listed = Array<{ id: string; connected: boolean; lastReport: string | null }>
const listAt = async (url: string, token: string) =>
  (await (
    await fetch(`${url}/fleet/instances`, { headers: { authorization: `Bearer ${token}` } })
  ).json()) as Listed
/** A lean instance's poll at `url`: the first (answered at once), then one held with that ETag. */
async function poll(url: string, id: string, signal?: AbortSignal) {
  const first = await fetch(`${url}/fleet/instances/${id}/desired`, { headers: { authorization: basic } })
  expect(first.status).toBe(200)
  const etag = first.headers.get('etag') as string
  return fetch(`${url}/fleet/instances/${id}/desired`, {
    headers: { authorization: basic, 'if-none-match': etag, prefer: 'wait=60' },
    ...(signal !== undefined && { signal }),
  })
}
const connectedAt = async (url: string, token: string, id: string) =>
  (await listAt(url, token)).find((instance) => instance.id === id)?.connected

describe('fleet mode on two flowadmin instances sharing PostgreSQL', () => {
  it('a change made at one reaches the Node-RED connected to the other, and both list it', async () => {
    const [urlA, urlB] = urls as [string, string]
    const tokenA = await adminToken(urlA)
    const listed = await eventually(
      () => listAt(urlA, tokenA),
      (list) => list.some((instance) => instance.id === 'edge' && instance.lastReport !== null),
    )
    expect(listed.map((instance) => instance.id)).toEqual(['edge'])
    const own = await instanceToken(nodeRed)
    expect(await ownState(nodeRed, own, SHOUT.name)).toBe('shout=true')

    const off = await fetch(`${urlA}/nodes/${SHOUT.name}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${tokenA}`, 'content-type': 'application/json' },
      body: JSON.stringify({ enabled: false }),
    })
    expect(off.status).toBe(200)
    expect(
      await eventually(
        () => ownState(nodeRed, own, SHOUT.name),
        (s) => s === 'shout=false',
      ),
    ).toBe('shout=false')
    // B answers with the desired state A wrote, and the instance's own state beside it.
    const tokenB = await adminToken(urlB)
    const atB = (await (
      await fetch(`${urlB}/nodes/${SHOUT.name}`, { headers: { authorization: `Bearer ${tokenB}` } })
    ).json()) as { nodes: Array<{ enabled: boolean }>; instances: Array<{ id: string; enabled: object }> }
    expect(atB.nodes.map((set) => set.enabled)).toEqual([false])
    const settled = await eventually(
      async () =>
        (await (
          await fetch(`${urlB}/nodes/${SHOUT.name}`, { headers: { authorization: `Bearer ${tokenB}` } })
        ).json()) as { instances: Array<{ id: string; enabled: object; drift?: unknown }> },
      (view) => view.instances[0]?.drift === undefined,
    )
    expect(settled.instances).toEqual([
      { id: 'edge', connected: true, version: SHOUT.version, enabled: { shout: false } },
    ])
  }, 300_000)

  it('a snapshot rolled out at one is deployed by the Node-RED connected to the other', async () => {
    const [urlA, urlB] = urls as [string, string]
    const [tokenA, tokenB] = [await adminToken(urlA), await adminToken(urlB)]
    const flows = [
      { id: 'tab-r', type: 'tab', label: 'Rolled out' },
      { id: 'tick-r', type: 'inject', z: 'tab-r', name: 'from A', wires: [] },
    ]
    const at = (url: string, token: string, method: string, route: string, body?: unknown) =>
      fetch(`${url}${route}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      })
    const made = await at(urlA, tokenA, 'POST', '/fleet/snapshots', { name: 'edges', flows })
    expect(made.status).toBe(201)
    const snapshot = ((await made.json()) as { id: string }).id
    const started = await at(urlA, tokenA, 'POST', '/fleet/groups/edges/rollouts', { snapshot })
    expect(started.status).toBe(201)
    const rollout = (await started.json()) as { id: string; instances: string[] }
    expect(rollout.instances).toEqual(['edge'])
    const seenAtB = await eventually(
      async () =>
        (await (await at(urlB, tokenB, 'GET', `/fleet/rollouts/${rollout.id}`)).json()) as { state: string },
      (view) => view.state !== 'pending' && view.state !== 'running',
    )
    expect(seenAtB.state).toBe('succeeded')
    const own = await instanceToken(nodeRed)
    const running = (await (
      await fetch(`${nodeRed.url}/flows`, { headers: { authorization: `Bearer ${own}` } })
    ).json()) as Array<{ id: string }>
    expect(running).toEqual(flows)
  }, 120_000)

  it('a poll whose connection closes disconnects its instance at once, at both; each change is one event', async () => {
    const [urlA, urlB] = urls as [string, string]
    const [tokenA, tokenB] = [await adminToken(urlA), await adminToken(urlB)]
    const gone = new AbortController()
    const held = poll(urlA, 'lean-1', gone.signal).catch(() => null)
    expect(
      await eventually(
        () => connectedAt(urlB, tokenB, 'lean-1'),
        (connected) => connected === true,
      ),
    ).toBe(true)
    gone.abort()
    await held
    const cut = Date.now()
    expect(
      await eventually(
        () => connectedAt(urlB, tokenB, 'lean-1'),
        (connected) => connected === false,
      ),
    ).toBe(false)
    expect(Date.now() - cut).toBeLessThan(1000)
    // Both flowadmin instances expire leases each second: the trail holds each change once.
    await new Promise((resolve) => setTimeout(resolve, 2500))
    const trail = async () =>
      (
        (await (
          await fetch(`${urlA}/audit?instance=${CLIENT_ID}/lean-1`, {
            headers: { authorization: `Bearer ${tokenA}` },
          })
        ).json()) as { events: Array<{ event: string }> }
      ).events.map((entry) => entry.event)
    expect((await trail()).sort()).toEqual(['fleet.connected', 'fleet.disconnected'])
  }, 120_000)

  it('an instance that stops polling without closing its connection is disconnected once its lease ends', async () => {
    const [urlA, urlB] = urls as [string, string]
    const tokenB = await adminToken(urlB)
    const started = Date.now()
    // Held for the hold time, answered 304; then the instance asks no more (paused, or gone silently).
    const held = await poll(urlA, 'lean-2')
    expect(held.status).toBe(304)
    expect(await connectedAt(urlB, tokenB, 'lean-2')).toBe(true)
    expect(
      await eventually(
        () => connectedAt(urlB, tokenB, 'lean-2'),
        (connected) => connected === false,
      ),
    ).toBe(false)
    const after = (Date.now() - started) / 1000
    expect(after).toBeGreaterThan(HOLD + 10 - 1)
    expect(after).toBeLessThan(HOLD + 10 + 2)
  }, 120_000)

  it('a flowadmin started with another prune writes it to the store and says so; the others warn, and their metric says they differ', async () => {
    // No Node-RED may prune its modules meanwhile.
    await stopNodeReds()
    const [urlA] = urls as [string]
    const dir = path.join(work.dir, 'flowadmin-c')
    const fleet = { modules: true, hold: HOLD, prune: true }
    const c = await startBuiltServer(path.join(dir, 'settings.json'), {
      settings: { ...settings, userDir: dir, fleet },
    })
    servers.push(c)
    const output = (server: BuiltServer) => server.run.stdout + server.run.stderr
    expect(output(c)).toContain(
      'fleet.prune is true now for every flowadmin sharing this store (it was false)',
    )
    const tokenA = await adminToken(urlA)
    const agree = async () =>
      /flowadmin_fleet_settings_agree (\d)/.exec(
        await (await fetch(`${urlA}/metrics`, { headers: { authorization: `Bearer ${tokenA}` } })).text(),
      )?.[1]
    expect(await eventually(agree, (value) => value === '0')).toBe('0')
    expect(
      await eventually(
        async () => output(servers[0] as BuiltServer),
        (text) => text.includes('fleet.prune in the store'),
      ),
    ).toContain('fleet.prune in the store is not this flowadmin’s setting')
    const desired = (await (
      await fetch(`${urlA}/fleet/instances/lean-3/desired`, { headers: { authorization: basic } })
    ).json()) as { prune: boolean }
    expect(desired.prune).toBe(true)
    const trail = (await (
      await fetch(`${urlA}/audit?event=fleet.settings_changed`, {
        headers: { authorization: `Bearer ${tokenA}` },
      })
    ).json()) as { events: Array<{ details: object }> }
    expect(trail.events.map((entry) => entry.details)).toEqual([{ setting: 'prune', from: false, to: true }])
  }, 120_000)
})
