// Whether a real, stock Node-RED 4.1 instance is in touch, as the fleet shows it: one killed with
// SIGKILL while its poll is held is disconnected at once, one paused (SIGSTOP: no FIN, no exit) once
// its lease ends, one busy with a long npm install never; each change is one trail event; and the
// trail files a Node-RED's own audit events under the name the fleet lists it by. A short hold
// (5 s), so that a lease runs out within the test.
import { readFile } from 'node:fs/promises'
import * as path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BuiltServer, startBuiltServer, useServerFolder } from './cli-process.js'
import {
  eventually,
  type FleetInstance,
  fleetAdminAuth,
  fleetInstances,
  helperSettings,
  instanceToken,
  operatorToken,
  ownState,
  SECRET,
  trailOf,
  within,
} from './fleet-setup.js'
import { type LocalRegistry, startLocalRegistry } from './local-registry.js'
import { type NodeRedRun, startNodeRed, stopNodeReds } from './node-red-process.js'

const HOLD = 5
/** A lease: the hold and its 10 s of grace. */
const LEASE_MS = (HOLD + 10) * 1000
/** A module whose install runs longer than a lease (its postinstall script waits). */
const SLOW = {
  name: 'node-red-contrib-slow',
  version: '1.0.0',
  sets: { slow: ['slow'] },
  fields: { scripts: { postinstall: `node -e "setTimeout(() => {}, ${LEASE_MS + 5000})"` } },
}

const work = useServerFolder('fleet-presence')
let registry: LocalRegistry
let flowadmin: BuiltServer
let admin: string
/** edge-a has the instanceId option; edge-b keeps the id the helper made in its userDir. */
const runs = new Map<string, NodeRedRun>()
let edgeB: string

async function startInstance(name: string): Promise<NodeRedRun> {
  const run = await startNodeRed(
    path.join(work.dir, name),
    helperSettings(flowadmin.url, name === 'edge-a' ? name : null, true),
    { FLOWADMIN_SECRET: SECRET, npm_config_registry: registry.url },
  )
  runs.set(name, run)
  return run
}
const listed = () => fleetInstances(flowadmin.url, admin)
const find = (list: FleetInstance[], id: string) => list.find((instance) => instance.id === id)
const connected = async (id: string) => find(await listed(), id)?.connected
/** The instance's fleet.connected and fleet.disconnected events, oldest first. */
const presence = async (id: string) =>
  // Its presence events alone, all of them: an install's many events never push them off the page.
  (await trailOf(flowadmin.url, admin, `instance=fleet/${id}&event=fleet.&limit=1000`))
    .filter((entry) => entry.event === 'fleet.connected' || entry.event === 'fleet.disconnected')
    .map((entry) => entry.event)
    .reverse()
/** The events once there are `count` of them (the trail records them within a second or so). */
const presenceOf = (id: string, count: number) =>
  eventually(
    () => presence(id),
    (events) => events.length >= count,
  )

/**
 * Waits until the instance's current poll started 0.5 to 3 s ago: it is held now (the hold is 5 s,
 * and nothing changes meanwhile). `lastSeen` is a poll's start, or a report's arrival: one that is
 * its last report's is not taken.
 */
async function whileHeld(id: string): Promise<void> {
  const started = async () => {
    const res = await fetch(`${flowadmin.url}/fleet/instances`, {
      headers: { authorization: `Bearer ${admin}` },
    })
    const list = (await res.json()) as Array<{ id: string; lastSeen: string; lastReport: string | null }>
    const one = list.find((instance) => instance.id === id)
    return one === undefined || one.lastSeen === one.lastReport
      ? Number.POSITIVE_INFINITY
      : Date.now() - Date.parse(one.lastSeen)
  }
  expect(await eventually(started, (ago) => ago >= 500 && ago <= 3000)).toBeLessThanOrEqual(3000)
}

beforeAll(async () => {
  registry = await startLocalRegistry()
  await registry.publish(SLOW)
  const dir = path.join(work.dir, 'flowadmin')
  flowadmin = await startBuiltServer(path.join(dir, 'settings.json'), {
    settings: {
      storage: 'sqlite',
      userDir: dir,
      auditLog: 'off',
      fleet: { modules: true, hold: HOLD, wait: 0 },
      externalModules: { palette: { registry: registry.url } },
      adminAuth: await fleetAdminAuth(),
    },
  })
  admin = await operatorToken(flowadmin.url)
  await Promise.all(['edge-a', 'edge-b'].map(startInstance))
  // The helper makes edge-b's id once its Node-RED listens.
  const kept = () => readFile(path.join(work.dir, 'edge-b', '.flowadmin-instance'), 'utf8').catch(() => '')
  edgeB = (await eventually(kept, (text) => text.trim() !== '')).trim()
  await eventually(
    listed,
    (list) => list.length === 2 && list.every((i) => i.connected && i.lastReport !== null),
  )
}, 180_000)

afterAll(async () => {
  await stopNodeReds()
  await registry?.close()
})

describe('a real Node-RED instance in touch with the fleet, or not', () => {
  it('GET /audit?instance=<resource server>/<id>, as GET /fleet/instances lists it, returns that Node-RED’s own events', async () => {
    const one = find(await listed(), edgeB) as FleetInstance
    const run = runs.get('edge-b') as NodeRedRun
    const token = await instanceToken(run)
    const deploy = await fetch(`${run.url}/flows`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'Node-RED-Deployment-Type': 'full',
      },
      body: JSON.stringify([{ id: 'tab1', type: 'tab', label: 'Flow 1' }]),
    })
    expect(deploy.status).toBe(204)
    const instance = `${one.resourceServer}/${one.id}`
    const events = await eventually(
      () => trailOf(flowadmin.url, admin, `instance=${encodeURIComponent(instance)}&event=flows.set`),
      (found) => found.length === 1,
    )
    expect(events).toEqual([expect.objectContaining({ instance, actor: 'admin', event: 'flows.set' })])
    expect(await trailOf(flowadmin.url, admin, 'instance=fleet/edge-a&event=flows.set')).toEqual([])
    // The fleet's own events of it are under the same name.
    expect(await presenceOf(edgeB, 1)).toEqual(['fleet.connected'])
  })

  it('SIGKILL while its poll is held: connected false within 2 s, one fleet.disconnected; back, one fleet.connected', async () => {
    await whileHeld('edge-a')
    const run = runs.get('edge-a') as NodeRedRun
    run.child.kill('SIGKILL')
    await run.exited
    const killed = Date.now()
    expect(
      await within(
        2000,
        () => connected('edge-a'),
        (now) => now === false,
      ),
    ).toBe(false)
    expect(Date.now() - killed).toBeLessThan(2000)
    expect(await presenceOf('edge-a', 2)).toEqual(['fleet.connected', 'fleet.disconnected'])

    await startInstance('edge-a')
    expect(
      await eventually(
        () => connected('edge-a'),
        (now) => now === true,
      ),
    ).toBe(true)
    expect(await presenceOf('edge-a', 3)).toEqual([
      'fleet.connected',
      'fleet.disconnected',
      'fleet.connected',
    ])
  }, 120_000)

  it('paused (SIGSTOP: no FIN, no exit): connected false once its lease ends, at most the hold and 10 s on', async () => {
    const run = runs.get('edge-a') as NodeRedRun
    await whileHeld('edge-a')
    run.child.kill('SIGSTOP')
    const paused = Date.now()
    try {
      expect(
        await eventually(
          () => connected('edge-a'),
          (now) => now === false,
        ),
      ).toBe(false)
      // Its last poll started before the pause: the lease ends within a lease of the pause.
      expect(Date.now() - paused).toBeLessThan(LEASE_MS + 2000)
      expect(await presenceOf('edge-a', 4)).toEqual([
        'fleet.connected',
        'fleet.disconnected',
        'fleet.connected',
        'fleet.disconnected',
      ])
    } finally {
      run.child.kill('SIGCONT')
    }
    expect(
      await eventually(
        () => connected('edge-a'),
        (now) => now === true,
      ),
    ).toBe(true)
    expect((await presenceOf('edge-a', 5)).at(-1)).toBe('fleet.connected')
  }, 120_000)

  it('an install longer than a lease: both stay connected throughout, and say they are applying', async () => {
    const before = await Promise.all(['edge-a', edgeB].map(presence))
    const installed = await fetch(`${flowadmin.url}/nodes`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ module: SLOW.name }),
    })
    expect(installed.status).toBe(200)
    const tokens = await Promise.all(
      ['edge-a', 'edge-b'].map((name) => instanceToken(runs.get(name) as NodeRedRun)),
    )
    const seen: boolean[] = []
    const reasons = new Set<string>()
    const started = Date.now()
    const done = await eventually(
      async () => {
        const list = await listed()
        for (const instance of list) {
          seen.push(instance.connected)
          for (const entry of instance.drift) if (entry.module === SLOW.name) reasons.add(entry.reason)
        }
        return Promise.all(
          ['edge-a', 'edge-b'].map((name, index) =>
            ownState(runs.get(name) as NodeRedRun, tokens[index] as string, SLOW.name),
          ),
        )
      },
      (states) => states.every((state) => state === 'slow=true'),
    )
    expect(done).toEqual(['slow=true', 'slow=true'])
    // The install outlasted a lease, and no look at the fleet found either disconnected.
    expect(Date.now() - started).toBeGreaterThan(LEASE_MS)
    expect(seen.length).toBeGreaterThan(0)
    expect(seen.every(Boolean)).toBe(true)
    expect(reasons.has('applying')).toBe(true)
    expect(await Promise.all(['edge-a', edgeB].map(presence))).toEqual(before)
    expect(await eventually(listed, (list) => list.every((i) => i.drift.length === 0))).toMatchObject([
      { drift: [] },
      { drift: [] },
    ])
  }, 180_000)
})
