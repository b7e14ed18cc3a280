import { createMemoryStores } from '@flowadmin/adapter-memory'
import { type InstanceRecord, type InstanceReport, webDigest } from '@flowadmin/core'
import { createEventRecorder, createFixedClock } from '@flowadmin/testkit'
import { describe, expect, it } from 'vitest'
import { createFleet } from '../src/fleet/fleet.js'

const KIT = 'node-red-contrib-kit'

const report = (overrides: Partial<InstanceReport> = {}): InstanceReport => ({
  nodeRedVersion: '4.1.2',
  modules: [
    {
      name: KIT,
      version: '1.0.0',
      sets: [
        { name: 'a', types: ['a'], enabled: true, loaded: true },
        { name: 'b', types: ['b'], enabled: false, loaded: false },
      ],
    },
  ],
  typesInUse: ['a'],
  applied: null,
  failures: [],
  ...overrides,
})

function setup(prune = false) {
  const stores = createMemoryStores()
  const clock = createFixedClock()
  const events = createEventRecorder()
  const fleet = createFleet(
    { store: stores.modules, fleet: stores.fleet, clock, digest: webDigest, events },
    { prune },
  )
  return { stores, clock, events, fleet }
}

describe('the fleet', () => {
  it('a module first reported joins the desired state as that instance has it; the version follows the state', async () => {
    const { fleet } = setup(true)
    const empty = await fleet.desired()
    expect(empty).toMatchObject({ prune: true, modules: [], installs: [], removals: [] })
    await fleet.report('edge-1', 'fleet', report(), null)
    const desired = await fleet.desired()
    expect(desired.modules).toEqual([
      {
        name: KIT,
        sets: [
          { name: 'a', enabled: true },
          { name: 'b', enabled: false },
        ],
      },
    ])
    expect(desired.version).not.toBe(empty.version)
    expect((await fleet.desired()).version).toBe(desired.version)
    // A second instance with other flags does not change what is desired.
    const flipped = report({
      modules: [
        {
          name: KIT,
          version: '1.0.0',
          sets: [
            { name: 'a', types: ['a'], enabled: true, loaded: true },
            { name: 'b', types: ['b'], enabled: true, loaded: true },
          ],
        },
      ],
    })
    await fleet.report('edge-2', 'fleet', flipped, null)
    expect((await fleet.desired()).version).toBe(desired.version)
  })

  it('binds an id to its resource server', async () => {
    const { fleet } = setup()
    expect(await fleet.poll('edge-1', 'fleet')).toMatchObject({ ok: true })
    expect(await fleet.poll('edge-1', 'other')).toEqual({
      ok: false,
      error: { code: 'instance_conflict', instance: 'edge-1' },
    })
    expect(await fleet.report('edge-1', 'other', report(), null)).toEqual({
      ok: false,
      error: { code: 'instance_conflict', instance: 'edge-1' },
    })
  })

  it('an id claimed by another resource server between the check and the write stays theirs', async () => {
    const stores = createMemoryStores()
    // The check sees an unknown id; the other resource server's report lands before the write.
    const racing = { ...stores.fleet, find: async () => null }
    const fleet = createFleet({
      store: stores.modules,
      fleet: racing,
      clock: createFixedClock(),
      digest: webDigest,
      events: createEventRecorder(),
    })
    expect(await fleet.report('victim', 'rs-b', report(), null)).toEqual({ ok: true, value: undefined })
    const conflict = { ok: false, error: { code: 'instance_conflict', instance: 'victim' } }
    expect(await fleet.poll('victim', 'rs-a')).toEqual(conflict)
    expect(await fleet.report('victim', 'rs-a', report({ modules: [] }), null)).toEqual(conflict)
    expect(await stores.fleet.find('victim')).toMatchObject({ resourceServer: 'rs-b', report: report() })
  })

  it('answers for many modules on many instances reading each report a bounded number of times', async () => {
    const stores = createMemoryStores()
    const [moduleCount, instanceCount] = [60, 12]
    // Every read of a reported module, however the fleet reaches it.
    let reads = 0
    const counted = (record: InstanceRecord): InstanceRecord =>
      record.report === null
        ? record
        : {
            ...record,
            report: {
              ...record.report,
              modules: new Proxy(record.report.modules, {
                get(target, key, receiver) {
                  if (typeof key === 'string' && /^\d+$/.test(key)) reads += 1
                  return Reflect.get(target, key, receiver)
                },
              }),
            },
          }
    const fleetStore = { ...stores.fleet, list: async () => (await stores.fleet.list()).map(counted) }
    const fleet = createFleet({
      store: stores.modules,
      fleet: fleetStore,
      clock: createFixedClock(),
      digest: webDigest,
      events: createEventRecorder(),
    })
    // Instance i lacks module k when (k + i) % 5 is 0: every module is on some instances only.
    const lacks = (k: number, i: number) => (k + i) % 5 === 0
    for (let i = 0; i < instanceCount; i++) {
      const modules = Array.from({ length: moduleCount }, (_, k) => ({
        name: `mod-${k}`,
        version: '1.0.0',
        sets: [{ name: 's', types: [`t${k}`], enabled: true, loaded: true }],
      })).filter((_, k) => !lacks(k, i))
      await fleet.report(`edge-${i}`, 'rs', report({ modules, typesInUse: [] }), null)
    }
    const views = (await stores.modules.list()).map((record) => ({
      name: record.name,
      version: record.version,
      nodes: [],
    }))
    const entries = moduleCount * instanceCount
    reads = 0
    const answer = await fleet.decorate(views)
    expect(reads).toBeLessThanOrEqual(10 * entries)
    expect(answer).toHaveLength(moduleCount)
    for (const view of answer) {
      const k = Number(view.name.slice('mod-'.length))
      const holders = Array.from({ length: instanceCount }, (_, i) => i).filter((i) => !lacks(k, i))
      expect(view.instances.map((state) => state.id)).toEqual(holders.map((i) => `edge-${i}`).sort())
      expect(view.instances.every((state) => state.drift?.reason === 'installed_by_hand')).toBe(true)
    }
    reads = 0
    const instances = await fleet.instances()
    expect(reads).toBeLessThanOrEqual(10 * entries)
    expect(instances[0]?.id).toBe('edge-0')
    expect(instances[0]?.drift).toHaveLength(moduleCount - moduleCount / 5)
  })

  it('says which instances use which types', async () => {
    const { fleet } = setup()
    await fleet.report('edge-1', 'fleet', report(), null)
    await fleet.report('edge-2', 'fleet', report({ typesInUse: ['b', 'inject'] }), null)
    expect([...((await fleet.typeUsage.typesInUse()) ?? [])].sort()).toEqual(['a', 'b', 'inject'])
    expect(await fleet.typeUsage.usedBy(['b'])).toEqual(['edge-2'])
    expect(await fleet.typeUsage.usedBy(['a', 'b'])).toEqual(['edge-1', 'edge-2'])
  })

  it('drift: pending, refused with Node-RED’s message, install failed, removal pending; connected for 40 s', async () => {
    const { fleet, stores, clock } = setup()
    await fleet.report('edge-1', 'fleet', report(), null)
    await stores.modules.setEnabled(KIT, ['a'], false)
    await fleet.recordInstall('node-red-contrib-new', 'install', '2.0.0')
    await stores.modules.upsert({
      name: 'node-red-contrib-new',
      version: '2.0.0',
      sets: [{ name: 'n', types: ['n'] }],
    })
    let [one] = await fleet.instances()
    expect(one?.drift).toEqual([
      { module: KIT, reason: 'pending' },
      { module: 'node-red-contrib-new', reason: 'pending' },
    ])
    await fleet.report(
      'edge-1',
      'fleet',
      report({
        failures: [
          { module: KIT, action: 'disable', message: 'Type in use: a' },
          { module: 'node-red-contrib-new', action: 'install', message: 'npm ERR! 404 Not Found' },
        ],
      }),
      null,
    )
    ;[one] = await fleet.instances()
    expect(one).toMatchObject({ connected: true, nodeRedVersion: '4.1.2' })
    expect(one?.drift).toEqual([
      { module: KIT, reason: 'refused', message: 'Type in use: a' },
      { module: 'node-red-contrib-new', reason: 'install_failed', message: 'npm ERR! 404 Not Found' },
    ])
    // Removed through flowadmin: pending on an instance that still has it; not adopted again.
    await fleet.recordInstall(KIT, 'remove', null)
    await stores.modules.remove(KIT)
    await fleet.report('edge-1', 'fleet', report(), null)
    expect((await fleet.desired()).removals).toEqual([KIT])
    expect((await fleet.desired()).modules.map((module) => module.name)).toEqual(['node-red-contrib-new'])
    ;[one] = await fleet.instances()
    expect(one?.drift).toContainEqual({ module: KIT, reason: 'pending' })
    clock.advance(40_001)
    ;[one] = await fleet.instances()
    expect(one?.connected).toBe(false)
  })

  it('an outcome is an event: a version applied, each new refusal once', async () => {
    const { fleet, events } = setup()
    const refusal = { module: KIT, action: 'disable' as const, message: 'Type in use: a' }
    await fleet.report('edge-1', 'fleet', report({ applied: 'v1', failures: [refusal] }), '10.0.0.7')
    await fleet.report('edge-1', 'fleet', report({ applied: 'v1', failures: [refusal] }), '10.0.0.7')
    expect(events.ofType('fleet.applied')).toEqual([
      {
        type: 'fleet.applied',
        at: expect.any(Number),
        instance: 'edge-1',
        version: 'v1',
        username: null,
        clientId: 'fleet',
        address: '10.0.0.7',
      },
    ])
    expect(events.ofType('fleet.refused')).toEqual([
      expect.objectContaining({
        instance: 'edge-1',
        module: KIT,
        action: 'disable',
        message: 'Type in use: a',
      }),
    ])
  })
})
