import type { InstanceReport } from '@flowadmin/core'
import { describe, expect, it } from 'vitest'
import { type ContractPart, T0 } from './contract-part.js'

/** A report with one module of two sets, Unicode and an error included. */
export const instanceReport = (overrides: Partial<InstanceReport> = {}): InstanceReport => ({
  nodeRedVersion: '4.1.2',
  modules: [
    {
      name: '@acme/flow-tools',
      version: '2.0.0',
      sets: [
        { name: 'alpha', types: ['alpha-in', 'Zoë ✓'], enabled: true, loaded: true },
        { name: 'beta', types: [], enabled: false, loaded: false, err: 'Cannot find module "x"' },
      ],
    },
  ],
  typesInUse: ['alpha-in', 'inject'],
  applied: null,
  failures: [{ module: '@acme/flow-tools', action: 'disable', message: 'Type in use: alpha-in' }],
  ...overrides,
})

/** The fleet store's part of the store contract. */
export const describeFleetContract: ContractPart = (stores, twoConnections) => {
  describe('fleet', () => {
    it('creates an instance on first contact, without a report, and keeps its report on later contacts', async () => {
      const fleet = stores().fleet
      expect(await fleet.seen('edge-1', 'node-red', T0)).toEqual({
        id: 'edge-1',
        resourceServer: 'node-red',
        seenAt: T0,
        reportedAt: null,
        report: null,
      })
      await fleet.saveReport('edge-1', 'node-red', instanceReport(), T0 + 1)
      expect(await fleet.seen('edge-1', 'node-red', T0 + 5)).toEqual({
        id: 'edge-1',
        resourceServer: 'node-red',
        seenAt: T0 + 5,
        reportedAt: T0 + 1,
        report: instanceReport(),
      })
    })

    it('saves a report whole and replaces it with the next', async () => {
      const fleet = stores().fleet
      await fleet.saveReport('edge-1', 'node-red', instanceReport(), T0)
      expect((await fleet.find('edge-1'))?.report).toEqual(instanceReport())
      const next = instanceReport({ modules: [], typesInUse: [], applied: 'v2', failures: [] })
      await fleet.saveReport('edge-1', 'node-red', next, T0 + 10)
      expect(await fleet.find('edge-1')).toEqual({
        id: 'edge-1',
        resourceServer: 'node-red',
        seenAt: T0 + 10,
        reportedAt: T0 + 10,
        report: next,
      })
      expect(await fleet.find('nobody')).toBeNull()
    })

    it('lists instances sorted by id and forgets one', async () => {
      const fleet = stores().fleet
      for (const id of ['c', 'a', 'b']) await fleet.seen(id, 'node-red', T0)
      expect((await fleet.list()).map((record) => record.id)).toEqual(['a', 'b', 'c'])
      expect(await fleet.remove('b')).toBe(true)
      expect(await fleet.remove('b')).toBe(false)
      expect((await fleet.list()).map((record) => record.id)).toEqual(['a', 'c'])
    })

    it('keeps one install entry per module, the latest, sorted by module', async () => {
      const fleet = stores().fleet
      await fleet.setInstall({ module: 'node-red-node-random', action: 'install', version: '0.4.1', at: T0 })
      await fleet.setInstall({ module: '@acme/flow-tools', action: 'install', version: null, at: T0 })
      await fleet.setInstall({ module: 'node-red-node-random', action: 'remove', version: null, at: T0 + 1 })
      expect(await fleet.installs()).toEqual([
        { module: '@acme/flow-tools', action: 'install', version: null, at: T0 },
        { module: 'node-red-node-random', action: 'remove', version: null, at: T0 + 1 },
      ])
    })

    it('shows what one connection wrote to another', async () => {
      const racing = await twoConnections()
      await racing(0).fleet.saveReport('edge-1', 'node-red', instanceReport(), T0)
      await racing(0).fleet.setInstall({ module: 'm', action: 'install', version: '1.0.0', at: T0 })
      expect((await racing(1).fleet.find('edge-1'))?.report).toEqual(instanceReport())
      expect(await racing(1).fleet.installs()).toHaveLength(1)
    })

    it('gives an id to one resource server only, however two of them race for it', async () => {
      const racing = await twoConnections()
      const [a, b] = [racing(0).fleet, racing(1).fleet]
      const outcomes = await Promise.all([
        b.saveReport('victim', 'rs-b', instanceReport({ nodeRedVersion: 'b' }), T0),
        a.seen('victim', 'rs-a', T0 + 1),
        a.saveReport('victim', 'rs-a', instanceReport({ nodeRedVersion: 'a' }), T0 + 2),
        b.seen('victim', 'rs-b', T0 + 3),
      ])
      const owner = (await a.find('victim'))?.resourceServer
      expect(['rs-a', 'rs-b']).toContain(owner)
      const [mine, theirs] = owner === 'rs-a' ? [a, b] : [b, a]
      const other = owner === 'rs-a' ? 'rs-b' : 'rs-a'
      // The loser's writes were refused, the winner's accepted.
      expect(outcomes[owner === 'rs-a' ? 0 : 2]).toBe(false)
      expect(outcomes[owner === 'rs-a' ? 3 : 1]).toBeNull()
      const before = await mine.find('victim')
      expect(before?.report?.nodeRedVersion).toBe(owner === 'rs-a' ? 'a' : 'b')
      expect(await theirs.saveReport('victim', other, instanceReport({ nodeRedVersion: 'x' }), T0 + 10)).toBe(
        false,
      )
      expect(await theirs.seen('victim', other, T0 + 11)).toBeNull()
      expect(await b.find('victim')).toEqual(before)
      expect(await mine.seen('victim', owner as string, T0 + 12)).toMatchObject({
        resourceServer: owner,
        seenAt: T0 + 12,
      })
    })
  })
}
