import type { FlowVariable, InstanceFlows, NewRollout, RolloutOutcome, Stores } from '@flowadmin/core'
import { describe, expect, it } from 'vitest'
import { type ContractPart, MINUTE, T0 } from './contract-part.js'

const rollout = (id: string, overrides: Partial<NewRollout> = {}): NewRollout => ({
  id,
  group: 'line-1',
  snapshot: 'snap-1',
  kind: 'rollout',
  strategy: { kind: 'all' },
  instances: ['press-1', 'press-2'],
  released: true,
  state: 'pending',
  reason: null,
  createdBy: 'alice',
  createdAt: T0,
  updatedAt: T0,
  ...overrides,
})

const outcome = (
  rolloutId: string,
  instance: string,
  overrides: Partial<RolloutOutcome> = {},
): RolloutOutcome => ({
  rollout: rolloutId,
  instance,
  outcome: 'succeeded',
  rev: 'rev-1',
  message: null,
  missingCredentials: [],
  at: T0,
  ...overrides,
})

const flows = (instance: string, overrides: Partial<InstanceFlows> = {}): InstanceFlows => ({
  instance,
  rollout: 'r1',
  deployedRev: 'rev-1',
  rev: 'rev-1',
  drift: null,
  at: T0,
  ...overrides,
})

const groupVariable = (group: string, name: string, overrides: Partial<FlowVariable> = {}): FlowVariable => ({
  scope: { kind: 'group', group },
  name,
  value: `${group}/${name}`,
  secret: false,
  by: 'alice',
  at: T0,
  ...overrides,
})

const instanceVariable = (
  instance: string,
  name: string,
  overrides: Partial<FlowVariable> = {},
): FlowVariable => ({
  scope: { kind: 'instance', instance },
  name,
  value: `${instance}/${name}`,
  secret: false,
  by: 'alice',
  at: T0,
  ...overrides,
})

/** How much `work` moved the fleet's revision. */
const bumps = async (stores: Stores, work: () => Promise<unknown>): Promise<number> => {
  const before = await stores.fleet.revision()
  await work()
  return (await stores.fleet.revision()) - before
}

/**
 * The rollout store's part of the store contract: rollouts numbered in order and changed only
 * from the state they still have, outcomes and flows kept one each, variables and modes; every
 * change an instance's poll must see bumps the fleet's revision.
 */
export const describeRolloutContract: ContractPart = (stores, twoConnections) => {
  describe('rollouts: of snapshots to groups', () => {
    it('numbers rollouts 1, 2, … as made, keeps each whole, and lists them by sequence', async () => {
      const { rollouts } = stores()
      expect(await rollouts.list()).toEqual([])
      const first = rollout('r1')
      const second = rollout('r2', {
        group: 'line-2',
        kind: 'rollback',
        strategy: { kind: 'staged', first: 2 },
        instances: ['weld-1', 'weld-2', 'weld-3'],
        released: false,
        createdBy: null,
        createdAt: T0 + MINUTE,
        updatedAt: T0 + MINUTE,
      })
      const third = rollout('r0', { snapshot: 'snap-2', instances: [] })
      expect(await rollouts.create(first)).toBe(1)
      expect(await rollouts.create(second)).toBe(2)
      expect(await rollouts.create(third)).toBe(3)
      expect(await rollouts.find('r2')).toEqual({ ...second, sequence: 2 })
      expect(await rollouts.find('r1')).toEqual({ ...first, sequence: 1 })
      expect(await rollouts.find('nope')).toBeNull()
      expect(await rollouts.list()).toEqual([
        { ...first, sequence: 1 },
        { ...second, sequence: 2 },
        { ...third, sequence: 3 },
      ])
    })

    it('bumps the revision with every rollout made', async () => {
      const current = stores()
      expect(await bumps(current, () => current.rollouts.create(rollout('r1')))).toBe(1)
      expect(await bumps(current, () => current.rollouts.create(rollout('r2', { released: false })))).toBe(1)
    })

    it('changes a rollout only from the state and release it still has, bumping the revision when released changes or it stops', async () => {
      const current = stores()
      const { rollouts } = current
      const made = rollout('r1', {
        strategy: { kind: 'staged', first: 1 },
        released: false,
        state: 'pending',
      })
      await rollouts.create(made)
      const running = { state: 'running', released: false, reason: null, updatedAt: T0 + 1 } as const
      // Another state, or another release, than the rollout has: nothing changes.
      const stale = () => rollouts.update('r1', { state: 'running', released: false }, running)
      expect(await bumps(current, async () => expect(await stale()).toBe(false))).toBe(0)
      const wrongRelease = () => rollouts.update('r1', { state: 'pending', released: true }, running)
      expect(await bumps(current, async () => expect(await wrongRelease()).toBe(false))).toBe(0)
      expect(await rollouts.find('r1')).toEqual({ ...made, sequence: 1 })
      // From what it has: changed; the release is the same, so the revision is too.
      const start = () => rollouts.update('r1', { state: 'pending', released: false }, running)
      expect(await bumps(current, async () => expect(await start()).toBe(true))).toBe(0)
      expect(await rollouts.find('r1')).toEqual({ ...made, sequence: 1, state: 'running', updatedAt: T0 + 1 })
      // Its first stage succeeded: released, which instances' polls see.
      const release = () =>
        rollouts.update(
          'r1',
          { state: 'running', released: false },
          { state: 'running', released: true, reason: null, updatedAt: T0 + 2 },
        )
      expect(await bumps(current, async () => expect(await release()).toBe(true))).toBe(1)
      const stop = () =>
        rollouts.update(
          'r1',
          { state: 'running', released: true },
          { state: 'failed', released: true, reason: 'press-2: deploy refused', updatedAt: T0 + 3 },
        )
      expect(await bumps(current, async () => expect(await stop()).toBe(true))).toBe(0)
      expect(await rollouts.find('r1')).toEqual({
        ...made,
        sequence: 1,
        released: true,
        state: 'failed',
        reason: 'press-2: deploy refused',
        updatedAt: T0 + 3,
      })
      expect(await release()).toBe(false)
      // Stopped (replaced by a newer one): instances joining later are no longer reached.
      await rollouts.create(rollout('r2', { released: true, state: 'running' }))
      const replaced = () =>
        rollouts.update(
          'r2',
          { state: 'running', released: true },
          { state: 'stopped', released: true, reason: 'replaced by rollout r3', updatedAt: T0 + 4 },
        )
      expect(await bumps(current, async () => expect(await replaced()).toBe(true))).toBe(1)
      expect(
        await rollouts.update('nope', { state: 'pending', released: false }, { ...running, released: true }),
      ).toBe(false)
    })

    it('gives racing saves distinct sequences, one after another, each bumping the revision', async () => {
      const racing = await twoConnections()
      const start = await racing(0).fleet.revision()
      const sequences = await Promise.all(
        Array.from({ length: 6 }, (_, i) => racing(i).rollouts.create(rollout(`r${i}`))),
      )
      expect([...sequences].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6])
      const listed = await stores().rollouts.list()
      expect(listed.map((each) => each.sequence)).toEqual([1, 2, 3, 4, 5, 6])
      for (const [i, sequence] of sequences.entries()) {
        expect(listed.find((each) => each.id === `r${i}`)?.sequence).toBe(sequence)
      }
      expect(await racing(1).fleet.revision()).toBe(start + 6)
    })

    it('lets exactly one of racing changes from the same state through', async () => {
      const racing = await twoConnections()
      await stores().rollouts.create(rollout('r1', { released: false }))
      const start = await racing(0).fleet.revision()
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          racing(i).rollouts.update(
            'r1',
            { state: 'pending', released: false },
            { state: 'running', released: true, reason: `change ${i}`, updatedAt: T0 + i },
          ),
        ),
      )
      expect(results.filter((each) => each)).toHaveLength(1)
      const winner = results.indexOf(true)
      expect(await racing(1).rollouts.find('r1')).toMatchObject({
        state: 'running',
        released: true,
        reason: `change ${winner}`,
        updatedAt: T0 + winner,
      })
      expect(await racing(1).fleet.revision()).toBe(start + 1)
    })
  })

  describe('rollouts: outcomes and instances’ flows', () => {
    it('keeps one outcome an instance and rollout, the latest, listed by instance', async () => {
      const current = stores()
      const { rollouts } = current
      expect(await rollouts.outcomes('r1')).toEqual([])
      const failed = outcome('r1', 'press-2', {
        outcome: 'failed',
        rev: null,
        message: 'module node-red-dashboard@3.6.5 not installed',
        missingCredentials: ['n1', 'n2'],
      })
      const saved = async () => {
        await rollouts.saveOutcome(failed)
        await rollouts.saveOutcome(outcome('r1', 'press-1'))
        await rollouts.saveOutcome(outcome('r2', 'press-1', { rev: 'rev-9' }))
        await rollouts.saveOutcome(outcome('r1', 'Zoë-7', { at: T0 + 5 }))
      }
      // Outcomes are not what a poll sees.
      expect(await bumps(current, saved)).toBe(0)
      expect(await rollouts.outcomes('r1')).toEqual([
        outcome('r1', 'Zoë-7', { at: T0 + 5 }),
        outcome('r1', 'press-1'),
        failed,
      ])
      const retried = outcome('r1', 'press-2', { rev: 'rev-3', at: T0 + MINUTE })
      await rollouts.saveOutcome(retried)
      expect(await rollouts.outcomes('r1')).toEqual([
        outcome('r1', 'Zoë-7', { at: T0 + 5 }),
        outcome('r1', 'press-1'),
        retried,
      ])
      expect(await rollouts.outcomes('r2')).toEqual([outcome('r2', 'press-1', { rev: 'rev-9' })])
      expect(await rollouts.outcomes('nope')).toEqual([])
    })

    it('keeps each instance’s flows, the latest, listed by instance', async () => {
      const current = stores()
      const { rollouts } = current
      expect(await rollouts.flows()).toEqual([])
      const drifted = flows('press-2', {
        rev: 'rev-7',
        drift: { rev: 'rev-7', by: 'bob', at: T0 + MINUTE },
        at: T0 + MINUTE,
      })
      const fresh = flows('weld-1', { rollout: null, deployedRev: null, rev: null })
      const saved = async () => {
        await rollouts.saveFlows(drifted)
        await rollouts.saveFlows(flows('press-1'))
        await rollouts.saveFlows(fresh)
        await rollouts.saveFlows(
          flows('press-1', { rollout: 'r2', deployedRev: 'rev-2', rev: 'rev-2', at: T0 + 2 }),
        )
      }
      expect(await bumps(current, saved)).toBe(0)
      expect(await rollouts.flows()).toEqual([
        flows('press-1', { rollout: 'r2', deployedRev: 'rev-2', rev: 'rev-2', at: T0 + 2 }),
        drifted,
        fresh,
      ])
      const restored = flows('press-2', { rev: 'rev-8', deployedRev: 'rev-8', at: T0 + 2 * MINUTE })
      const anonymous = flows('weld-1', { drift: { rev: 'rev-5', by: null, at: T0 + 3 }, rev: 'rev-5' })
      await rollouts.saveFlows(restored)
      await rollouts.saveFlows(anonymous)
      expect(await rollouts.flows()).toEqual([
        flows('press-1', { rollout: 'r2', deployedRev: 'rev-2', rev: 'rev-2', at: T0 + 2 }),
        restored,
        anonymous,
      ])
    })
  })

  describe('rollouts: variables and modes', () => {
    it('keeps one variable a scope and name, listed groups first, then instances, each by name', async () => {
      const current = stores()
      const { rollouts } = current
      expect(await rollouts.variables()).toEqual([])
      const set = [
        instanceVariable('press-1', 'B_HOST'),
        groupVariable('line-2', 'A_PORT'),
        instanceVariable('Zoë-7', 'Z'),
        groupVariable('line-1', 'b_host'),
        groupVariable('line-1', 'A_PORT', { secret: true, value: 'sealed:AAAA', by: null }),
        // The same name for an instance named like a group: another variable.
        instanceVariable('line-1', 'A_PORT'),
        groupVariable('Line-0', 'A_PORT'),
      ]
      for (const variable of set) expect(await bumps(current, () => rollouts.setVariable(variable))).toBe(1)
      const replaced = groupVariable('line-2', 'A_PORT', { value: '1881', by: 'bob', at: T0 + MINUTE })
      expect(await bumps(current, () => rollouts.setVariable(replaced))).toBe(1)
      expect(await rollouts.variables()).toEqual([
        groupVariable('Line-0', 'A_PORT'),
        groupVariable('line-1', 'A_PORT', { secret: true, value: 'sealed:AAAA', by: null }),
        groupVariable('line-1', 'b_host'),
        replaced,
        instanceVariable('Zoë-7', 'Z'),
        instanceVariable('line-1', 'A_PORT'),
        instanceVariable('press-1', 'B_HOST'),
      ])
    })

    it('deletes a variable of its scope and name, bumping the revision only when it was there', async () => {
      const current = stores()
      const { rollouts } = current
      await rollouts.setVariable(groupVariable('line-1', 'HOST'))
      await rollouts.setVariable(instanceVariable('line-1', 'HOST'))
      let deleted: boolean | null = null
      const remove = (scope: FlowVariable['scope'], name: string) => async () => {
        deleted = await rollouts.deleteVariable(scope, name)
      }
      expect(await bumps(current, remove({ kind: 'group', group: 'line-1' }, 'host'))).toBe(0)
      expect(deleted).toBe(false)
      expect(await bumps(current, remove({ kind: 'group', group: 'line-2' }, 'HOST'))).toBe(0)
      expect(deleted).toBe(false)
      expect(await bumps(current, remove({ kind: 'group', group: 'line-1' }, 'HOST'))).toBe(1)
      expect(deleted).toBe(true)
      expect(await rollouts.variables()).toEqual([instanceVariable('line-1', 'HOST')])
      expect(await bumps(current, remove({ kind: 'group', group: 'line-1' }, 'HOST'))).toBe(0)
      expect(deleted).toBe(false)
      expect(await bumps(current, remove({ kind: 'instance', instance: 'line-1' }, 'HOST'))).toBe(1)
      expect(deleted).toBe(true)
      expect(await rollouts.variables()).toEqual([])
    })

    it('keeps each group’s mode, report unless set, bumping the revision when it changes only', async () => {
      const current = stores()
      const { rollouts } = current
      let changed: boolean | null = null
      const set = (group: string, mode: 'report' | 'enforce') => async () => {
        changed = await rollouts.setMode(group, mode)
      }
      expect(await rollouts.enforced()).toEqual([])
      expect(await bumps(current, set('line-2', 'report'))).toBe(0)
      expect(changed).toBe(false)
      expect(await bumps(current, set('line-2', 'enforce'))).toBe(1)
      expect(changed).toBe(true)
      expect(await bumps(current, set('line-2', 'enforce'))).toBe(0)
      expect(changed).toBe(false)
      expect(await bumps(current, set('line-1', 'enforce'))).toBe(1)
      expect(await bumps(current, set('Zoë-7', 'enforce'))).toBe(1)
      expect(await rollouts.enforced()).toEqual(['Zoë-7', 'line-1', 'line-2'])
      expect(await bumps(current, set('line-2', 'report'))).toBe(1)
      expect(changed).toBe(true)
      expect(await bumps(current, set('line-2', 'report'))).toBe(0)
      expect(changed).toBe(false)
      expect(await rollouts.enforced()).toEqual(['Zoë-7', 'line-1'])
      expect(await bumps(current, set('line-2', 'enforce'))).toBe(1)
      expect(await rollouts.enforced()).toEqual(['Zoë-7', 'line-1', 'line-2'])
    })
  })

  describe('rollouts: texts', () => {
    it('keeps who, why, revs, messages and values as they were written, whatever the text', async () => {
      const { rollouts } = stores()
      for (const [index, text] of ['a\u0000b', 'c\\u0041d', 'Zoë 👋 温度', 'e\\f', ''].entries()) {
        const id = `r${index}`
        const made = rollout(id, { createdBy: text, reason: text, released: false })
        await rollouts.create(made)
        expect(await rollouts.find(id)).toMatchObject({ createdBy: text, reason: text })
        await rollouts.update(
          id,
          { state: 'pending', released: false },
          { state: 'stopped', released: false, reason: `${text}!`, updatedAt: T0 + 1 },
        )
        expect((await rollouts.list()).find((each) => each.id === id)).toMatchObject({
          createdBy: text,
          reason: `${text}!`,
        })
        const said = outcome(id, 'press-1', { rev: text, message: text, missingCredentials: [text] })
        await rollouts.saveOutcome(said)
        expect(await rollouts.outcomes(id)).toEqual([said])
        const ran = flows(`press-${index}`, {
          deployedRev: text,
          rev: `${text}?`,
          drift: { rev: `${text}?`, by: text, at: T0 },
        })
        await rollouts.saveFlows(ran)
        expect((await rollouts.flows()).find((each) => each.instance === ran.instance)).toEqual(ran)
        const variable = instanceVariable(`press-${index}`, 'V', { value: text, by: text })
        await rollouts.setVariable(variable)
        expect((await rollouts.variables()).find((each) => each.value === text)).toEqual(variable)
      }
      const big = JSON.stringify({ pem: 'x'.repeat(256 * 1024), note: '\u0000 \\ 👋' })
      await rollouts.setVariable(groupVariable('line-1', 'BIG', { value: big, secret: true }))
      expect((await rollouts.variables()).find((each) => each.name === 'BIG')?.value).toBe(big)
    })
  })
}
