// Fleet mode end to end: the built flowadmin with `"fleet": {"modules": true}` and three real,
// stock Node-RED instances whose @flowadmin/node-red helper has `fleet: true`. node-red-admin
// pointed at flowadmin changes the modules of every instance; each instance's own admin API shows
// it. One setup for the whole file: three Node-REDs cost a shared machine a lot.
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import * as path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BuiltServer, startBuiltServer, useServerFolder } from './cli-process.js'
import { FLOWS, killClients, lines, nodeRedAdmin, SHOUT, TOOLS, writeNodeModulePackage } from './ecosystem.js'
import {
  eventually,
  fleetAdminAuth,
  helperSettings,
  instanceToken,
  ownState,
  PASSWORD,
  SECRET,
  writeFleetModules,
} from './fleet-setup.js'
import { type LocalRegistry, startLocalRegistry } from './local-registry.js'
import { type NodeRedRun, startNodeRed, stopNodeReds } from './node-red-process.js'

/** A module installed by hand on one instance. */
const HAND = { name: 'node-red-contrib-by-hand', version: '1.0.0' }
/** A module in the local registry, installed through flowadmin. */
const WAVE = { name: 'node-red-contrib-wave', version: '1.0.0', sets: { wave: ['wave'] } }

const work = useServerFolder('fleet-modules')
let registry: LocalRegistry
let flowadmin: BuiltServer
let home: string
let settingsFile: string
const instances = new Map<string, NodeRedRun>()
/** Each instance's own admin token (from its own login, through the helper). */
const tokens = new Map<string, string>()

/** The userDirs: every instance has SHOUT and TOOLS; edge-c's flows use TOOLS's `lower-case`. */
async function prepareUserDir(name: string) {
  const userDir = path.join(work.dir, name)
  await writeFleetModules(userDir)
  await writeFile(
    path.join(userDir, 'flows.json'),
    JSON.stringify(name === 'edge-c' ? FLOWS : [{ id: 'tab1', type: 'tab', label: 'Flow 1' }]),
  )
  return userDir
}

/** edge-c keeps no instanceId option: its id is the one the helper keeps in its userDir. */
async function startInstance(name: string): Promise<NodeRedRun> {
  const run = await startNodeRed(
    path.join(work.dir, name),
    helperSettings(flowadmin.url, name === 'edge-c' ? null : name),
    { FLOWADMIN_SECRET: SECRET, npm_config_registry: registry.url },
  )
  instances.set(name, run)
  return run
}

/** An instance's own view of a module: `set=enabled` of each node set, or the status. */
async function ownStateOf(name: string, module: string): Promise<string> {
  const run = instances.get(name) as NodeRedRun
  let token = tokens.get(name)
  if (token === undefined) {
    token = await instanceToken(run)
    tokens.set(name, token)
  }
  return ownState(run, token, module)
}

let adminToken: string
async function flowadminGet(pathname: string) {
  const res = await fetch(`${flowadmin.url}${pathname}`, {
    headers: { authorization: `Bearer ${adminToken}` },
  })
  return { status: res.status, body: (await res.json()) as unknown }
}

interface Instance {
  id: string
  connected: boolean
  nodeRedVersion: string | null
  lastReport: string | null
  drift: Array<{ module: string; reason: string; message?: string }>
}
const fleetInstances = async () => (await flowadminGet('/fleet/instances')).body as Instance[]

const everyState = (module: string) => async () =>
  Promise.all(['edge-a', 'edge-b', 'edge-c'].map((name) => ownStateOf(name, module)))
const admin = async (...args: string[]) => {
  const { code, stdout, stderr } = await nodeRedAdmin(home, args)
  return { code, stdout: lines(stdout), stderr: lines(stderr) }
}

beforeAll(async () => {
  registry = await startLocalRegistry()
  await registry.publish(WAVE)
  home = path.join(work.dir, 'home')
  await mkdir(home)
  const flowadminDir = path.join(work.dir, 'flowadmin')
  settingsFile = path.join(flowadminDir, 'settings.json')
  const settings = {
    storage: 'sqlite',
    userDir: flowadminDir,
    auditLog: 'stdout',
    fleet: { modules: true },
    externalModules: { palette: { registry: registry.url } },
    adminAuth: { ...(await fleetAdminAuth()), clients: ['node-red-admin'] },
  }
  flowadmin = await startBuiltServer(settingsFile, { settings })
  for (const name of ['edge-a', 'edge-b', 'edge-c']) await prepareUserDir(name)
  await Promise.all(['edge-a', 'edge-b', 'edge-c'].map(startInstance))
  await nodeRedAdmin(home, ['target', flowadmin.url])
  // The instances' first calls verify their secret too: a busy machine may shed a login (503).
  let login = await nodeRedAdmin(home, ['login'], ['admin', PASSWORD])
  for (let attempt = 0; login.code !== 0 && attempt < 10; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 2000))
    login = await nodeRedAdmin(home, ['login'], ['admin', PASSWORD])
  }
  expect(login, login.stdout + login.stderr).toMatchObject({ code: 0 })
  adminToken = JSON.parse(await readFile(path.join(home, '.node-red', '.cli-config.json'), 'utf8')).tokens
    .access_token
}, 180_000)

afterAll(async () => {
  await stopNodeReds()
  await killClients()
  await registry?.close()
})

describe('a fleet of three Node-RED instances governed by flowadmin', () => {
  it('lists the instances that joined, each reachable, with its Node-RED version; the modules no one decided yet', async () => {
    const edgeC = (await readFile(path.join(work.dir, 'edge-c', '.flowadmin-instance'), 'utf8')).trim()
    const listed = await eventually(
      fleetInstances,
      (list) => list.length === 3 && list.every((i) => i.lastReport && i.connected),
    )
    expect(listed.map((instance) => instance.id).sort()).toEqual(['edge-a', 'edge-b', edgeC].sort())
    for (const instance of listed) {
      expect(instance.connected).toBe(true)
      expect(instance.nodeRedVersion).toMatch(/^4\.1\./)
      // No operator decided them: on each instance they are there, not installed through flowadmin.
      expect(instance.drift.map((entry) => `${entry.module} ${entry.reason}`).sort()).toEqual([
        `${TOOLS.name} installed_by_hand`,
        `${SHOUT.name} installed_by_hand`,
      ])
    }
    // flowadmin's GET /nodes lists what the instances report, undecided, with each instance's own state.
    const sets = (await flowadminGet('/nodes')).body as Array<{
      id: string
      enabled: boolean
      decided: boolean
      instances: unknown[]
    }>
    expect(sets.map((set) => set.id)).toEqual([
      `${TOOLS.name}/lower`,
      `${TOOLS.name}/upper`,
      `${SHOUT.name}/shout`,
    ])
    expect(sets.every((set) => set.enabled && !set.decided && set.instances.length === 3)).toBe(true)
    // The metrics count them.
    const metrics = await fetch(`${flowadmin.url}/metrics`, {
      headers: { authorization: `Bearer ${adminToken}` },
    })
    const text = await metrics.text()
    expect(text).toContain('flowadmin_fleet_instances{state="connected"} 3')
    expect(text).toContain('flowadmin_fleet_drift 6')
    expect(text).toContain('flowadmin_fleet_settings_agree 1')
  })

  it('node-red-admin pointed at flowadmin disables and enables a module on every instance', async () => {
    const disabled = await admin('disable', SHOUT.name)
    expect(disabled.code).toBe(0)
    expect(disabled.stdout.join('\n')).toContain(`${SHOUT.name}/shout`)
    expect(await eventually(everyState(SHOUT.name), (s) => s.every((one) => one === 'shout=false'))).toEqual([
      'shout=false',
      'shout=false',
      'shout=false',
    ])
    // The audit trail says who asked (deciding the module), and each instance's outcome.
    const audit = () =>
      flowadmin.run.stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(audit()).toContainEqual(
      expect.objectContaining({ event: 'module.adopted', user: 'admin', module: SHOUT.name }),
    )
    expect(audit()).toContainEqual(
      expect.objectContaining({ event: 'module.disabled', user: 'admin', module: SHOUT.name }),
    )
    const outcomes = await eventually(
      async () =>
        new Set(
          audit()
            .filter((e) => e.event === 'fleet.applied')
            .map((e) => e.instance),
        ),
      (ids) => ids.size === 3,
    )
    expect(outcomes.size).toBe(3)
    const enabled = await admin('enable', SHOUT.name)
    expect(enabled.code).toBe(0)
    expect(await eventually(everyState(SHOUT.name), (s) => s.every((one) => one === 'shout=true'))).toEqual([
      'shout=true',
      'shout=true',
      'shout=true',
    ])
  }, 300_000)

  it('refuses to disable a type one instance’s flows use, naming it, and changes nothing anywhere', async () => {
    const edgeC = (await readFile(path.join(work.dir, 'edge-c', '.flowadmin-instance'), 'utf8')).trim()
    const res = await fetch(`${flowadmin.url}/nodes/${TOOLS.name}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ enabled: false }),
    })
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({
      code: 'type_in_use',
      message: `Type in use: lower-case (on ${edgeC})`,
      types: ['lower-case'],
      instances: [edgeC],
    })
    const refused = await admin('disable', TOOLS.name)
    expect(refused.code).toBe(1)
    expect(await everyState(TOOLS.name)()).toEqual([
      'upper=true lower=true',
      'upper=true lower=true',
      'upper=true lower=true',
    ])
    const desired = (await flowadminGet(`/nodes/${TOOLS.name}`)).body as {
      nodes: Array<{ enabled: boolean }>
    }
    expect(desired.nodes.map((set) => set.enabled)).toEqual([true, true])
  })

  it('an instance stopped during a change is disconnected at once, converges when it starts again; one installed by hand shows as drift', async () => {
    await eventually(fleetInstances, (list) => list.some((i) => i.id === 'edge-b' && i.connected))
    await (instances.get('edge-b') as NodeRedRun).stop()
    const exited = Date.now()
    tokens.delete('edge-b')
    // Its held poll's connection closed with it: not connected within a second or two.
    const gone = await eventually(fleetInstances, (list) =>
      list.some((i) => i.id === 'edge-b' && !i.connected),
    )
    expect(gone.find((i) => i.id === 'edge-b')?.connected).toBe(false)
    expect(Date.now() - exited).toBeLessThan(2000)
    const off = await fetch(`${flowadmin.url}/nodes/${TOOLS.name}/upper`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ enabled: false }),
    })
    expect(off.status).toBe(200)
    const answer = (await off.json()) as { enabled: boolean; instances: Array<{ id: string }> }
    expect(answer.enabled).toBe(false)
    expect(answer.instances.map((instance) => instance.id)).toContain('edge-b')
    for (const name of ['edge-a', 'edge-c']) {
      expect(
        await eventually(
          () => ownStateOf(name, TOOLS.name),
          (s) => s === 'upper=false lower=true',
        ),
      ).toBe('upper=false lower=true')
    }
    // While it is away, flowadmin shows it so, with the change pending.
    const away = await eventually(fleetInstances, (list) =>
      list.some((i) => i.id === 'edge-b' && i.drift.some((d) => d.module === TOOLS.name)),
    )
    expect(away.find((i) => i.id === 'edge-b')?.drift).toEqual([{ module: TOOLS.name, reason: 'pending' }])

    // Someone installs a module by hand on it before it starts again.
    await writeNodeModulePackage(path.join(work.dir, 'edge-b', 'node_modules', HAND.name), HAND, {
      hand: ['by-hand'],
    })
    await startInstance('edge-b')
    expect(
      await eventually(
        () => ownStateOf('edge-b', TOOLS.name),
        (s) => s === 'upper=false lower=true',
      ),
    ).toBe('upper=false lower=true')
    const after = await eventually(fleetInstances, (list) =>
      list.some((i) => i.id === 'edge-b' && i.drift.length === 1 && i.drift[0]?.module === HAND.name),
    )
    expect(after.find((i) => i.id === 'edge-b')?.drift).toEqual([
      { module: HAND.name, reason: 'installed_by_hand' },
    ])
    expect(after.filter((i) => i.id !== 'edge-b').every((i) => i.drift.length === 0)).toBe(true)
  }, 300_000)

  it('installs a module through flowadmin on every instance, and removes it from every one', async () => {
    const installed = await fetch(`${flowadmin.url}/nodes`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ module: WAVE.name }),
    })
    expect(installed.status).toBe(200)
    expect(await eventually(everyState(WAVE.name), (s) => s.every((one) => one === 'wave=true'))).toEqual([
      'wave=true',
      'wave=true',
      'wave=true',
    ])
    const removed = await admin('remove', WAVE.name)
    expect(removed.code).toBe(0)
    expect(await eventually(everyState(WAVE.name), (s) => s.every((one) => one === '404'))).toEqual([
      '404',
      '404',
      '404',
    ])
  }, 300_000)

  it('while flowadmin is away the instances keep running and change nothing; they reconnect when it is back', async () => {
    const before = await everyState(SHOUT.name)()
    const port = new URL(flowadmin.url).port
    await flowadmin.stop()
    const edgeA = instances.get('edge-a') as NodeRedRun
    await eventually(
      async () => edgeA.stderr,
      (text) => text.includes('cannot be reached') && text.includes('keeps its modules as they are'),
    )
    expect(edgeA.stderr).toContain('this instance keeps its modules as they are')
    flowadmin = await startBuiltServer(settingsFile, { port })
    await eventually(
      async () => edgeA.stderr,
      (text) => text.includes('answers again'),
    )
    expect(edgeA.stderr).toContain(`fleet: flowadmin at ${flowadmin.url} answers again`)
    for (const run of instances.values()) expect(run.child.exitCode).toBeNull()
    expect(await everyState(SHOUT.name)()).toEqual(before)
  }, 300_000)
})
