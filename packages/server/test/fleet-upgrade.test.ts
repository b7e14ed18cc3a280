// Fleet mode's versions and restarts with two real, stock Node-RED 4.1 instances: an upgrade made
// at flowadmin reaches each (its own admin API shows it waiting for a restart, the fleet says
// `restart_needed`, `fleet.applied` only once it runs it), a version changed by hand at an instance
// is drift, a change flowadmin acknowledged survives its SIGKILL, and `prune` removes what
// flowadmin did not install. One flowadmin (SQLite) and one local npm registry for the file.
import { readFile } from 'node:fs/promises'
import * as path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BuiltServer, startBuiltServer, useServerFolder, writeSettings } from './cli-process.js'
import {
  callFlowadmin,
  desiredVersionAt,
  eventually,
  fleetAdminAuth,
  fleetInstances,
  helperSettings,
  instanceToken,
  operatorToken,
  ownState,
  ownVersion,
  SECRET,
  trailOf,
  within,
} from './fleet-setup.js'
import { type LocalRegistry, startLocalRegistry } from './local-registry.js'
import { type NodeRedRun, startNodeRed, stopNodeReds } from './node-red-process.js'

const WAVE = { name: 'node-red-contrib-wave', sets: { wave: ['wave'] } }
/** A module an instance installs by hand from the registry (so its package.json lists it). */
const HAND = { name: 'node-red-contrib-hand', version: '1.0.0', sets: { hand: ['hand'] } }
const NAMES = ['edge-a', 'edge-b'] as const
type Name = (typeof NAMES)[number]

const work = useServerFolder('fleet-upgrade')
let registry: LocalRegistry
let flowadmin: BuiltServer
let port: string
let settingsFile: string
let settings: Record<string, unknown>
let admin: string
const instances = new Map<Name, NodeRedRun>()
const tokens = new Map<Name, string>()

async function startInstance(name: Name): Promise<void> {
  const run = await startNodeRed(path.join(work.dir, name), helperSettings(flowadmin.url, name, true), {
    FLOWADMIN_SECRET: SECRET,
    npm_config_registry: registry.url,
  })
  instances.set(name, run)
  tokens.set(name, await instanceToken(run))
}
/** Stops the instance's Node-RED and starts it again on the same userDir (a new port). */
async function restart(name: Name): Promise<void> {
  await (instances.get(name) as NodeRedRun).stop()
  await startInstance(name)
}
const run = (name: Name) => instances.get(name) as NodeRedRun
const token = (name: Name) => tokens.get(name) as string
const versions = (module: string) => () =>
  Promise.all(NAMES.map((name) => ownVersion(run(name), token(name), module)))
const states = (module: string) => () =>
  Promise.all(NAMES.map((name) => ownState(run(name), token(name), module)))

const call = (method: string, route: string, body?: unknown) =>
  callFlowadmin(flowadmin.url, admin, method, route, body)
/** The desired state's version, as an instance's poll is answered. */
const desiredVersion = () => desiredVersionAt(flowadmin.url, 'edge-a')
const instancesNow = () => fleetInstances(flowadmin.url, admin)
const driftOf = async (name: Name) => (await instancesNow()).find((i) => i.id === name)?.drift
const applied = async (version: string) =>
  (await trailOf(flowadmin.url, admin, 'event=fleet.applied'))
    .filter((entry) => entry.details.version === version)
    .map((entry) => entry.instance)
    .sort()

beforeAll(async () => {
  registry = await startLocalRegistry()
  await registry.publish({ ...WAVE, version: '1.0.0' })
  await registry.publish(HAND)
  const dir = path.join(work.dir, 'flowadmin')
  settingsFile = path.join(dir, 'settings.json')
  settings = {
    storage: 'sqlite',
    userDir: dir,
    auditLog: 'off',
    // Answers of changes at once (all pending): the SIGKILL test needs the acknowledgement only.
    fleet: { modules: true, hold: 5, wait: 0 },
    externalModules: { palette: { registry: registry.url } },
    adminAuth: await fleetAdminAuth(),
  }
  flowadmin = await startBuiltServer(settingsFile, { settings })
  port = new URL(flowadmin.url).port
  admin = await operatorToken(flowadmin.url)
  await Promise.all(NAMES.map(startInstance))
}, 180_000)

afterAll(async () => {
  await stopNodeReds()
  await registry?.close()
})

describe('versions in a fleet of real Node-RED instances', () => {
  it('an upgrade at flowadmin reaches every instance: pending_version there, restart_needed here, applied once it runs', async () => {
    expect((await call('POST', '/nodes', { module: WAVE.name, version: '1.0.0' })).status).toBe(200)
    expect(await eventually(versions(WAVE.name), (all) => all.every((v) => typeof v === 'object'))).toEqual([
      { version: '1.0.0' },
      { version: '1.0.0' },
    ])
    const first = await desiredVersion()
    expect(
      await eventually(
        () => applied(first),
        (ids) => ids.length === 2,
      ),
    ).toEqual(['fleet/edge-a', 'fleet/edge-b'])

    await registry.publish({ ...WAVE, version: '2.0.0' })
    const upgraded = await call('POST', '/nodes', { module: WAVE.name, version: '2.0.0' })
    expect(upgraded.status).toBe(200)
    const second = await desiredVersion()
    expect(second).not.toBe(first)
    // Stock Node-RED keeps 1.0.0 loaded and has 2.0.0 installed for its next start.
    expect(
      await eventually(versions(WAVE.name), (all) =>
        all.every((v) => typeof v === 'object' && v.pending_version === '2.0.0'),
      ),
    ).toEqual([
      { version: '1.0.0', pending_version: '2.0.0' },
      { version: '1.0.0', pending_version: '2.0.0' },
    ])
    const restartNeeded = {
      module: WAVE.name,
      reason: 'restart_needed',
      message: 'runs 1.0.0, 2.0.0 is installed and loads when Node-RED restarts',
    }
    for (const name of NAMES) {
      expect(
        await eventually(
          () => driftOf(name),
          // Past `pending` and `applying`, which a busy machine shows for a while.
          (drift) => drift?.length === 1 && drift[0]?.reason === 'restart_needed',
        ),
      ).toEqual([restartNeeded])
    }
    const told = await eventually(
      () => trailOf(flowadmin.url, admin, 'event=fleet.restart_needed'),
      (events) => events.length === 2,
    )
    expect(told.map((entry) => entry.instance).sort()).toEqual(['fleet/edge-a', 'fleet/edge-b'])
    // Each finished working on the new version, and none runs it yet: no fleet.applied for it.
    const listed = await instancesNow()
    expect(listed.map((instance) => instance.applied)).toEqual([second, second])
    expect(await applied(second)).toEqual([])

    await restart('edge-a')
    expect(
      await eventually(
        () => ownVersion(run('edge-a'), token('edge-a'), WAVE.name),
        (v) => typeof v === 'object' && v.version === '2.0.0',
      ),
    ).toEqual({ version: '2.0.0' })
    expect(
      await eventually(
        () => driftOf('edge-a'),
        (drift) => drift?.length === 0,
      ),
    ).toEqual([])
    expect(
      await eventually(
        () => applied(second),
        (ids) => ids.length === 1,
      ),
    ).toEqual(['fleet/edge-a'])
    expect(await driftOf('edge-b')).toEqual([restartNeeded])

    await restart('edge-b')
    expect(
      await eventually(
        () => applied(second),
        (ids) => ids.length === 2,
      ),
    ).toEqual(['fleet/edge-a', 'fleet/edge-b'])
    expect(await versions(WAVE.name)()).toEqual([{ version: '2.0.0' }, { version: '2.0.0' }])
  }, 300_000)

  it('a version changed by hand at an instance is version_mismatch, naming who, within 2 s; the others keep theirs', async () => {
    const hand = await fetch(`${run('edge-a').url}/nodes`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token('edge-a')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ module: WAVE.name, version: '1.0.0' }),
    })
    expect(hand.status).toBe(200)
    const changed = Date.now()
    expect(await ownVersion(run('edge-a'), token('edge-a'), WAVE.name)).toEqual({
      version: '2.0.0',
      pending_version: '1.0.0',
    })
    const drift = await within(
      2000,
      () => driftOf('edge-a'),
      (entries) => entries?.length === 1,
    )
    expect(Date.now() - changed).toBeLessThan(2000)
    expect(drift).toEqual([
      {
        module: WAVE.name,
        reason: 'version_mismatch',
        message: 'runs 2.0.0, desired 2.0.0; 1.0.0 is installed and loads when Node-RED restarts',
        by: 'admin',
        at: expect.any(Number),
      },
    ])
    const events = await eventually(
      () => trailOf(flowadmin.url, admin, 'instance=fleet/edge-a&event=fleet.changed_by_hand'),
      (found) => found.length > 0,
    )
    expect(events.map((entry) => entry.details)).toEqual([
      expect.objectContaining({ module: WAVE.name, action: 'upgrade', version: '1.0.0', by: 'admin' }),
    ])
    expect(
      await eventually(
        () => trailOf(flowadmin.url, admin, 'instance=fleet/edge-a&event=fleet.version_mismatch'),
        (found) => found.length > 0,
      ),
    ).toHaveLength(1)
    expect(await driftOf('edge-b')).toEqual([])

    // Removed by hand there: its agent installs the desired version again, which loads at once.
    const removed = await fetch(`${run('edge-a').url}/nodes/${WAVE.name}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token('edge-a')}` },
    })
    expect(removed.status).toBe(204)
    expect(
      await eventually(
        () => ownVersion(run('edge-a'), token('edge-a'), WAVE.name),
        (v) => typeof v === 'object' && v.version === '2.0.0' && v.pending_version === undefined,
      ),
    ).toEqual({ version: '2.0.0' })
    expect(
      await eventually(
        () => driftOf('edge-a'),
        (entries) => entries?.length === 0,
      ),
    ).toEqual([])
    const reverted = await eventually(
      () => trailOf(flowadmin.url, admin, 'instance=fleet/edge-a&event=fleet.reverted'),
      (found) => found.length > 0,
    )
    expect(reverted.map((entry) => entry.details)).toContainEqual(
      expect.objectContaining({ module: WAVE.name, action: 'install' }),
    )
  }, 120_000)

  it('flowadmin killed with SIGKILL right after it acknowledged a change: every instance converges once it is back', async () => {
    // The instances are paused: none can see the change before flowadmin dies.
    for (const name of NAMES) run(name).child.kill('SIGSTOP')
    try {
      const res = await call('PUT', `/nodes/${WAVE.name}`, { enabled: false })
      expect(res.status).toBe(200)
      const answer = (await res.json()) as { nodes: Array<{ enabled: boolean }> }
      expect(answer.nodes.map((set) => set.enabled)).toEqual([false])
      flowadmin.run.child.kill('SIGKILL')
      await flowadmin.run.exited
    } finally {
      for (const name of NAMES) run(name).child.kill('SIGCONT')
    }
    flowadmin = await startBuiltServer(settingsFile, { port })
    admin = await operatorToken(flowadmin.url)
    expect(await eventually(states(WAVE.name), (all) => all.every((s) => s === 'wave=false'))).toEqual([
      'wave=false',
      'wave=false',
    ])
    const version = await desiredVersion()
    expect(
      await eventually(instancesNow, (list) =>
        list.every((i) => i.applied === version && i.drift.every((d) => d.module !== WAVE.name)),
      ),
    ).toMatchObject([
      { id: 'edge-a', applied: version },
      { id: 'edge-b', applied: version },
    ])
  }, 300_000)

  it('prune: a flowadmin started with it removes from every instance what flowadmin did not install', async () => {
    // edge-b installs a module by hand, through its own admin API (so its package.json lists it).
    const hand = await fetch(`${run('edge-b').url}/nodes`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token('edge-b')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ module: HAND.name }),
    })
    expect(hand.status).toBe(200)
    expect(
      await eventually(
        () => driftOf('edge-b'),
        (d) => d?.some((e) => e.module === HAND.name) === true,
      ),
    ).toContainEqual(expect.objectContaining({ module: HAND.name, reason: 'installed_by_hand', by: 'admin' }))
    expect(await flowadmin.stop()).toBe(0)
    await writeSettings(settingsFile, {
      ...settings,
      fleet: { modules: true, hold: 5, wait: 0, prune: true },
    })
    flowadmin = await startBuiltServer(settingsFile, { port })
    expect(flowadmin.run.stdout + flowadmin.run.stderr).toContain('fleet.prune is true now')
    admin = await operatorToken(flowadmin.url)
    expect(
      await eventually(
        () => ownState(run('edge-b'), token('edge-b'), HAND.name),
        (status) => status === '404',
      ),
    ).toBe('404')
    // What flowadmin installed stays, as it was decided.
    expect(await states(WAVE.name)()).toEqual(['wave=false', 'wave=false'])
    // Node-RED unloads it first, then npm removes it from the userDir and its package.json.
    const dependencies = async () =>
      Object.keys(
        JSON.parse(await readFile(path.join(work.dir, 'edge-b', 'package.json'), 'utf8')).dependencies,
      )
    expect(await eventually(dependencies, (names) => !names.includes(HAND.name))).toEqual([WAVE.name])
    const version = await desiredVersion()
    expect(
      await eventually(instancesNow, (list) =>
        list.every((i) => i.applied === version && i.drift.length === 0),
      ),
    ).toMatchObject([
      { id: 'edge-a', drift: [] },
      { id: 'edge-b', drift: [] },
    ])
  }, 300_000)
})
