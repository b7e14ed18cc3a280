// What reaches an instance besides enable and disable: upgrades through Node-RED's own admin API
// (its `pending_version` reported until it restarts), installs that fail (not run again every
// round), and changes made at the instance by hand, told with who made them and undone when the
// desired state decides the module.
import { waitFor } from '@flowadmin/testkit'
import { afterEach, describe, expect, test } from 'vitest'
import { desiredState, type FleetInstance, sleep, startFleetInstance } from './fleet-setup.js'

let fleet: FleetInstance | undefined
afterEach(async () => {
  await fleet?.close()
  fleet = undefined
})

const wave = (version: string) => ({
  name: 'wave',
  version,
  sets: [{ name: 'wave', types: ['wave'], enabled: true }],
})
const kit = {
  name: 'kit',
  version: '1.0.0',
  sets: [
    { name: 'a', types: ['a'], enabled: true },
    { name: 'b', types: ['b'], enabled: true },
  ],
}
const kitEnabled = {
  name: 'kit',
  sets: [
    { name: 'a', enabled: true },
    { name: 'b', enabled: true },
  ],
}

/** The first report that passes `test`, once it came. */
async function reportWhere(instance: FleetInstance, test: (report: Record<string, unknown>) => boolean) {
  await waitFor(
    () => instance.reports().some(test),
    () => `reports: ${JSON.stringify(instance.reports())}`,
  )
  return instance.reports().find(test) ?? {}
}

describe('upgrades', () => {
  test('a desired version the instance does not run: Node-RED’s own upgrade, then its pending version reported', async () => {
    fleet = await startFleetInstance({
      hold: 1,
      modules: [wave('1.0.0')],
      desired: desiredState('7', { installs: [{ module: 'wave', version: '2.0.0' }] }),
    })
    const report = await reportWhere(fleet, (r) => r.applied === '7')
    expect(fleet.nodeRed.changes()).toEqual(['POST /nodes {"module":"wave","version":"2.0.0"}'])
    expect(report.modules).toEqual([
      {
        ...wave('1.0.0'),
        pendingVersion: '2.0.0',
        sets: [{ name: 'wave', types: ['wave'], enabled: true, loaded: true }],
      },
    ])
    expect(report.failures).toEqual([])
    // Nothing more to do until Node-RED restarts: not upgraded again, nothing said by hand.
    await sleep(2500)
    expect(fleet.nodeRed.changes()).toHaveLength(1)
    expect(fleet.reports().flatMap((r) => r.changes as unknown[])).toEqual([])
  }, 30_000)

  test('a refused upgrade is reported and not run again until the desired state changes', async () => {
    fleet = await startFleetInstance({
      hold: 0,
      modules: [wave('1.0.0')],
      desired: desiredState('7', { installs: [{ module: 'wave', version: '2.0.0' }] }),
    })
    fleet.nodeRed.refuse('POST wave', 'npm error code ETARGET\nnpm error notarget No matching version')
    const report = await reportWhere(fleet, (r) => r.applied === '7')
    expect(report.failures).toEqual([
      { module: 'wave', action: 'upgrade', message: 'npm error code ETARGET' },
    ])
    // Many rounds (flowadmin holds nothing), one attempt.
    const after = fleet.polls().length
    while (fleet.polls().length < after + 5) await sleep(100)
    expect(fleet.nodeRed.changes()).toHaveLength(1)
    fleet.stub.fleet.setDesired(desiredState('8', { installs: [{ module: 'wave', version: '2.0.0' }] }))
    await reportWhere(fleet, (r) => r.applied === '8')
    expect(fleet.nodeRed.changes()).toHaveLength(2)
  }, 30_000)
})

describe('changes made by hand', () => {
  test('a set disabled by hand: told with who did it, and enabled again as the desired state says', async () => {
    fleet = await startFleetInstance({
      hold: 15,
      modules: [kit],
      desired: desiredState('3', { modules: [kitEnabled] }),
    })
    await reportWhere(fleet, (r) => r.applied === '3')
    const done = Date.now()
    fleet.nodeRed.byHand.setEnabled('kit', 'b', false, 'alice')
    const told = await reportWhere(fleet, (r) => (r.changes as unknown[]).length > 0)
    expect(told.changes).toEqual([{ module: 'kit', action: 'disable', by: 'alice', at: expect.any(Number) }])
    const undone = await reportWhere(fleet, (r) => (r.reverted as unknown[]).length > 0)
    expect(undone.reverted).toEqual([{ module: 'kit', action: 'enable' }])
    expect(fleet.stub.fleet.reports.at(-1)?.at ?? 0).toBeLessThan(done + 2000)
    expect(fleet.nodeRed.changes()).toEqual(['PUT /nodes/kit {"enabled":true}'])
    expect(fleet.nodeRed.modules.get('kit')?.sets.every((set) => set.enabled)).toBe(true)
    // Told once, undone once; the agent's own change is no hand change.
    await sleep(1500)
    expect(fleet.reports().flatMap((r) => r.changes as unknown[])).toHaveLength(1)
    expect(fleet.reports().flatMap((r) => r.reverted as unknown[])).toHaveLength(1)
  }, 30_000)

  test('a module removed by hand, whose audit comes once npm is done: told with who removed it, once', async () => {
    fleet = await startFleetInstance({
      hold: 15,
      modules: [wave('1.0.0'), kit],
      desired: desiredState('5', { modules: [kitEnabled] }),
    })
    await reportWhere(fleet, (r) => r.applied === '5')
    // Gone from GET /nodes at once; Node-RED names who removed it 2.5 s later (npm's time).
    fleet.nodeRed.byHand.remove('wave', 'dave', 2500)
    const told = await reportWhere(fleet, (r) => (r.changes as unknown[]).length > 0)
    expect(told.changes).toEqual([{ module: 'wave', action: 'remove', by: 'dave', at: expect.any(Number) }])
    expect(fleet.reports().flatMap((r) => r.changes as unknown[])).toHaveLength(1)
  }, 30_000)

  test('a module removed by hand is installed again; one installed by hand that nothing decides stays', async () => {
    fleet = await startFleetInstance({
      hold: 15,
      modules: [wave('1.0.0')],
      desired: desiredState('4', { installs: [{ module: 'wave', version: '1.0.0' }] }),
    })
    await reportWhere(fleet, (r) => r.applied === '4')
    fleet.nodeRed.byHand.remove('wave', 'bob')
    fleet.nodeRed.byHand.install('extra', '0.1.0', 'carol')
    await reportWhere(fleet, (r) => (r.reverted as unknown[]).length > 0)
    await waitFor(
      () => (fleet?.reports().flatMap((r) => r.changes as unknown[]).length ?? 0) >= 2,
      () => JSON.stringify(fleet?.reports()),
    )
    const changes = fleet.reports().flatMap((r) => r.changes as Array<Record<string, unknown>>)
    expect(changes).toEqual(
      expect.arrayContaining([
        { module: 'wave', action: 'remove', by: 'bob', at: expect.any(Number) },
        { module: 'extra', action: 'install', version: '0.1.0', by: 'carol', at: expect.any(Number) },
      ]),
    )
    expect(changes).toHaveLength(2)
    expect(fleet.reports().flatMap((r) => r.reverted as unknown[])).toEqual([
      { module: 'wave', action: 'install' },
    ])
    expect(fleet.nodeRed.changes()).toEqual(['POST /nodes {"module":"wave","version":"1.0.0"}'])
    expect([...fleet.nodeRed.modules.keys()].sort()).toEqual(['extra', 'wave'])
  }, 30_000)

  test('a whole module disabled by hand, which Node-RED 4.1 does not log: told without a name', async () => {
    fleet = await startFleetInstance({ hold: 15, modules: [kit], desired: desiredState('5') })
    await reportWhere(fleet, (r) => r.applied === '5')
    fleet.nodeRed.byHand.setModuleEnabled('kit', false)
    const told = await reportWhere(fleet, (r) => (r.changes as unknown[]).length > 0)
    expect(told.changes).toEqual([{ module: 'kit', action: 'disable', by: null, at: expect.any(Number) }])
    // Nothing decides kit: it stays as it was made.
    await sleep(1500)
    expect(fleet.nodeRed.changes()).toEqual([])
    expect(fleet.reports().flatMap((r) => r.reverted as unknown[])).toEqual([])
  }, 30_000)
})
