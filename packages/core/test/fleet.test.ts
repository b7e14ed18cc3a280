import { createMemoryStores } from '@flowadmin/adapter-memory'
import { createEventRecorder, createFixedClock } from '@flowadmin/testkit'
import { describe, expect, it } from 'vitest'
import { createFleet } from '../src/fleet/fleet.js'
import { countingFleetStore, fleetWorld, KIT, kit, report } from './fleet-fixtures.js'

describe('the fleet’s desired state', () => {
  it('is the store’s revision, with this flowadmin’s hold; a report never changes it', async () => {
    const { fleet, stores, send } = fleetWorld({ holdSeconds: 20 })
    const empty = await fleet.desired()
    expect(empty).toEqual({
      version: String(await stores.fleet.revision()),
      prune: false,
      hold: 20,
      modules: [],
      installs: [],
      removals: [],
    })
    await send('edge-1', report())
    await send('edge-2', report({ modules: [kit(true, false)] }))
    expect(await fleet.desired()).toEqual(empty)
    await stores.modules.upsert({ name: KIT, version: '1.0.0', sets: [{ name: 'a', types: ['a'] }] })
    const decided = await fleet.desired()
    expect(decided.version).toBe(String(Number(empty.version) + 1))
    expect(decided.modules).toEqual([{ name: KIT, sets: [{ name: 'a', enabled: true }] }])
  })

  it('is built once per revision: a poll reads the revision alone, and no report', async () => {
    const stores = createMemoryStores()
    const { counted, calls } = countingFleetStore(stores.fleet)
    const clock = createFixedClock()
    const fleet = createFleet({ store: stores.modules, fleet: counted, clock, events: createEventRecorder() })
    await fleet.report('edge-1', 'fleet', report(), 1, null)
    expect((await fleet.poll('edge-1', 'fleet')).ok).toBe(true)
    calls.length = 0
    for (let i = 0; i < 5; i++) await fleet.poll('edge-1', 'fleet')
    expect(calls).toEqual(Array(5).fill('revision'))
    await stores.fleet.setPrune(true)
    calls.length = 0
    const polled = await fleet.poll('edge-1', 'fleet')
    expect(polled.ok && polled.value.prune).toBe(true)
    expect(calls).toEqual(['revision', 'desired'])
  })

  it('binds an id to its resource server, at its first poll or report', async () => {
    const { fleet } = fleetWorld()
    expect(await fleet.poll('edge-1', 'fleet')).toMatchObject({ ok: true })
    const conflict = { ok: false, error: { code: 'instance_conflict', instance: 'edge-1' } }
    expect(await fleet.poll('edge-1', 'other')).toEqual(conflict)
    expect(await fleet.report('edge-1', 'other', report(), 1, null)).toEqual(conflict)
  })

  it('writes this flowadmin’s prune to the store when it differs, and says whether the store agrees', async () => {
    const stores = createMemoryStores()
    const events = createEventRecorder()
    const deps = { store: stores.modules, fleet: stores.fleet, clock: createFixedClock(), events }
    const pruning = createFleet(deps, { prune: true })
    const keeping = createFleet(deps, { prune: false })
    expect(await keeping.syncSettings()).toBeNull()
    expect(await pruning.syncSettings()).toEqual({ setting: 'prune', from: false, to: true })
    expect(await pruning.syncSettings()).toBeNull()
    expect(events.ofType('fleet.settings_changed')).toEqual([
      expect.objectContaining({ setting: 'prune', from: false, to: true, username: null }),
    ])
    expect((await keeping.desired()).prune).toBe(true)
    expect(await pruning.settingsAgree()).toBe(true)
    expect(await keeping.settingsAgree()).toBe(false)
  })
})

describe('modules no operator decided', () => {
  it('are listed with the flags the instances show, never desired, and noted once each', async () => {
    const { core, fleet, send, events } = fleetWorld()
    await send('edge-1', report({ modules: [kit(true, false)] }))
    await send(
      'edge-2',
      report({ modules: [kit(true, true), { ...kit(), name: 'other', version: '2.0.0' }] }),
    )
    await send('edge-1', report({ modules: [kit(true, false)] }))
    const listed = await core.modules.list()
    expect(listed.map((module) => [module.name, module.nodes.map((set) => set.enabled)])).toEqual([
      [KIT, [true, false]],
      ['other', [true, true]],
    ])
    const [kitView] = await fleet.decorate([listed[0] as (typeof listed)[number]])
    expect(kitView?.decided).toBe(false)
    expect(await core.modules.get(KIT)).toMatchObject({ ok: true, value: { name: KIT } })
    expect((await fleet.desired()).modules).toEqual([])
    expect(events.ofType('fleet.module_reported').map((event) => [event.module, event.instance])).toEqual([
      [KIT, 'edge-1'],
      ['other', 'edge-2'],
    ])
  })

  it('are decided by an operator’s change, in one write: the sets not named keep the state shown', async () => {
    const { core, fleet, stores, send, events, actor } = fleetWorld()
    await send('edge-1', report({ modules: [kit(true, false)] }))
    await send('edge-2', report({ modules: [kit(true, true)] }))
    const before = await stores.fleet.revision()
    const adopted = await core.modules.setNodeSetEnabled(KIT, 'a', false, actor)
    expect(adopted).toMatchObject({ ok: true, value: { id: `${KIT}/a`, enabled: false } })
    // One write: the revision moved once, and the desired state never held a set enabled.
    expect(await stores.fleet.revision()).toBe(before + 1)
    expect((await fleet.desired()).modules).toEqual([
      {
        name: KIT,
        sets: [
          { name: 'a', enabled: false },
          { name: 'b', enabled: false },
        ],
      },
    ])
    expect(events.ofType('module.adopted')).toEqual([
      {
        type: 'module.adopted',
        at: expect.any(Number),
        module: KIT,
        sets: [
          { set: `${KIT}/a`, enabled: false },
          { set: `${KIT}/b`, enabled: false },
        ],
        ...actor,
      },
    ])
    expect(events.ofType('module.disabled')).toEqual([expect.objectContaining({ sets: [`${KIT}/a`] })])
    // Decided now: the state machine's rules apply (the same state again writes nothing).
    expect(await core.modules.setNodeSetEnabled(KIT, 'a', false, actor)).toMatchObject({ ok: true })
    expect(events.ofType('module.adopted')).toHaveLength(1)
    const [view] = await fleet.decorate((await core.modules.list()).slice(0, 1))
    expect(view?.decided).toBe(true)
  })

  it('are not decided when a set it would disable has a type the flows use: nothing changes', async () => {
    const { core, fleet, send, events, actor } = fleetWorld()
    await send('edge-1', report({ modules: [kit(true, true)], typesInUse: ['b'] }))
    await send('edge-2', report({ modules: [kit(true, false)] }))
    expect(await core.modules.setNodeSetEnabled(KIT, 'a', true, actor)).toEqual({
      ok: false,
      error: { code: 'type_in_use', types: ['b'], instances: ['edge-1'] },
    })
    expect((await fleet.desired()).modules).toEqual([])
    expect(events.ofType('module.adopted')).toEqual([])
    // Enabling the whole module disables nothing: decided.
    expect(await core.modules.setModuleEnabled(KIT, true, actor)).toMatchObject({ ok: true })
    expect(events.ofType('module.enabled')).toEqual([expect.objectContaining({ sets: [`${KIT}/b`] })])
  })

  it('removing one records its removal for every instance', async () => {
    const { core, fleet, send, actor } = fleetWorld()
    await send('edge-1', report())
    expect(await core.modules.remove(KIT, actor)).toEqual({ ok: true, value: undefined })
    expect((await fleet.desired()).removals).toEqual([KIT])
    expect((await core.modules.list()).map((module) => module.name)).toEqual([])
  })
})

describe('upgrades', () => {
  it('an install of another version of a module the fleet has records that version for every instance', async () => {
    const { core, fleet, installer, send, actor, version } = fleetWorld()
    const descriptor = {
      name: KIT,
      version: '1.0.0',
      sets: [
        { name: 'a', types: ['a'] },
        { name: 'b', types: ['b'] },
      ],
    }
    installer.publish(descriptor)
    expect(await core.modules.install({ module: KIT }, actor)).toMatchObject({ ok: true })
    await send('edge-1', report({ applied: await version() }))
    expect((await fleet.instances())[0]?.drift).toEqual([])
    installer.publish({ ...descriptor, version: '2.0.0' })
    expect(await core.modules.install({ module: KIT, version: '2.0.0' }, actor)).toMatchObject({
      ok: true,
      value: { version: '2.0.0' },
    })
    expect((await fleet.desired()).installs).toEqual([{ module: KIT, version: '2.0.0' }])
    expect((await fleet.instances())[0]?.drift).toEqual([{ module: KIT, reason: 'pending' }])
  })
})

describe('leases: connected', () => {
  it('a poll’s start connects an instance until hold + 10 s; a lost poll or an ended lease disconnects it, each once', async () => {
    const { fleet, clock, events } = fleetWorld({ holdSeconds: 15 })
    const edge = { id: 'edge-1', resourceServer: 'fleet' }
    await fleet.touch([edge])
    await fleet.touch([edge])
    expect(events.ofType('fleet.connected')).toEqual([
      {
        type: 'fleet.connected',
        at: clock.now(),
        instance: 'edge-1',
        resourceServer: 'fleet',
        username: null,
        clientId: 'fleet',
        address: null,
      },
    ])
    expect((await fleet.instances())[0]?.connected).toBe(true)
    clock.advance(24_999)
    await fleet.expire()
    expect((await fleet.instances())[0]?.connected).toBe(true)
    clock.advance(1)
    expect((await fleet.instances())[0]?.connected).toBe(false)
    await fleet.expire()
    await fleet.expire()
    expect(events.ofType('fleet.disconnected')).toHaveLength(1)
    await fleet.touch([edge])
    await fleet.release('edge-1', 'fleet')
    await fleet.release('edge-1', 'fleet')
    expect((await fleet.instances())[0]?.connected).toBe(false)
    expect(events.ofType('fleet.connected')).toHaveLength(2)
    expect(events.ofType('fleet.disconnected')).toHaveLength(2)
  })

  it('two flowadmin instances on one store say each connection and disconnection once', async () => {
    const stores = createMemoryStores()
    const clock = createFixedClock()
    const events = createEventRecorder()
    const deps = { store: stores.modules, fleet: stores.fleet, clock, events }
    const [a, b] = [createFleet(deps), createFleet(deps)]
    const edge = [{ id: 'edge-1', resourceServer: 'fleet' }]
    await Promise.all([a.touch(edge), b.touch(edge), a.touch(edge)])
    clock.advance(60_000)
    await Promise.all([a.expire(), b.expire()])
    expect(events.events.map((event) => event.type)).toEqual(['fleet.connected', 'fleet.disconnected'])
  })
})

describe('the answer of a change', () => {
  it('is settled once every connected instance that has the module applied it or refused it', async () => {
    const { core, fleet, send, actor, version } = fleetWorld()
    await send('edge-1', report())
    await send('edge-2', report())
    await fleet.touch([{ id: 'edge-1', resourceServer: 'fleet' }])
    await core.modules.setModuleEnabled(KIT, true, actor)
    await send('edge-1', report({ applied: await version() }))
    await core.modules.setNodeSetEnabled(KIT, 'b', false, actor)
    expect(await fleet.settled(KIT)).toBe(false)
    await send('edge-1', report({ applied: await version(), applying: true }))
    expect(await fleet.settled(KIT)).toBe(false)
    await send('edge-1', report({ modules: [kit(true, false)], applied: await version() }))
    // edge-2 is not connected: it does not count.
    expect(await fleet.settled(KIT)).toBe(true)
  })

  it('reads only the reports that changed since it last looked', async () => {
    const stores = createMemoryStores()
    const { counted } = countingFleetStore(stores.fleet)
    const asked: string[][] = []
    const watched = {
      ...counted,
      reports: (ids: readonly string[]) => {
        asked.push([...ids])
        return counted.reports(ids)
      },
    }
    const fleet = createFleet({
      store: stores.modules,
      fleet: watched,
      clock: createFixedClock(),
      events: createEventRecorder(),
    })
    for (let i = 0; i < 20; i++) await fleet.report(`edge-${i}`, 'fleet', report(), 1, null)
    await fleet.settled(KIT)
    asked.length = 0
    await fleet.report('edge-7', 'fleet', report({ applied: '1' }), 2, null)
    await fleet.settled(KIT)
    await fleet.instances()
    expect(asked).toEqual([['edge-7'], []])
  })
})
