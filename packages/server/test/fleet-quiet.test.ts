// A quiet fleet is quiet in the trail: three real, stock Node-RED 4.1 instances with the helper in
// fleet mode and its audit logger, polling the built flowadmin with its default hold, add no event
// to the trail in a whole minute once they are settled (the agent's own calls to flowadmin and to
// its Node-RED are no one's failed logins, nor anything else). A real minute: with the default
// hold (15 s) that is four rounds of every instance's poll and a dozen of its flows' readings.
import * as path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BuiltServer, startBuiltServer, useServerFolder } from './cli-process.js'
import {
  eventually,
  fleetAdminAuth,
  fleetInstances,
  helperSettings,
  operatorToken,
  SECRET,
  trailOf,
  writeFleetModules,
} from './fleet-setup.js'
import { startNodeRed, stopNodeReds } from './node-red-process.js'

const QUIET_MS = 60_000
const NAMES = ['edge-a', 'edge-b', 'edge-c']

const work = useServerFolder('fleet-quiet')
let flowadmin: BuiltServer
let admin: string

beforeAll(async () => {
  const dir = path.join(work.dir, 'flowadmin')
  flowadmin = await startBuiltServer(path.join(dir, 'settings.json'), {
    settings: {
      storage: 'sqlite',
      userDir: dir,
      auditLog: 'off',
      fleet: { modules: true },
      adminAuth: await fleetAdminAuth(),
    },
  })
  admin = await operatorToken(flowadmin.url)
  for (const name of NAMES) await writeFleetModules(path.join(work.dir, name))
  await Promise.all(
    NAMES.map((name) =>
      startNodeRed(path.join(work.dir, name), helperSettings(flowadmin.url, name, true), {
        FLOWADMIN_SECRET: SECRET,
      }),
    ),
  )
}, 120_000)

afterAll(stopNodeReds)

describe('a quiet fleet of three Node-RED instances', () => {
  it('adds no event to the trail in a minute', async () => {
    // Settled: each joined, reported and applied the desired state; the trail has said so.
    await eventually(
      () => fleetInstances(flowadmin.url, admin),
      (list) => list.length === 3 && list.every((i) => i.connected && i.applied !== null),
    )
    const settled = await eventually(
      () => trailOf(flowadmin.url, admin, 'event=fleet.applied'),
      (events) => events.length === 3,
    )
    expect(settled.map((entry) => entry.instance).sort()).toEqual([
      'fleet/edge-a',
      'fleet/edge-b',
      'fleet/edge-c',
    ])
    // What the start wrote is in by now (the trail writes within a second or so).
    await new Promise((resolve) => setTimeout(resolve, 2000))
    const mark = new Date().toISOString()

    await new Promise((resolve) => setTimeout(resolve, QUIET_MS))

    expect(await trailOf(flowadmin.url, admin, `received_since=${encodeURIComponent(mark)}`)).toEqual([])
    // They were there all along, polling: each was seen during the minute, and is connected.
    const after = await fleetInstances(flowadmin.url, admin)
    for (const instance of after) {
      expect(instance.connected).toBe(true)
      expect(Date.parse(instance.lastSeen)).toBeGreaterThan(Date.parse(mark))
    }
  }, 180_000)
})
