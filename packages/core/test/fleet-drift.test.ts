import { describe, expect, it } from 'vitest'
import { fleetWorld, KIT, kit, report } from './fleet-fixtures.js'

const NEW = 'node-red-contrib-new'
const newDescriptor = (version = '2.0.0') => ({ name: NEW, version, sets: [{ name: 'n', types: ['n'] }] })
const newModule = (version = '2.0.0', pendingVersion?: string) => ({
  name: NEW,
  version,
  ...(pendingVersion !== undefined && { pendingVersion }),
  sets: [{ name: 'n', types: ['n'], enabled: true, loaded: true }],
})

/** A world where KIT is decided (both sets enabled) and NEW was installed through flowadmin at 2.0.0. */
async function decided() {
  const world = fleetWorld()
  const { core, installer, actor, send } = world
  await send('edge-0', report())
  await core.modules.setModuleEnabled(KIT, true, actor)
  installer.publish(newDescriptor())
  await core.modules.install({ module: NEW }, actor)
  const driftOf = async (id: string) => (await world.fleet.instances()).find((one) => one.id === id)?.drift
  return { ...world, driftOf }
}

describe('drift, judged on the instance’s own report', () => {
  it('pending until it applied the revision; applying while it says so; refused and failed with their messages', async () => {
    const { send, version, driftOf, core, actor } = await decided()
    await send('edge-1', report({ applied: await version() }))
    expect(await driftOf('edge-1')).toEqual([{ module: NEW, reason: 'pending' }])
    await core.modules.setNodeSetEnabled(KIT, 'b', false, actor)
    expect(await driftOf('edge-1')).toEqual([
      { module: KIT, reason: 'pending' },
      { module: NEW, reason: 'pending' },
    ])
    await send('edge-1', report({ applied: '1', applying: true }))
    expect(await driftOf('edge-1')).toEqual([
      { module: KIT, reason: 'applying' },
      { module: NEW, reason: 'applying' },
    ])
    await send(
      'edge-1',
      report({
        applied: await version(),
        failures: [
          { module: KIT, action: 'disable', message: 'Type in use: b' },
          { module: NEW, action: 'install', message: 'npm ERR! 404 Not Found' },
        ],
      }),
    )
    expect(await driftOf('edge-1')).toEqual([
      { module: KIT, reason: 'refused', message: 'Type in use: b' },
      { module: NEW, reason: 'install_failed', message: 'npm ERR! 404 Not Found' },
    ])
    // Removed through flowadmin: pending where it still is, then remove_failed with npm's message.
    await core.modules.remove(NEW, actor)
    await send('edge-1', report({ modules: [kit(true, false), newModule()], applied: '1' }))
    expect(await driftOf('edge-1')).toEqual([{ module: NEW, reason: 'pending' }])
    await send(
      'edge-1',
      report({
        modules: [kit(true, false), newModule()],
        applied: await version(),
        failures: [{ module: NEW, action: 'remove', message: 'EBUSY' }],
      }),
    )
    expect(await driftOf('edge-1')).toEqual([{ module: NEW, reason: 'remove_failed', message: 'EBUSY' }])
  })

  it('another version than flowadmin installed: restart_needed while Node-RED has it pending, version_mismatch else', async () => {
    const { send, version, driftOf } = await decided()
    await send('edge-1', report({ modules: [kit(), newModule('1.0.0')], applied: await version() }))
    expect(await driftOf('edge-1')).toEqual([
      { module: NEW, reason: 'version_mismatch', message: 'runs 1.0.0, desired 2.0.0' },
    ])
    await send('edge-1', report({ modules: [kit(), newModule('1.0.0', '2.0.0')], applied: await version() }))
    expect(await driftOf('edge-1')).toEqual([
      {
        module: NEW,
        reason: 'restart_needed',
        message: 'runs 1.0.0, 2.0.0 is installed and loads when Node-RED restarts',
      },
    ])
    await send('edge-1', report({ modules: [kit(), newModule()], applied: await version() }))
    expect(await driftOf('edge-1')).toEqual([])
    // It runs the desired version, and another one, installed by hand, loads at its next start.
    const at = Date.UTC(2026, 0, 1, 8)
    await send(
      'edge-1',
      report({
        modules: [kit(), newModule('2.0.0', '1.0.0')],
        applied: await version(),
        changes: [{ module: NEW, action: 'upgrade', version: '1.0.0', by: 'alice', at }],
      }),
    )
    expect(await driftOf('edge-1')).toEqual([
      {
        module: NEW,
        reason: 'version_mismatch',
        message: 'runs 2.0.0, desired 2.0.0; 1.0.0 is installed and loads when Node-RED restarts',
        by: 'alice',
        at,
      },
    ])
  })

  it('hand changes: who and when, kept from report to report while they hold, gone once reverted', async () => {
    const { send, version, driftOf } = await decided()
    const applied = await version()
    const at = Date.UTC(2026, 0, 1, 8)
    await send(
      'edge-1',
      report({
        modules: [kit(true, false), { ...kit(), name: 'by-hand' }],
        applied,
        changes: [
          { module: KIT, action: 'disable', by: 'alice', at },
          { module: NEW, action: 'remove', by: null, at: at + 1 },
          { module: 'by-hand', action: 'install', version: '1.0.0', by: 'bob', at: at + 2 },
        ],
      }),
    )
    const handDrift = [
      { module: KIT, reason: 'changed_by_hand', by: 'alice', at },
      { module: NEW, reason: 'removed_by_hand', by: null, at: at + 1 },
      { module: 'by-hand', reason: 'installed_by_hand', by: 'bob', at: at + 2 },
    ]
    expect(await driftOf('edge-1')).toEqual(handDrift)
    // The next report tells of nothing new: the hand changes still hold.
    await send('edge-1', report({ modules: [kit(true, false), { ...kit(), name: 'by-hand' }], applied }))
    expect(await driftOf('edge-1')).toEqual(handDrift)
    // The agent reverted the first two: only the install by hand stays.
    await send(
      'edge-1',
      report({
        modules: [kit(), newModule(), { ...kit(), name: 'by-hand' }],
        applied,
        reverted: [
          { module: KIT, action: 'disable' },
          { module: NEW, action: 'remove' },
        ],
      }),
    )
    expect(await driftOf('edge-1')).toEqual([
      { module: 'by-hand', reason: 'installed_by_hand', by: 'bob', at: at + 2 },
    ])
    // A set of it disabled by hand later (no one decided it): who installed it is still shown.
    await send(
      'edge-1',
      report({
        modules: [kit(), newModule(), { ...kit(true, false), name: 'by-hand' }],
        applied,
        changes: [{ module: 'by-hand', action: 'disable', by: 'carol', at: at + 3 }],
      }),
    )
    expect(await driftOf('edge-1')).toEqual([
      { module: 'by-hand', reason: 'installed_by_hand', by: 'bob', at: at + 2 },
    ])
  })

  it('a module removed by hand on one instance flags that instance alone', async () => {
    const { send, version, driftOf } = await decided()
    const applied = await version()
    for (const id of ['edge-1', 'edge-2', 'edge-3']) {
      await send(id, report({ modules: [kit(), newModule()], applied }))
    }
    await send(
      'edge-1',
      report({
        modules: [newModule()],
        applied,
        changes: [{ module: KIT, action: 'remove', by: 'carol', at: 5 }],
      }),
    )
    expect(await driftOf('edge-1')).toEqual([{ module: KIT, reason: 'removed_by_hand', by: 'carol', at: 5 }])
    expect(await driftOf('edge-2')).toEqual([])
    expect(await driftOf('edge-3')).toEqual([])
  })

  it('an undecided module is installed_by_hand wherever it is; a decided one only where a hand installed it', async () => {
    const { send, version, driftOf } = await decided()
    const applied = await version()
    const other = { ...kit(), name: 'other' }
    await send('edge-1', report({ modules: [kit(), newModule(), other], applied }))
    await send('edge-2', report({ modules: [newModule()], applied }))
    expect(await driftOf('edge-1')).toEqual([{ module: 'other', reason: 'installed_by_hand' }])
    expect(await driftOf('edge-2')).toEqual([])
  })
})

describe('outcomes as events', () => {
  it('fleet.applied only when the instance runs the version, once; version outcomes once each', async () => {
    const { send, version, events } = await decided()
    const applied = await version()
    const sent = { address: '10.0.0.7' }
    await send('edge-1', report({ modules: [kit(), newModule('1.0.0')], applied }), sent.address)
    await send('edge-1', report({ modules: [kit(), newModule('1.0.0')], applied }), sent.address)
    expect(events.ofType('fleet.applied')).toEqual([])
    expect(events.ofType('fleet.version_mismatch')).toEqual([
      {
        type: 'fleet.version_mismatch',
        at: expect.any(Number),
        instance: 'edge-1',
        module: NEW,
        version: '2.0.0',
        running: '1.0.0',
        username: null,
        clientId: 'fleet',
        address: '10.0.0.7',
      },
    ])
    await send('edge-1', report({ modules: [kit(), newModule('1.0.0', '2.0.0')], applied }))
    await send('edge-1', report({ modules: [kit(), newModule('1.0.0', '2.0.0')], applied }))
    expect(events.ofType('fleet.restart_needed')).toEqual([
      expect.objectContaining({ instance: 'edge-1', module: NEW, version: '2.0.0', running: '1.0.0' }),
    ])
    expect(events.ofType('fleet.applied')).toEqual([])
    // Restarted: it runs 2.0.0, with the same `applied`.
    await send('edge-1', report({ modules: [kit(), newModule()], applied }))
    await send('edge-1', report({ modules: [kit(), newModule()], applied }))
    expect(events.ofType('fleet.applied')).toEqual([
      expect.objectContaining({ instance: 'edge-1', version: applied, clientId: 'fleet' }),
    ])
  })

  it('each hand change and revert, and each new refusal, once per report saved; a stale report changes nothing', async () => {
    const { fleet, send, version, events, driftOf } = await decided()
    const applied = await version()
    const refusal = { module: KIT, action: 'enable' as const, message: 'Node-RED said no' }
    const told = report({
      modules: [kit(true, false), newModule()],
      applied,
      failures: [refusal],
      changes: [{ module: KIT, action: 'disable', by: 'alice', at: 7 }],
    })
    await send('edge-1', told)
    await send('edge-1', { ...told, changes: [] })
    expect(events.ofType('fleet.changed_by_hand')).toEqual([
      expect.objectContaining({
        instance: 'edge-1',
        module: KIT,
        action: 'disable',
        by: 'alice',
        changedAt: 7,
      }),
    ])
    expect(events.ofType('fleet.refused')).toEqual([
      expect.objectContaining({ instance: 'edge-1', ...refusal }),
    ])
    const newer = report({
      modules: [kit(), newModule()],
      applied,
      reverted: [{ module: KIT, action: 'disable' }],
    })
    expect(await fleet.report('edge-1', 'fleet', newer, 1_000, null)).toEqual({ ok: true, value: 'saved' })
    expect(events.ofType('fleet.reverted')).toEqual([
      expect.objectContaining({ instance: 'edge-1', module: KIT, action: 'disable' }),
    ])
    const count = events.events.length
    // A slow report arrives late: acknowledged, nothing changes.
    expect(await fleet.report('edge-1', 'fleet', told, 999, null)).toEqual({ ok: true, value: 'stale' })
    expect(events.events).toHaveLength(count)
    expect(await driftOf('edge-1')).toEqual([])
  })

  it('a report without a sequence (an older helper) is saved', async () => {
    const { fleet, send, driftOf } = await decided()
    await send('edge-1', report({ modules: [kit(true, false), newModule()], applied: '1' }))
    expect(
      await fleet.report(
        'edge-1',
        'fleet',
        report({ modules: [kit(), newModule()], applied: '1' }),
        null,
        null,
      ),
    ).toEqual({
      ok: true,
      value: 'saved',
    })
    expect(await driftOf('edge-1')).toEqual([])
  })
})
