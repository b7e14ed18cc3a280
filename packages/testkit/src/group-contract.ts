import type { GroupAssignment } from '@flowadmin/core'
import { describe, expect, it } from 'vitest'
import { type ContractPart, T0 } from './contract-part.js'

const assignment = (
  group: string,
  instance: string,
  overrides: Partial<GroupAssignment> = {},
): GroupAssignment => ({
  group,
  instance,
  by: 'alice',
  at: T0,
  ...overrides,
})

/**
 * The group store's part of the store contract: assignments saved once, listed sorted, deleted,
 * each change counted in the fleet's revision.
 */
export const describeGroupContract: ContractPart = (stores, twoConnections) => {
  describe('groups: assignments', () => {
    it('saves an assignment once, lists them by group then instance, and deletes one', async () => {
      const { groups } = stores()
      expect(await groups.assignments()).toEqual([])
      expect(await groups.assign(assignment('line-2', 'weld-1'))).toBe(true)
      expect(await groups.assign(assignment('line-1', 'press-2', { by: null, at: T0 + 5 }))).toBe(true)
      expect(await groups.assign(assignment('line-1', 'press-1'))).toBe(true)
      expect(await groups.assign(assignment('line-1', 'Zoë-7'))).toBe(true)
      // Again: nothing changes, not even who or when.
      expect(await groups.assign(assignment('line-1', 'press-1', { by: 'bob', at: T0 + 9 }))).toBe(false)
      expect(await groups.assignments()).toEqual([
        assignment('line-1', 'Zoë-7'),
        assignment('line-1', 'press-1'),
        assignment('line-1', 'press-2', { by: null, at: T0 + 5 }),
        assignment('line-2', 'weld-1'),
      ])
      expect(await groups.unassign('line-1', 'press-1')).toBe(true)
      expect(await groups.unassign('line-1', 'press-1')).toBe(false)
      expect(await groups.unassign('line-9', 'weld-1')).toBe(false)
      expect((await groups.assignments()).map((each) => `${each.group}/${each.instance}`)).toEqual([
        'line-1/Zoë-7',
        'line-1/press-2',
        'line-2/weld-1',
      ])
    })

    it("bumps the fleet's revision with each change, and only then", async () => {
      const { groups, fleet } = stores()
      const start = await fleet.revision()
      expect(await groups.assign(assignment('line-1', 'press-1'))).toBe(true)
      expect(await fleet.revision()).toBe(start + 1)
      expect(await groups.assign(assignment('line-1', 'press-1'))).toBe(false)
      expect(await groups.unassign('line-9', 'press-1')).toBe(false)
      expect(await fleet.revision()).toBe(start + 1)
      expect(await groups.unassign('line-1', 'press-1')).toBe(true)
      expect(await fleet.revision()).toBe(start + 2)
    })

    it('keeps an instance in several groups, and a group of several instances, apart', async () => {
      const { groups } = stores()
      await groups.assign(assignment('a', 'x'))
      await groups.assign(assignment('b', 'x'))
      await groups.assign(assignment('a', 'y'))
      expect(await groups.unassign('a', 'x')).toBe(true)
      expect((await groups.assignments()).map((each) => `${each.group}/${each.instance}`)).toEqual([
        'a/y',
        'b/x',
      ])
    })

    it('saves exactly one of racing assignments of the same instance to a group', async () => {
      const racing = await twoConnections()
      const outcomes = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          racing(i).groups.assign(assignment('line-1', 'press-1', { at: T0 + i })),
        ),
      )
      expect(outcomes.filter(Boolean)).toHaveLength(1)
      expect(await stores().groups.assignments()).toHaveLength(1)
    })
  })
}
