// Rollouts end to end on a real, stock Node-RED whose helper is in fleet mode, against the stub
// flowadmin: the agent deploys its target (modules from an npm registry the test serves, the
// variables in the global-config node, secrets in the credentials file), reports what it did,
// keeps it across a restart, reports a deploy by a person as drift and, in enforce mode, undoes it.
// One Node-RED for the whole file, its steps in order: each starts where the one before ended.
import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { waitFor } from '@flowadmin/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type LocalRegistry, startLocalRegistry } from '../../server/test/local-registry.js'
import { type NodeRedRun, startNodeRed, stopNodeReds } from '../../server/test/node-red-process.js'
import { desiredState } from './fleet-setup.js'
import { type FlowsTarget, type StubFlowadmin, startStubFlowadmin } from './stub-flowadmin.js'

const require = createRequire(import.meta.url)
const HELPER = require.resolve('../index.js')
const ID = 'nr-rollout'
const WAVE = { name: 'node-red-contrib-wave', version: '1.0.0', sets: { wave: ['wave'] } }
const SECRET_VALUE = 'variable-secret-8f2c'
/** Generous: Node-RED and npm on a busy shared machine. Not a timing assertion. */
const PATIENCE_MS = 90_000

type Node = Record<string, unknown>
const SNAPSHOT: Node[] = [
  { id: 't1', type: 'tab', label: 'Line 1', disabled: false, info: '', env: [] },
  {
    id: 'req1',
    type: 'http request',
    z: 't1',
    name: 'kept',
    method: 'GET',
    url: 'http://127.0.0.1:9/a',
    x: 200,
    y: 160,
    wires: [[]],
  },
  {
    id: 'req2',
    type: 'http request',
    z: 't1',
    name: 'new',
    method: 'GET',
    url: 'http://127.0.0.1:9/b',
    x: 200,
    y: 220,
    wires: [[]],
  },
]

const target = (rollout: string, overrides: Partial<FlowsTarget> = {}): FlowsTarget => ({
  rollout,
  snapshot: 's1',
  mode: 'report',
  variables: 'v1',
  flows: SNAPSHOT,
  modules: [{ name: WAVE.name, version: WAVE.version }],
  env: [
    { name: 'GREETING', value: 'hello', type: 'str' },
    { name: 'TOKEN', value: SECRET_VALUE, type: 'cred' },
  ],
  ...overrides,
})

let registry: LocalRegistry
let stub: StubFlowadmin
let run: NodeRedRun
let userDir: string
let token = ''
let version = 0

function settings(url: string) {
  return {
    preamble: `
const flowadmin = require(${JSON.stringify(HELPER)})
const options = { url: ${JSON.stringify(url)}, clientId: 'fleet', clientSecret: 's3cret', fleet: true,
  instanceId: ${JSON.stringify(ID)}, audit: { delayMs: 0 } }
`,
    adminAuth: 'flowadmin.adminAuth(options)',
    logging: `{ console: { level: 'info', metrics: false, audit: false }, flowadmin: flowadmin.auditLogger(options) }`,
  }
}

const start = () => startNodeRed(userDir, settings(stub.url), { npm_config_registry: registry.url })

/** The next desired state, naming `flows` (or no target). */
function desire(flows: FlowsTarget | null, mode: 'report' | 'enforce' = 'report') {
  version += 1
  stub.fleet.setDesired(
    desiredState(String(version), {
      ...(flows !== null && {
        flows: { rollout: flows.rollout, snapshot: flows.snapshot, mode, variables: flows.variables },
      }),
    }),
  )
}

/** A call to Node-RED's own admin API as the user `admin` (logged in through the helper). */
async function admin(method: string, pathname: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${run.url}${pathname}`, {
    method,
    headers: {
      Authorization: `Bearer ${token}`,
      Accept: 'application/json',
      ...(body !== undefined && { 'Content-Type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  return {
    status: res.status,
    text,
    body: text === '' ? null : (JSON.parse(text) as Record<string, unknown>),
  }
}

const runningFlows = async () => {
  const answer = await admin('GET', '/flows', undefined, { 'Node-RED-API-Version': 'v2' })
  return answer.body as { rev: string; flows: Node[] }
}
const flowReports = () => stub.fleet.flowReportsOf(ID)
const targetFetches = () => stub.to(`/fleet/instances/${ID}/flows/target`).length

async function logIn() {
  const res = await fetch(`${run.url}/auth/token`, {
    method: 'POST',
    body: new URLSearchParams({
      client_id: 'node-red-admin',
      grant_type: 'password',
      scope: '*',
      username: 'admin',
      password: 'pw',
    }),
  })
  expect(res.status).toBe(200)
  token = ((await res.json()) as { access_token: string }).access_token
}

beforeAll(async () => {
  registry = await startLocalRegistry()
  await registry.publish(WAVE)
  stub = await startStubFlowadmin()
  stub.fleet.setHold(2)
  desire(null)
  userDir = await mkdtemp(path.join(tmpdir(), 'flowadmin-rollout-'))
  writeFileSync(
    path.join(userDir, 'flows.json'),
    JSON.stringify([{ id: 't1', type: 'tab', label: 'Line 1' }]),
  )
  run = await start()
  await logIn()
  // req1 holds credentials on this instance before any rollout (deployed by a person).
  const before = await admin(
    'POST',
    '/flows',
    {
      flows: [
        ...SNAPSHOT.filter((node) => node.id === 't1'),
        ...SNAPSHOT.filter((node) => node.id === 'req1').map((node) => ({
          ...node,
          credentials: { user: 'someone', password: 'pw' },
        })),
      ],
    },
    { 'Node-RED-API-Version': 'v2', 'Node-RED-Deployment-Type': 'full' },
  )
  expect(before.status).toBe(200)
}, 120_000)

afterAll(async () => {
  await stopNodeReds()
  await stub?.close()
  await registry?.close()
})

describe('a rollout on a real Node-RED', () => {
  it('installs the missing module, deploys the flows with the variables, and reports', async () => {
    const first = target('r1')
    stub.fleet.setTarget(ID, first)
    desire(first)
    await waitFor(
      () => flowReports().length >= 1,
      () => `reports: ${JSON.stringify(flowReports())}\n${run.stdout}`,
      {
        timeoutMs: PATIENCE_MS,
      },
    )
    const running = await runningFlows()
    expect(flowReports()).toEqual([
      {
        rollout: 'r1',
        variables: 'v1',
        outcome: 'succeeded',
        rev: running.rev,
        message: null,
        // req1 kept the credentials it held here; req2 has none.
        missingCredentials: ['req2'],
      },
    ])
    // The module came from the registry, through Node-RED's own install, before the deploy (as
    // Node-RED's log tells).
    expect(registry.requestsFor(WAVE.name).length).toBeGreaterThan(0)
    const installed = run.stdout.indexOf(`Installed module: ${WAVE.name}`)
    expect(installed).toBeGreaterThan(0)
    expect(run.stdout.indexOf('Updated flows', installed)).toBeGreaterThan(installed)
    const nodes = (await admin('GET', '/nodes')).body as unknown as Array<{ module: string; version: string }>
    expect(nodes.find((set) => set.module === WAVE.name)?.version).toBe('1.0.0')
    // What Node-RED runs: the snapshot and the variables, the secret as Node-RED's editor keeps it.
    expect(running.flows).toEqual([
      ...SNAPSHOT,
      {
        id: 'flowadmin-variables',
        type: 'global-config',
        env: [
          { name: 'GREETING', value: 'hello', type: 'str' },
          { name: 'TOKEN', value: '__PWRD__', type: 'cred' },
        ],
        modules: {},
      },
    ])
    expect(JSON.stringify(running)).not.toContain(SECRET_VALUE)
    const credentials = JSON.parse(readFileSync(path.join(userDir, 'flows_cred.json'), 'utf8'))
    expect(credentials['flowadmin-variables']).toEqual({ map: { TOKEN: SECRET_VALUE, has_TOKEN: true } })
    expect(credentials.req1).toEqual({ user: 'someone', password: 'pw' })
    // What was applied is kept beside the credential, for this user alone.
    const kept = path.join(userDir, '.flowadmin-flows.json')
    expect(statSync(kept).mode & 0o777).toBe(0o600)
    expect(JSON.parse(readFileSync(kept, 'utf8'))).toEqual({
      rollout: 'r1',
      variables: 'v1',
      outcome: 'succeeded',
      rev: running.rev,
      mode: 'report',
      modules: ['node-red-contrib-wave'],
    })
    // Its own deploy is no drift.
    await new Promise((resolve) => setTimeout(resolve, 2500))
    expect(flowReports()).toHaveLength(1)
  }, 120_000)

  it('does not deploy the same target again after a restart', async () => {
    const { rev } = await runningFlows()
    const fetched = targetFetches()
    await run.stop()
    const pollsBefore = stub.fleet.pollsOf(ID).length
    run = await start()
    await logIn()
    // Polls answered with the same target since the restart.
    await waitFor(() => stub.fleet.pollsOf(ID).length >= pollsBefore + 2, 'polls after the restart', {
      timeoutMs: 30_000,
    })
    await new Promise((resolve) => setTimeout(resolve, 1000))
    expect(targetFetches()).toBe(fetched)
    expect(flowReports()).toHaveLength(1)
    expect((await runningFlows()).rev).toBe(rev)
  }, 120_000)

  it('reports a failing install as failed and deploys nothing', async () => {
    const { rev } = await runningFlows()
    const failing = target('r2', { modules: [{ name: 'node-red-contrib-absent', version: '1.0.0' }] })
    stub.fleet.setTarget(ID, failing)
    desire(failing)
    await waitFor(
      () => flowReports().length >= 2,
      () => `reports: ${JSON.stringify(flowReports())}`,
      {
        timeoutMs: PATIENCE_MS,
      },
    )
    expect(flowReports()[1]).toEqual({
      rollout: 'r2',
      variables: 'v1',
      outcome: 'failed',
      rev: null,
      message: expect.stringContaining('node-red-contrib-absent@1.0.0 was not installed'),
      missingCredentials: [],
    })
    expect((await runningFlows()).rev).toBe(rev)
    // Not tried again while the target stays.
    desire(failing)
    await new Promise((resolve) => setTimeout(resolve, 1500))
    expect(flowReports()).toHaveLength(2)
  }, 120_000)

  it('reports a deploy by a person as drift, with who made it', async () => {
    const { flows } = await runningFlows()
    const changed = flows.map((node) => (node.id === 'req2' ? { ...node, name: 'changed by hand' } : node))
    const deployed = await admin(
      'POST',
      '/flows',
      { flows: changed },
      {
        'Node-RED-API-Version': 'v2',
        'Node-RED-Deployment-Type': 'full',
      },
    )
    expect(deployed.status).toBe(200)
    const at = Date.now()
    await waitFor(
      () => flowReports().length >= 3,
      () => `reports: ${JSON.stringify(flowReports())}`,
      {
        timeoutMs: 5000,
      },
    )
    const drift = stub.fleet.flowReports.filter((report) => report.id === ID)[2]
    expect(drift?.body).toEqual({ rev: (deployed.body as { rev: string }).rev, by: 'admin' })
    expect((drift?.at ?? Infinity) - at).toBeLessThan(2000)
    // Reported once.
    await new Promise((resolve) => setTimeout(resolve, 1500))
    expect(flowReports()).toHaveLength(3)
  }, 60_000)

  it('in enforce mode, deploys the target again after a deploy by a person', async () => {
    const enforced = target('r3', { variables: 'v2', env: [{ name: 'GREETING', value: 'hi', type: 'str' }] })
    stub.fleet.setTarget(ID, enforced)
    desire(enforced, 'enforce')
    await waitFor(
      () => flowReports().length >= 4,
      () => `reports: ${JSON.stringify(flowReports())}`,
      {
        timeoutMs: PATIENCE_MS,
      },
    )
    const applied = await runningFlows()
    expect(flowReports()[3]).toMatchObject({
      rollout: 'r3',
      variables: 'v2',
      outcome: 'succeeded',
      rev: applied.rev,
    })
    // The secret no longer among the variables has left the credentials file.
    expect(readFileSync(path.join(userDir, 'flows_cred.json'), 'utf8')).not.toContain(SECRET_VALUE)

    const byHand = await admin(
      'POST',
      '/flows',
      { flows: applied.flows.filter((node) => node.id !== 'req2') },
      {
        'Node-RED-API-Version': 'v2',
        'Node-RED-Deployment-Type': 'full',
      },
    )
    expect(byHand.status).toBe(200)
    await waitFor(
      () => flowReports().length >= 6,
      () => `reports: ${JSON.stringify(flowReports())}`,
      {
        timeoutMs: 10_000,
      },
    )
    expect(flowReports().slice(4)).toEqual([
      { rev: (byHand.body as { rev: string }).rev, by: 'admin' },
      {
        rollout: 'r3',
        variables: 'v2',
        outcome: 'succeeded',
        rev: applied.rev,
        message: null,
        missingCredentials: ['req2'],
        restored: true,
      },
    ])
    expect(await runningFlows()).toEqual(applied)
  }, 120_000)

  it('at its start, reports flows changed while it was stopped, and restores them in enforce mode', async () => {
    const applied = await runningFlows()
    await run.stop()
    const file = path.join(userDir, 'flows.json')
    const edited = (JSON.parse(readFileSync(file, 'utf8')) as Node[]).filter((node) => node.id !== 'req2')
    writeFileSync(file, JSON.stringify(edited))
    const before = flowReports().length
    run = await start()
    await logIn()
    await waitFor(
      () => flowReports().length >= before + 2,
      () => `reports: ${JSON.stringify(flowReports())}`,
      { timeoutMs: 30_000 },
    )
    expect(flowReports().slice(before)).toEqual([
      { rev: expect.stringMatching(/^[0-9a-f]{64}$/), by: null },
      {
        rollout: 'r3',
        variables: 'v2',
        outcome: 'succeeded',
        rev: applied.rev,
        message: null,
        missingCredentials: ['req2'],
        restored: true,
      },
    ])
    expect(flowReports()[before]?.rev).not.toBe(applied.rev)
    expect(await runningFlows()).toEqual(applied)
  }, 120_000)
})
