// Flows across the fleet, end to end: the built flowadmin in fleet mode and three real, stock
// Node-RED instances. A snapshot made from nr-1 is rolled out to the group `line` (nr-2, nr-3):
// their own flows become the snapshot's and run; a module the flows need is installed first;
// variables make the same flow answer differently; credentials kept on each instance survive;
// rollback; drift reported and, enforced, undone; a staged rollout stops at its first failure; an
// instance stopped during a rollout converges when it starts; a person whose grant is on another
// group is refused. One setup for the whole file: Node-RED processes cost a shared machine a lot.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import * as path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashPassword } from '../src/adapters/argon2.js'
import { type BuiltServer, startBuiltServer, useServerFolder } from './cli-process.js'
import {
  CLIENT_ID,
  callFlowadmin,
  eventually,
  helperSettings,
  instanceToken,
  operatorToken,
  PASSWORD,
  SECRET,
  trailOf,
  within,
} from './fleet-setup.js'
import { type LocalRegistry, startLocalRegistry } from './local-registry.js'
import { type NodeRedRun, startNodeRed, stopNodeReds } from './node-red-process.js'
import { logInAs } from './password-grant.js'

const work = useServerFolder('fleet-rollouts')
/** A module in the local registry that the second snapshot's flows need. */
const WAVE = { name: 'node-red-contrib-wave', version: '1.0.0', sets: { wave: ['wave'] } }
const NAMES = ['nr-1', 'nr-2', 'nr-3']
const DORA_PASSWORD = 'dora deploys to the source line'
let registry: LocalRegistry
let flowadmin: BuiltServer
let admin: string
const runs = new Map<string, NodeRedRun>()
const tokens = new Map<string, string>()
/** An HTTP service that wants basic authentication as `press:open sesame`. */
let guarded: Server
let guardedUrl: string

type Node = Record<string, unknown> & { id: string; type: string }
interface Rollout {
  id: string
  state: string
  reason: string | null
  released: boolean
  instances: string[]
  outcomes: Array<{ instance: string; outcome: string; rev: string | null; missingCredentials: string[] }>
  waiting: string[]
}

/** The flows nr-1 runs when the snapshot is made: a greeting and a call to the guarded service. */
const helloFlows = (greeting: string): Node[] => [
  { id: 'tab1', type: 'tab', label: 'Hello' },
  { id: 'in1', type: 'http in', z: 'tab1', url: '/hello', method: 'get', wires: [['fn1']] },
  {
    id: 'fn1',
    type: 'function',
    z: 'tab1',
    func: `msg.payload = '${greeting} ' + (env.get('GREETING') || 'nobody'); return msg;`,
    outputs: 1,
    wires: [['out1']],
  },
  { id: 'out1', type: 'http response', z: 'tab1', wires: [] },
  { id: 'in2', type: 'http in', z: 'tab1', url: '/ask', method: 'get', wires: [['req1']] },
  {
    id: 'req1',
    type: 'http request',
    z: 'tab1',
    method: 'GET',
    ret: 'txt',
    url: '',
    authType: 'basic',
    wires: [['out2']],
  },
  { id: 'out2', type: 'http response', z: 'tab1', wires: [] },
  { id: 'tick', type: 'inject', z: 'tab1', repeat: '', once: false, wires: [['fn1']] },
]

const startInstance = async (name: string) => {
  const run = await startNodeRed(path.join(work.dir, name), helperSettings(flowadmin.url, name, true), {
    FLOWADMIN_SECRET: SECRET,
    npm_config_registry: registry.url,
  })
  runs.set(name, run)
  return run
}
const run = (name: string) => runs.get(name) as NodeRedRun

/** A call to an instance's own admin API with its admin token. */
async function atInstance(name: string, method: string, route: string, body?: unknown, headers = {}) {
  const res = await fetch(`${run(name).url}${route}`, {
    method,
    headers: {
      authorization: `Bearer ${tokens.get(name)}`,
      'content-type': 'application/json',
      'Node-RED-API-Version': 'v2',
      ...headers,
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  })
  const text = await res.text()
  return { status: res.status, body: text === '' ? null : (JSON.parse(text) as unknown) }
}

/** What the instance's own `GET /flows` holds: `{flows, rev}`. */
const flowsAt = async (name: string) =>
  (await atInstance(name, 'GET', '/flows')).body as { flows: Node[]; rev: string }
/** Deploys by hand in the instance's own admin API (as its editor does): the new rev. */
async function deployAt(name: string, flows: Node[]) {
  const res = await atInstance(name, 'POST', '/flows', { flows }, { 'Node-RED-Deployment-Type': 'full' })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return (res.body as { rev: string }).rev
}
/** What the instance's `/hello` answers (its flows running), or the status. */
async function helloNow(name: string) {
  const res = await fetch(`${run(name).url}/hello`)
  return res.status === 200 ? await res.text() : `HTTP ${res.status}`
}
/**
 * What `/hello` answers once it answers `expected` (or the last answer when it never does): a
 * deploy's answer comes before Node-RED has started the new flows' HTTP routes.
 */
const hello = (name: string, expected: string) =>
  eventually(
    () => helloNow(name),
    (text) => text === expected,
  )
/** Sorted by id, without key order: a node-for-node comparison. */
const byId = (flows: Node[]) => [...flows].sort((a, b) => (a.id < b.id ? -1 : 1))
const withoutVariables = (flows: Node[]) => flows.filter((node) => node.id !== 'flowadmin-variables')

const api = async (method: string, route: string, body?: unknown, token = admin) => {
  const res = await callFlowadmin(flowadmin.url, token, method, route, body)
  const text = await res.text()
  return { status: res.status, body: text === '' ? null : (JSON.parse(text) as unknown) }
}
async function upload(name: string, flows: Node[], modules?: Array<{ name: string; version: string }>) {
  const made = await api('POST', '/fleet/snapshots', { name, flows, ...(modules && { modules }) })
  expect(made.status, JSON.stringify(made.body)).toBe(201)
  return (made.body as { id: string }).id
}
async function rollOut(snapshot: string, strategy?: unknown) {
  const made = await api('POST', '/fleet/groups/line/rollouts', {
    snapshot,
    ...(strategy !== undefined && { strategy }),
  })
  expect(made.status, JSON.stringify(made.body)).toBe(201)
  return (made.body as { id: string }).id
}
const rollout = async (id: string) => (await api('GET', `/fleet/rollouts/${id}`)).body as Rollout
const finished = (id: string) =>
  eventually(
    () => rollout(id),
    (r) => ['succeeded', 'failed', 'stopped'].includes(r.state),
  )
const snapshotFlows = async (id: string) =>
  ((await api('GET', `/fleet/snapshots/${id}`)).body as { flows: Node[] }).flows

beforeAll(async () => {
  registry = await startLocalRegistry()
  await registry.publish(WAVE)
  guarded = createServer((req, res) => {
    const ok = req.headers.authorization === `Basic ${Buffer.from('press:open sesame').toString('base64')}`
    res.writeHead(ok ? 200 : 401, { 'content-type': 'text/plain' }).end(ok ? 'authenticated' : 'who are you?')
  })
  await new Promise<void>((resolve) => guarded.listen(0, '127.0.0.1', resolve))
  guardedUrl = `http://127.0.0.1:${(guarded.address() as AddressInfo).port}/`
  const flowadminDir = path.join(work.dir, 'flowadmin')
  flowadmin = await startBuiltServer(path.join(flowadminDir, 'settings.json'), {
    settings: {
      storage: 'sqlite',
      userDir: flowadminDir,
      auditLog: 'stdout',
      fleet: {
        modules: true,
        hold: 10,
        groups: { source: ['nr-1'], line: ['nr-2', 'nr-3'] },
        flows: { key: 'a key of flow variables for this test only, 0123456789' },
      },
      adminAuth: {
        type: 'credentials',
        users: [
          { username: 'admin', password: await hashPassword(PASSWORD), permissions: '*' },
          {
            username: 'dora',
            password: await hashPassword(DORA_PASSWORD),
            grants: [{ role: 'deployer', on: 'source' }],
          },
        ],
        resourceServers: [{ id: CLIENT_ID, secret: await hashPassword(SECRET), fleet: true }],
        clients: ['node-red-admin'],
      },
    },
  })
  admin = await operatorToken(flowadmin.url)
  await Promise.all(NAMES.map(startInstance))
  for (const name of NAMES) tokens.set(name, await instanceToken(run(name)))
  // Each instance runs the flows by hand first, its HTTP request node given its credentials there.
  const own = helloFlows('hello from')
  for (const name of NAMES) {
    await deployAt(
      name,
      own.map((node) =>
        node.id === 'req1'
          ? { ...node, url: guardedUrl, credentials: { user: 'press', password: 'open sesame' } }
          : node,
      ),
    )
  }
}, 240_000)

afterAll(async () => {
  await stopNodeReds()
  await registry?.close()
  guarded?.close()
})

describe('flows rolled out across three real Node-RED instances', () => {
  let first: string
  let firstFlows: Node[]
  let firstRollout: string

  it('makes a snapshot from nr-1 and rolls it out to line: nr-2 and nr-3 run its flows, node for node', async () => {
    expect(await hello('nr-2', 'hello from nobody')).toBe('hello from nobody')
    const asked = await api('POST', '/fleet/instances/nr-1/snapshots', { name: 'hello' })
    expect(asked.status).toBe(202)
    const listed = await eventually(
      async () => (await api('GET', '/fleet/snapshots')).body as Array<{ id: string; name: string }>,
      (all) => all.some((each) => each.name === 'hello'),
    )
    first = (listed.find((each) => each.name === 'hello') as { id: string }).id
    firstFlows = await snapshotFlows(first)
    expect(firstFlows.find((node) => node.id === 'req1')).not.toHaveProperty('credentials')
    // Changed on the targets first, so that the rollout visibly deploys.
    for (const name of ['nr-2', 'nr-3'])
      await deployAt(name, [
        { id: 'tab9', type: 'tab', label: 'Other' },
        ...(await flowsAt(name)).flows.map((n) =>
          n.id === 'fn1' ? { ...n, func: "msg.payload = 'old'; return msg;" } : n,
        ),
      ])
    expect(await hello('nr-3', 'old')).toBe('old')

    firstRollout = await rollOut(first)
    const done = await finished(firstRollout)
    expect(done).toMatchObject({ state: 'succeeded', instances: ['nr-2', 'nr-3'], waiting: [] })
    for (const name of ['nr-2', 'nr-3']) {
      const { flows, rev } = await flowsAt(name)
      expect(byId(flows)).toEqual(byId(firstFlows))
      expect(done.outcomes.find((o) => o.instance === name)).toMatchObject({
        outcome: 'succeeded',
        rev,
        missingCredentials: [],
      })
      expect(await hello(name, 'hello from nobody')).toBe('hello from nobody')
    }
  }, 150_000)

  it('keeps the credentials each target had for the nodes it keeps', async () => {
    for (const name of ['nr-2', 'nr-3']) {
      const res = await fetch(`${run(name).url}/ask`)
      expect(await res.text()).toBe('authenticated')
    }
  }, 150_000)

  it('delivers variables per instance: the same flow answers differently on two instances', async () => {
    expect((await api('PUT', '/fleet/groups/line/variables/GREETING', { value: 'the line' })).status).toBe(
      200,
    )
    expect(
      (await api('PUT', '/fleet/instances/nr-3/variables/GREETING', { value: 'press three' })).status,
    ).toBe(200)
    const secret = await api('PUT', '/fleet/groups/line/variables/TOKEN', {
      value: 'never shown',
      secret: true,
    })
    expect(secret.body).toMatchObject({ name: 'TOKEN', value: null, secret: true })
    expect(await hello('nr-2', 'hello from the line')).toBe('hello from the line')
    expect(await hello('nr-3', 'hello from press three')).toBe('hello from press three')
    const { flows } = await flowsAt('nr-2')
    expect(byId(withoutVariables(flows))).toEqual(byId(firstFlows))
    expect(JSON.stringify(flows)).not.toContain('never shown')
    const listed = (await api('GET', '/fleet/groups/line/variables')).body as Array<{
      name: string
      value: unknown
    }>
    expect(listed).toEqual([
      expect.objectContaining({ name: 'GREETING', value: 'the line', secret: false }),
      expect.objectContaining({ name: 'TOKEN', value: null, secret: true }),
    ])
  }, 150_000)

  let second: string

  it('installs the module a snapshot needs before deploying it, then rolls back to the previous flows', async () => {
    const waved: Node[] = [...firstFlows, { id: 'w1', type: 'wave', z: 'tab1', wires: [] }]
    second = await upload('hello-wave', waved, [{ name: WAVE.name, version: WAVE.version }])
    const done = await finished(await rollOut(second))
    expect(done.state).toBe('succeeded')
    for (const name of ['nr-2', 'nr-3']) {
      expect(
        (await atInstance(name, 'GET', `/nodes/${WAVE.name}`, undefined, { accept: 'application/json' }))
          .status,
      ).toBe(200)
      expect(byId(withoutVariables((await flowsAt(name)).flows))).toEqual(byId(waved))
    }
    const back = await api('POST', '/fleet/groups/line/rollback')
    expect(back.status).toBe(201)
    expect(back.body).toMatchObject({ kind: 'rollback', snapshot: first })
    expect((await finished((back.body as { id: string }).id)).state).toBe('succeeded')
    for (const name of ['nr-2', 'nr-3']) {
      expect(byId(withoutVariables((await flowsAt(name)).flows))).toEqual(byId(firstFlows))
    }
  }, 150_000)

  it('shows a deploy by hand in nr-2’s editor as drift within 2 s, and with enforce undoes it', async () => {
    const changed = (await flowsAt('nr-2')).flows.map((n) =>
      n.id === 'fn1' ? { ...n, func: "msg.payload = 'by hand'; return msg;" } : n,
    )
    const rev = await deployAt('nr-2', changed)
    const drifted = await within(
      2000,
      async () =>
        (await api('GET', '/fleet/groups/line/flows')).body as {
          instances: Array<{ instance: string; drift: { rev: string; by: string | null } | null }>
        },
      (group) => group.instances.find((each) => each.instance === 'nr-2')?.drift?.rev === rev,
    )
    expect(drifted.instances.find((each) => each.instance === 'nr-2')?.drift).toMatchObject({
      rev,
      by: 'admin',
    })
    expect(await hello('nr-2', 'by hand')).toBe('by hand')
    const trail = await eventually(
      () => trailOf(flowadmin.url, admin, 'event=fleet.flows_drifted'),
      (events) => events.some((event) => event.details.rev === rev),
    )
    expect(trail.find((event) => event.details.rev === rev)?.details).toMatchObject({
      instance: 'nr-2',
      by: 'admin',
    })

    expect((await api('PUT', '/fleet/groups/line/flows/mode', { mode: 'enforce' })).status).toBe(200)
    await deployAt('nr-2', changed)
    expect(await hello('nr-2', 'hello from the line')).toBe('hello from the line')
    expect(byId(withoutVariables((await flowsAt('nr-2')).flows))).toEqual(byId(firstFlows))
    expect((await api('PUT', '/fleet/groups/line/flows/mode', { mode: 'report' })).status).toBe(200)
  }, 150_000)

  it('stops a staged rollout at its first instance’s failure and leaves the others untouched', async () => {
    const revBefore = (await flowsAt('nr-3')).rev
    const broken = await upload(
      'hello-broken',
      [...firstFlows, { id: 'x1', type: 'nowhere', z: 'tab1', wires: [] }],
      [{ name: 'node-red-contrib-nowhere', version: '1.0.0' }],
    )
    const id = await rollOut(broken, { kind: 'staged', first: 1 })
    const done = await finished(id)
    expect(done).toMatchObject({ state: 'stopped', released: false })
    expect(done.reason).toContain('nr-2 failed')
    expect(done.outcomes).toEqual([
      expect.objectContaining({ instance: 'nr-2', outcome: 'failed', rev: null }),
    ])
    expect((await flowsAt('nr-3')).rev).toBe(revBefore)
    expect(byId(withoutVariables((await flowsAt('nr-2')).flows))).toEqual(byId(firstFlows))
  }, 150_000)

  it('brings an instance stopped during a rollout to the group’s target when it starts', async () => {
    await run('nr-3').stop()
    const id = await rollOut(second)
    const partway = await eventually(
      () => rollout(id),
      (r) => r.outcomes.some((o) => o.instance === 'nr-2'),
    )
    expect(partway).toMatchObject({ state: 'running', waiting: ['nr-3'] })
    await startInstance('nr-3')
    tokens.set('nr-3', await instanceToken(run('nr-3')))
    expect((await finished(id)).state).toBe('succeeded')
    expect(await hello('nr-3', 'hello from press three')).toBe('hello from press three')
  }, 150_000)

  it('refuses a person whose flows.write is on another group', async () => {
    const res = await logInAs(flowadmin.url, 'dora', DORA_PASSWORD, '')
    const dora = ((await res.json()) as { access_token: string }).access_token
    const refused = await api('POST', '/fleet/groups/line/rollouts', { snapshot: first }, dora)
    expect(refused.status).toBe(401)
    expect((await api('POST', '/fleet/groups/line/rollback', undefined, dora)).status).toBe(401)
    expect((await api('PUT', '/fleet/groups/line/variables/X', { value: '1' }, dora)).status).toBe(401)
    const own = await api('POST', '/fleet/groups/source/rollouts', { snapshot: first }, dora)
    expect(own.status).toBe(201)
    expect(own.body).toMatchObject({ group: 'source', instances: ['nr-1'], createdBy: 'dora' })
  }, 150_000)
})
