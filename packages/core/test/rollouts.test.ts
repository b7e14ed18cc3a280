// Rollouts in the core over the memory store: made to a group's known instances, followed through
// the outcomes instances report (staged, failed, replaced), each instance's target as its poll
// says it, rollback, drift from what the last rollout deployed, modes and variables, and rights.
import { createMemoryStores } from '@flowadmin/adapter-memory'
import { createCoreWithDoubles } from '@flowadmin/testkit'
import { describe, expect, it } from 'vitest'
import { operator, type UserPrincipal } from '../src/auth/principal.js'
import { report } from './fleet-fixtures.js'

const FLOWS = [
  { id: 't1', type: 'tab', label: 'Line' },
  { id: 'n1', type: 'inject', z: 't1', wires: [] },
]

const person = (username: string, grants: string[]): UserPrincipal => ({
  kind: 'user',
  username,
  clientId: 'node-red-admin',
  permissions: grants,
  tokenId: `t-${username}`,
  tokenKind: 'api',
  audience: 'flowadmin',
  signedInAt: Date.UTC(2026, 0, 1),
  signIn: null,
})

async function rolloutWorld() {
  const world = createCoreWithDoubles({
    stores: createMemoryStores(),
    adminAuth: () => null,
    fleet: {},
    access: { groups: { line: ['press-*'], source: ['source-1'] } },
  })
  const fleet = world.core.fleet
  if (fleet === null) throw new Error('fleet mode is off')
  let sequence = 0
  /** The instance reports once: the fleet knows it. */
  const join = async (id: string) => {
    sequence += 1
    const saved = await fleet.report(id, 'fleet', report(), sequence, null)
    if (!saved.ok) throw new Error(saved.error.code)
  }
  for (const id of ['press-1', 'press-2', 'press-3', 'source-1']) await join(id)
  const snapshot = async (name: string) => {
    const made = await fleet.snapshots.create(operator, { name, flows: FLOWS, modules: [] }, null)
    if (!made.ok) throw new Error(made.error.code)
    return made.value.id
  }
  /** What the instance's poll says of its flows now. */
  const target = async (id: string) => fleet.rollouts.target(id, (await fleet.desired()).version)
  const succeed = (instance: string, rollout: string, rev = `rev-${instance}`) =>
    fleet.rollouts.report(instance, {
      rollout,
      outcome: 'succeeded',
      rev,
      message: null,
      missingCredentials: [],
      restored: false,
    })
  const fail = (instance: string, rollout: string) =>
    fleet.rollouts.report(instance, {
      rollout,
      outcome: 'failed',
      rev: null,
      message: 'npm: no such module',
      missingCredentials: [],
      restored: false,
    })
  const state = async (id: string) => {
    const found = await fleet.rollouts.find(id)
    if (!found.ok) throw new Error(found.error.code)
    return found.value
  }
  return { ...world, fleet, join, snapshot, target, succeed, fail, state }
}

const accepted = <T>(result: { ok: true; value: T } | { ok: false; error: { code: string } }): T => {
  if (!result.ok) throw new Error(result.error.code)
  return result.value
}

describe('rollouts', () => {
  it('reaches the group’s known instances at once, and succeeds once each said so', async () => {
    const w = await rolloutWorld()
    const s1 = await w.snapshot('line')
    const r = accepted(await w.fleet.rollouts.start(operator, null, 'line', s1, { kind: 'all' }))
    expect(r).toMatchObject({
      instances: ['press-1', 'press-2', 'press-3'],
      released: true,
      state: 'pending',
    })
    expect(await w.target('press-2')).toEqual({ rollout: r.id, snapshot: s1, mode: 'report', variables: '0' })
    expect(await w.target('source-1')).toBeNull()
    expect(accepted(await w.succeed('press-1', r.id))).toBeUndefined()
    expect(await w.state(r.id)).toMatchObject({ state: 'running', waiting: ['press-2', 'press-3'] })
    await w.succeed('press-2', r.id)
    await w.succeed('press-3', r.id)
    expect(await w.state(r.id)).toMatchObject({ state: 'succeeded', waiting: [] })
    expect(w.events.ofType('fleet.rollout_finished')).toEqual([
      expect.objectContaining({ rollout: r.id, state: 'succeeded', reason: null }),
    ])
    // An instance that joins the group later gets the group's target.
    await w.join('press-4')
    expect((await w.target('press-4'))?.rollout).toBe(r.id)
  })

  it('stages: the rest only once the first succeeded; a first failure stops it and leaves them alone', async () => {
    const w = await rolloutWorld()
    const s1 = await w.snapshot('line')
    const s2 = await w.snapshot('line')
    const first = accepted(await w.fleet.rollouts.start(operator, null, 'line', s1, { kind: 'all' }))
    for (const id of ['press-1', 'press-2', 'press-3']) await w.succeed(id, first.id)
    const staged = accepted(
      await w.fleet.rollouts.start(operator, null, 'line', s2, { kind: 'staged', first: 1 }),
    )
    expect((await w.target('press-1'))?.rollout).toBe(staged.id)
    expect((await w.target('press-2'))?.rollout).toBe(first.id)
    await w.succeed('press-1', staged.id)
    expect(await w.state(staged.id)).toMatchObject({
      released: true,
      state: 'running',
      waiting: ['press-2', 'press-3'],
    })
    expect((await w.target('press-2'))?.rollout).toBe(staged.id)

    const s3 = await w.snapshot('line')
    const broken = accepted(
      await w.fleet.rollouts.start(operator, null, 'line', s3, { kind: 'staged', first: 1 }),
    )
    // The unfinished staged rollout is replaced.
    expect(await w.state(staged.id)).toMatchObject({
      state: 'stopped',
      reason: `replaced by rollout ${broken.id}`,
    })
    await w.fail('press-1', broken.id)
    expect(await w.state(broken.id)).toMatchObject({
      state: 'stopped',
      released: false,
      reason: 'press-1 failed: npm: no such module; the other instances were left as they were',
      waiting: [],
    })
    // press-2 is left with what reached it; a late joiner with the last rollout that reached everyone.
    expect((await w.target('press-2'))?.rollout).toBe(staged.id)
    await w.join('press-9')
    expect((await w.target('press-9'))?.rollout).toBe(first.id)
  })

  it('stops waiting for an instance removed or revoked before it said, and stops when all its first stage left', async () => {
    const w = await rolloutWorld()
    const s1 = await w.snapshot('line')
    const r = accepted(await w.fleet.rollouts.start(operator, null, 'line', s1, { kind: 'all' }))
    await w.succeed('press-1', r.id)
    expect(await w.fleet.remove('press-2', { username: 'admin', clientId: null, address: null })).toBe(true)
    expect(await w.state(r.id)).toMatchObject({ state: 'running', waiting: ['press-3'] })
    expect(
      await w.fleet.identities.revoke('press-3', { username: 'admin', clientId: null, address: null }),
    ).toBe('fleet')
    expect(await w.state(r.id)).toMatchObject({ state: 'succeeded', waiting: [] })
    expect(w.events.ofType('fleet.rollout_finished')).toEqual([
      expect.objectContaining({ rollout: r.id, state: 'succeeded' }),
    ])

    // Staged: its only first-stage instance leaves before saying; the rest are left alone.
    await w.join('press-5')
    await w.join('press-6')
    const staged = accepted(
      await w.fleet.rollouts.start(operator, null, 'line', s1, { kind: 'staged', first: 1 }),
    )
    expect(staged.instances).toEqual(['press-1', 'press-5', 'press-6'])
    await w.fleet.remove('press-1', { username: 'admin', clientId: null, address: null })
    // Read straight from the store: the removal itself moved it on.
    expect(await w.fleet.rollouts.list()).toContainEqual(
      expect.objectContaining({
        id: staged.id,
        state: 'stopped',
        released: false,
        reason: 'every instance of its first stage left before saying',
      }),
    )
    expect((await w.target('press-5'))?.rollout).toBe(r.id)
  })

  it('never releases a rollout a newer one of its group replaced, though another flowadmin moved it meanwhile', async () => {
    const w = await rolloutWorld()
    const s1 = await w.snapshot('line')
    const older = accepted(
      await w.fleet.rollouts.start(operator, null, 'line', s1, { kind: 'staged', first: 1 }),
    )
    // A newer rollout saved as another flowadmin would, whose stop of the older one lost a race.
    await w.stores.rollouts.create({
      ...older,
      id: 'BBBBBBBBBBBBBBBB',
      strategy: { kind: 'all' },
      released: true,
      state: 'pending',
    })
    await w.succeed('press-1', older.id)
    expect(await w.state(older.id)).toMatchObject({
      state: 'stopped',
      released: false,
      reason: 'replaced by rollout BBBBBBBBBBBBBBBB',
    })
    expect((await w.target('press-2'))?.rollout).toBe('BBBBBBBBBBBBBBBB')
  })

  it('fails a rollout made at once when an instance fails, and refuses an outcome of a rollout not its own', async () => {
    const w = await rolloutWorld()
    const r = accepted(
      await w.fleet.rollouts.start(operator, null, 'line', await w.snapshot('line'), { kind: 'all' }),
    )
    await w.fail('press-2', r.id)
    expect(await w.state(r.id)).toMatchObject({
      state: 'failed',
      reason: 'press-2 failed: npm: no such module',
    })
    expect(await w.succeed('source-1', r.id)).toEqual({
      ok: false,
      error: { code: 'not_targeted', instance: 'source-1', rollout: r.id },
    })
    expect(await w.succeed('press-1', 'AAAAAAAAAAAAAAAA')).toEqual({
      ok: false,
      error: { code: 'rollout_not_found', id: 'AAAAAAAAAAAAAAAA' },
    })
  })

  it('rolls back to the previous snapshot, and forth again', async () => {
    const w = await rolloutWorld()
    expect(await w.fleet.rollouts.rollback(operator, null, 'line')).toEqual({
      ok: false,
      error: { code: 'no_previous_target', group: 'line' },
    })
    const s1 = await w.snapshot('line')
    const s2 = await w.snapshot('line')
    await w.fleet.rollouts.start(operator, null, 'line', s1, { kind: 'all' })
    await w.fleet.rollouts.start(operator, null, 'line', s2, { kind: 'all' })
    const back = accepted(await w.fleet.rollouts.rollback(operator, null, 'line'))
    expect(back).toMatchObject({ kind: 'rollback', snapshot: s1, strategy: { kind: 'all' } })
    expect(accepted(await w.fleet.rollouts.rollback(operator, null, 'line')).snapshot).toBe(s2)
    expect(await w.fleet.rollouts.rollback(operator, null, 'nope')).toEqual({
      ok: false,
      error: { code: 'group_not_found', group: 'nope' },
    })
  })

  it('reports drift from what the last rollout deployed, once a rev, and who deployed', async () => {
    const w = await rolloutWorld()
    const r = accepted(
      await w.fleet.rollouts.start(operator, null, 'line', await w.snapshot('line'), { kind: 'all' }),
    )
    await w.succeed('press-1', r.id, 'rev-a')
    accepted(await w.fleet.rollouts.report('press-1', { rev: 'rev-a', by: null }))
    const group = async () => accepted(await w.fleet.rollouts.group('line')).instances[0]
    expect(await group()).toMatchObject({ instance: 'press-1', rollout: r.id, rev: 'rev-a', drift: null })
    await w.fleet.rollouts.report('press-1', { rev: 'rev-b', by: 'bob' })
    await w.fleet.rollouts.report('press-1', { rev: 'rev-b', by: 'bob' })
    expect(await group()).toMatchObject({
      rev: 'rev-b',
      deployedRev: 'rev-a',
      drift: { rev: 'rev-b', by: 'bob' },
    })
    expect(w.events.ofType('fleet.flows_drifted')).toEqual([
      expect.objectContaining({ instance: 'press-1', rollout: r.id, rev: 'rev-b', by: 'bob' }),
    ])
    // Restored (enforce): no drift any more.
    await w.fleet.rollouts.report('press-1', {
      rollout: r.id,
      outcome: 'succeeded',
      rev: 'rev-c',
      message: null,
      missingCredentials: [],
      restored: true,
    })
    expect(await group()).toMatchObject({ rev: 'rev-c', deployedRev: 'rev-c', drift: null })
    expect(w.events.ofType('fleet.flows_restored')).toHaveLength(1)
  })

  it('says a group’s mode in every poll of its instances, and the variables’ digest changes with them', async () => {
    const w = await rolloutWorld()
    const r = accepted(
      await w.fleet.rollouts.start(operator, null, 'line', await w.snapshot('line'), { kind: 'all' }),
    )
    accepted(await w.fleet.rollouts.setMode(operator, null, 'line', 'enforce'))
    expect(await w.target('press-1')).toMatchObject({ rollout: r.id, mode: 'enforce', variables: '0' })
    accepted(
      await w.fleet.variables.set(operator, null, { kind: 'group', group: 'line' }, 'SPEED', { value: '5' }),
    )
    const one = (await w.target('press-1'))?.variables
    accepted(
      await w.fleet.variables.set(operator, null, { kind: 'instance', instance: 'press-1' }, 'SPEED', {
        value: '7',
      }),
    )
    const two = (await w.target('press-1'))?.variables
    expect(new Set([one, two, '0']).size).toBe(3)
    expect((await w.target('press-2'))?.variables).toBe(one)
    const file = accepted(await w.fleet.rollouts.targetFile('press-1'))
    expect(file).toMatchObject({
      rollout: r.id,
      flows: FLOWS,
      modules: [],
      env: [{ name: 'SPEED', value: '7', type: 'str' }],
    })
    expect(await w.fleet.rollouts.targetFile('source-1')).toEqual({
      ok: false,
      error: { code: 'no_target', instance: 'source-1' },
    })
  })

  it('checks variables: names, values, scopes, and secrets without a key', async () => {
    const w = await rolloutWorld()
    const line = { kind: 'group' as const, group: 'line' }
    const set = (name: string, input: { value: unknown; secret?: unknown }, scope = line) =>
      w.fleet.variables.set(operator, null, scope, name, input)
    expect((await set('1BAD', { value: 'x' })).ok).toBe(false)
    expect((await set('OK', { value: 5 })).ok).toBe(false)
    expect((await set('OK', { value: 'x'.repeat(4097) })).ok).toBe(false)
    expect(await set('OK', { value: 'x' }, { kind: 'group', group: 'nope' } as never)).toEqual({
      ok: false,
      error: { code: 'group_not_found', group: 'nope' },
    })
    expect(await set('KEY', { value: 'x', secret: true })).toEqual({
      ok: false,
      error: { code: 'sealing_not_configured' },
    })
    accepted(await set('OK', { value: 'x' }))
    expect(accepted(await w.fleet.variables.list(line))).toEqual([
      { name: 'OK', value: 'x', secret: false, by: null, at: expect.any(Number) },
    ])
    expect(await w.fleet.variables.remove(operator, null, line, 'GONE')).toEqual({
      ok: false,
      error: { code: 'variable_not_found', scope: 'group:line', name: 'GONE' },
    })
    accepted(await w.fleet.variables.remove(operator, null, line, 'OK'))
    expect(accepted(await w.fleet.variables.list(line))).toEqual([])
    for (let i = 0; i < 200; i++) accepted(await set(`V${i}`, { value: 'x' }))
    expect(await set('ONE_MORE', { value: 'x' })).toEqual({
      ok: false,
      error: { code: 'invalid_request', message: 'a group or an instance has at most 200 variables' },
    })
    accepted(await set('V7', { value: 'changed' }))
  })

  it('lets a person act on a group by a grant on it or everywhere, not on flowadmin or another group alone', async () => {
    const w = await rolloutWorld()
    const may = (grants: string[]) =>
      w.core.permitsAt(person('p', grants), 'flows.write', { kind: 'group', group: 'line' }, null)
    expect(may(['flows.write'])).toBe(true)
    expect(may(['flows.write@line'])).toBe(true)
    expect(may(['flows.write@source'])).toBe(false)
    expect(may(['flows.write@flowadmin'])).toBe(false)
    expect(may(['flows.read@line'])).toBe(false)
    expect(w.core.permitsAt(operator, 'flows.write', { kind: 'group', group: 'line' }, null)).toBe(true)
    expect(w.events.ofType('permission.denied')).toHaveLength(3)
  })
})

describe('rollouts in the trail', () => {
  it('files an instance’s failed outcome and a rollout that did not succeed as failures', async () => {
    const { trailEntryOf } = await import('../src/trail/trail.js')
    const actor = { username: null, clientId: null, address: null }
    const outcome = (result: 'succeeded' | 'failed') =>
      trailEntryOf({
        type: 'fleet.rollout_outcome',
        at: 1,
        rollout: 'r1',
        instance: 'press-1',
        outcome: result,
        rev: null,
        message: null,
        missingCredentials: [],
        ...actor,
      }).outcome
    expect([outcome('succeeded'), outcome('failed')]).toEqual(['success', 'failure'])
    const finished = (state: 'succeeded' | 'stopped') =>
      trailEntryOf({
        type: 'fleet.rollout_finished',
        at: 1,
        rollout: 'r1',
        group: 'line',
        state,
        reason: null,
        ...actor,
      }).outcome
    expect([finished('succeeded'), finished('stopped')]).toEqual(['success', 'failure'])
  })
})
