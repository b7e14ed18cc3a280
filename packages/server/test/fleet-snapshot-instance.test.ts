// A snapshot of the flows a real, stock Node-RED 4.1 instance of the fleet runs: flows deployed at
// the instance, an operator asks flowadmin (SQLite) for them, the instance's helper reads its own
// GET /flows at its next poll and sends them, and the download holds exactly what Node-RED runs.
import * as path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BuiltServer, startBuiltServer, useServerFolder } from './cli-process.js'
import {
  callFlowadmin,
  eventually,
  fleetAdminAuth,
  fleetInstances,
  helperSettings,
  instanceToken,
  operatorToken,
  SECRET,
  trailOf,
} from './fleet-setup.js'
import { type NodeRedRun, startNodeRed, stopNodeReds } from './node-red-process.js'

const work = useServerFolder('fleet-snapshot-instance')
let flowadmin: BuiltServer
let admin: string
let nodeRed: NodeRedRun
let editor: string

const FLOWS = [
  { id: 'tab1', type: 'tab', label: 'Press', disabled: false, info: '' },
  {
    id: 'in1',
    type: 'inject',
    z: 'tab1',
    name: 'tick',
    props: [],
    repeat: '',
    once: false,
    wires: [['out1']],
  },
  { id: 'out1', type: 'debug', z: 'tab1', name: 'seen', active: true, wires: [] },
]

beforeAll(async () => {
  const dir = path.join(work.dir, 'flowadmin')
  flowadmin = await startBuiltServer(path.join(dir, 'settings.json'), {
    settings: {
      storage: 'sqlite',
      userDir: dir,
      auditLog: 'off',
      fleet: { modules: true, hold: 5, wait: 0 },
      adminAuth: await fleetAdminAuth(),
    },
  })
  admin = await operatorToken(flowadmin.url)
  nodeRed = await startNodeRed(path.join(work.dir, 'press-1'), helperSettings(flowadmin.url, 'press-1'), {
    FLOWADMIN_SECRET: SECRET,
  })
  editor = await instanceToken(nodeRed)
}, 180_000)

afterAll(() => stopNodeReds())

describe('a snapshot of what a real Node-RED instance runs', () => {
  it('is sent by its helper at the next poll once an operator asks, and holds exactly its deployed flows', async () => {
    const deployed = await fetch(`${nodeRed.url}/flows`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${editor}`,
        'content-type': 'application/json',
        'Node-RED-Deployment-Type': 'full',
      },
      body: JSON.stringify(FLOWS),
    })
    expect([200, 204]).toContain(deployed.status)
    await eventually(
      () => fleetInstances(flowadmin.url, admin),
      (all) => all.some((instance) => instance.id === 'press-1' && instance.lastReport !== null),
    )

    const asked = await callFlowadmin(flowadmin.url, admin, 'POST', '/fleet/instances/press-1/snapshots', {
      name: 'press-line',
    })
    expect(asked.status).toBe(202)
    const listed = await eventually(
      async () =>
        (await (await callFlowadmin(flowadmin.url, admin, 'GET', '/fleet/snapshots')).json()) as Array<{
          id: string
          name: string
          createdBy: string | null
        }>,
      (all) => all.length > 0,
    )
    expect(listed).toMatchObject([
      { name: 'press-line', version: 1, nodes: 3, createdBy: 'admin', modules: [] },
    ])
    const id = listed[0]?.id ?? ''

    const running = (await (
      await fetch(`${nodeRed.url}/flows`, { headers: { authorization: `Bearer ${editor}` } })
    ).json()) as unknown[]
    const file = (await (
      await callFlowadmin(flowadmin.url, admin, 'GET', `/fleet/snapshots/${id}`)
    ).json()) as {
      flows: unknown[]
    }
    expect(file).toEqual({ name: 'press-line', modules: [], flows: running })
    expect(running).toEqual(FLOWS)

    const trail = await eventually(
      () => trailOf(flowadmin.url, admin, 'event=fleet.snapshot'),
      (found) => found.length >= 2,
    )
    expect(trail.map((entry) => [entry.event, entry.actor]).sort()).toEqual([
      ['fleet.snapshot_asked', 'admin'],
      ['fleet.snapshot_created', 'admin'],
    ])
  })
})
