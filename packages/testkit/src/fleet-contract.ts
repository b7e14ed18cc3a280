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

/** An instance as it is before its first contact's lease and report. */
const fresh = (id: string, resourceServer: string, lastSeen: number) => ({
  id,
  resourceServer,
  lastSeen,
  leaseUntil: 0,
  connected: false,
  sequence: null,
  reportedAt: null,
})

/** The fleet store's part of the store contract: its instances and leases, and the desired state. */
export const describeFleetContract: ContractPart = (stores, twoConnections) => {
  describe('fleet: instances', () => {
    it('binds an id to the resource server that claims it first, without a lease or report', async () => {
      const fleet = stores().fleet
      expect(await fleet.claim('edge-1', 'node-red', T0)).toBe(true)
      expect(await fleet.claim('edge-1', 'node-red', T0 + 5)).toBe(true)
      expect(await fleet.claim('edge-1', 'other', T0 + 6)).toBe(false)
      expect(await fleet.find('edge-1')).toEqual({ ...fresh('edge-1', 'node-red', T0), report: null })
      expect(await fleet.find('nobody')).toBeNull()
    })

    it('touches leases: creates unknown instances, never shortens a lease, and says who was not connected', async () => {
      const fleet = stores().fleet
      await fleet.claim('edge-2', 'node-red', T0)
      await fleet.claim('theirs', 'other', T0)
      const both = [
        { id: 'edge-1', resourceServer: 'node-red' },
        { id: 'edge-2', resourceServer: 'node-red' },
        { id: 'theirs', resourceServer: 'node-red' },
      ]
      expect((await fleet.touch(both, T0 + 25_000, T0 + 1)).sort()).toEqual(['edge-1', 'edge-2'])
      expect(await fleet.touch(both, T0 + 20_000, T0 + 2)).toEqual([])
      expect(await fleet.digests()).toEqual([
        { ...fresh('edge-1', 'node-red', T0 + 2), leaseUntil: T0 + 25_000, connected: true },
        { ...fresh('edge-2', 'node-red', T0 + 2), leaseUntil: T0 + 25_000, connected: true },
        fresh('theirs', 'other', T0),
      ])
    })

    it('releases a lease at once, and expires ended leases once each', async () => {
      const fleet = stores().fleet
      const node = (id: string) => ({ id, resourceServer: 'node-red' })
      await fleet.touch([node('a'), node('b'), node('c')], T0 + 25_000, T0)
      await fleet.touch([node('c')], T0 + 40_000, T0 + 1)
      expect(await fleet.release('a', T0 + 3)).toBe(true)
      expect(await fleet.release('a', T0 + 4)).toBe(false)
      expect(await fleet.release('nobody', T0 + 4)).toBe(false)
      expect(await fleet.find('a')).toMatchObject({ connected: false, leaseUntil: T0 + 3 })
      expect(await fleet.expire(T0 + 24_999)).toEqual([])
      expect(await fleet.expire(T0 + 25_000)).toEqual([{ id: 'b', resourceServer: 'node-red' }])
      expect(await fleet.expire(T0 + 30_000)).toEqual([])
      expect((await fleet.digests()).map((digest) => [digest.id, digest.connected])).toEqual([
        ['a', false],
        ['b', false],
        ['c', true],
      ])
      // A touch connects it again, once.
      expect(await fleet.touch([node('b')], T0 + 60_000, T0 + 30_000)).toEqual(['b'])
    })

    it('connects and disconnects an instance once, however two connections race', async () => {
      const racing = await twoConnections()
      const edge = [{ id: 'edge-1', resourceServer: 'node-red' }]
      const touched = await Promise.all(
        Array.from({ length: 10 }, (_, i) => racing(i).fleet.touch(edge, T0 + 25_000 + i, T0 + i)),
      )
      expect(touched.flat()).toEqual(['edge-1'])
      const expired = await Promise.all(
        Array.from({ length: 10 }, (_, i) => racing(i).fleet.expire(T0 + 60_000)),
      )
      expect(expired.flat()).toEqual([{ id: 'edge-1', resourceServer: 'node-red' }])
      const noted = await Promise.all(
        Array.from({ length: 10 }, (_, i) => racing(i).fleet.noteReported(['m', `own-${i % 2}`], T0)),
      )
      expect(noted.flat().sort()).toEqual(['m', 'own-0', 'own-1'])
    })

    it('saves a report whole, replaces it with one of a greater sequence, and keeps it from a stale one', async () => {
      const fleet = stores().fleet
      expect(await fleet.saveReport('edge-1', 'node-red', instanceReport(), 5, T0)).toBe('saved')
      expect(await fleet.find('edge-1')).toEqual({
        ...fresh('edge-1', 'node-red', T0),
        sequence: 5,
        reportedAt: T0,
        report: instanceReport(),
      })
      const next = instanceReport({ modules: [], typesInUse: [], applied: '2', failures: [] })
      expect(await fleet.saveReport('edge-1', 'node-red', next, 5, T0 + 5)).toBe('stale')
      expect(await fleet.saveReport('edge-1', 'node-red', next, 4, T0 + 5)).toBe('stale')
      expect((await fleet.find('edge-1'))?.report).toEqual(instanceReport())
      expect(await fleet.saveReport('edge-1', 'node-red', next, 6, T0 + 10)).toBe('saved')
      expect(await fleet.find('edge-1')).toMatchObject({ sequence: 6, reportedAt: T0 + 10, report: next })
      // A report without a sequence (helpers before sequences) is saved whatever came before.
      expect(await fleet.saveReport('edge-1', 'node-red', instanceReport(), null, T0 + 11)).toBe('saved')
      expect(await fleet.find('edge-1')).toMatchObject({ sequence: 7, report: instanceReport() })
      expect(await fleet.saveReport('edge-1', 'other', next, 100, T0 + 12)).toBe('conflict')
      expect(await fleet.find('edge-1')).toMatchObject({ sequence: 7, reportedAt: T0 + 11 })
    })

    it('keeps the report of the greatest sequence, whatever order two connections save them in', async () => {
      const racing = await twoConnections()
      const sequences = [3, 9, 1, 7, 10, 2, 8, 4, 6, 5]
      const outcomes = await Promise.all(
        sequences.map((sequence, i) =>
          racing(i).fleet.saveReport(
            'edge-1',
            'node-red',
            instanceReport({ applied: String(sequence) }),
            sequence,
            T0 + i,
          ),
        ),
      )
      expect(outcomes.filter((outcome) => outcome === 'saved').length).toBeGreaterThanOrEqual(1)
      expect(await stores().fleet.find('edge-1')).toMatchObject({ sequence: 10, report: { applied: '10' } })
    })

    it('gives reports of the instances asked, digests of all without reports, sorted by id; forgets one', async () => {
      const fleet = stores().fleet
      for (const id of ['c', 'a', 'b']) {
        await fleet.saveReport(id, 'node-red', instanceReport({ nodeRedVersion: id }), 1, T0)
      }
      expect((await fleet.reports(['c', 'a', 'z'])).map((record) => record.report?.nodeRedVersion)).toEqual([
        'a',
        'c',
      ])
      expect(await fleet.reports([])).toEqual([])
      const digests = await fleet.digests()
      expect(digests.map((digest) => digest.id)).toEqual(['a', 'b', 'c'])
      expect(digests[0]).toEqual({ ...fresh('a', 'node-red', T0), sequence: 1, reportedAt: T0 })
      expect(await fleet.remove('b')).toBe(true)
      expect(await fleet.remove('b')).toBe(false)
      expect((await fleet.digests()).map((digest) => digest.id)).toEqual(['a', 'c'])
    })

    it('notes the modules reported, saying which no instance reported before', async () => {
      const fleet = stores().fleet
      expect(await fleet.noteReported(['a', 'b'], T0)).toEqual(['a', 'b'])
      expect(await fleet.noteReported(['b', 'c'], T0 + 1)).toEqual(['c'])
      expect(await fleet.noteReported([], T0 + 1)).toEqual([])
    })

    it('shows what one connection wrote to another', async () => {
      const racing = await twoConnections()
      await racing(0).fleet.saveReport('edge-1', 'node-red', instanceReport(), 1, T0)
      await racing(0).fleet.setInstall({ module: 'm', action: 'install', version: '1.0.0', at: T0 })
      await racing(0).fleet.setPrune(true)
      expect((await racing(1).fleet.find('edge-1'))?.report).toEqual(instanceReport())
      expect(await racing(1).fleet.desired()).toEqual({
        revision: await racing(0).fleet.revision(),
        prune: true,
        installs: [{ module: 'm', action: 'install', version: '1.0.0', at: T0 }],
      })
    })

    it('gives an id to one resource server only, however two of them race for it', async () => {
      const racing = await twoConnections()
      const [a, b] = [racing(0).fleet, racing(1).fleet]
      const outcomes = await Promise.all([
        b.saveReport('victim', 'rs-b', instanceReport({ nodeRedVersion: 'b' }), 1, T0),
        a.claim('victim', 'rs-a', T0 + 1),
        a.saveReport('victim', 'rs-a', instanceReport({ nodeRedVersion: 'a' }), 2, T0 + 2),
        b.claim('victim', 'rs-b', T0 + 3),
      ])
      const owner = (await a.find('victim'))?.resourceServer
      expect(['rs-a', 'rs-b']).toContain(owner)
      const [mine, theirs] = owner === 'rs-a' ? [a, b] : [b, a]
      const other = owner === 'rs-a' ? 'rs-b' : 'rs-a'
      // The loser's writes were refused, the winner's accepted.
      expect(outcomes[owner === 'rs-a' ? 0 : 2]).toBe('conflict')
      expect(outcomes[owner === 'rs-a' ? 3 : 1]).toBe(false)
      const before = await mine.find('victim')
      expect(before?.report?.nodeRedVersion).toBe(owner === 'rs-a' ? 'a' : 'b')
      expect(
        await theirs.saveReport('victim', other, instanceReport({ nodeRedVersion: 'x' }), 9, T0 + 10),
      ).toBe('conflict')
      expect(await theirs.claim('victim', other, T0 + 11)).toBe(false)
      expect(await theirs.touch([{ id: 'victim', resourceServer: other }], T0 + 99_000, T0 + 11)).toEqual([])
      expect(await b.find('victim')).toEqual(before)
    })
  })

  describe('fleet: the desired state and its revision', () => {
    it('keeps one install entry per module, the latest, sorted by module; each bumps the revision', async () => {
      const fleet = stores().fleet
      const start = await fleet.desired()
      expect(start).toEqual({ revision: expect.any(Number), prune: false, installs: [] })
      await fleet.setInstall({ module: 'node-red-node-random', action: 'install', version: '0.4.1', at: T0 })
      await fleet.setInstall({ module: '@acme/flow-tools', action: 'install', version: null, at: T0 })
      await fleet.setInstall({ module: 'node-red-node-random', action: 'remove', version: null, at: T0 + 1 })
      expect(await fleet.desired()).toEqual({
        revision: start.revision + 3,
        prune: false,
        installs: [
          { module: '@acme/flow-tools', action: 'install', version: null, at: T0 },
          { module: 'node-red-node-random', action: 'remove', version: null, at: T0 + 1 },
        ],
      })
      expect(await fleet.revision()).toBe(start.revision + 3)
    })

    it('keeps the tarball an install was vetted as, and forgets it when the module is installed again without one or removed', async () => {
      const fleet = stores().fleet
      const vetted = {
        integrity: `sha512-${'A'.repeat(86)}==`,
        tarball: 'https://registry.example/@acme/flow-tools/-/flow-tools-1.2.0.tgz',
      }
      await fleet.setInstall({
        module: '@acme/flow-tools',
        action: 'install',
        version: '1.2.0',
        ...vetted,
        at: T0,
      })
      await fleet.setInstall({ module: 'wave', action: 'install', version: '2.0.0', ...vetted, at: T0 })
      await fleet.setInstall({ module: 'wave', action: 'install', version: '2.0.1', at: T0 + 1 })
      await fleet.setInstall({ module: 'gone', action: 'install', version: '1.0.0', ...vetted, at: T0 })
      await fleet.setInstall({ module: 'gone', action: 'remove', version: null, at: T0 + 2 })
      expect((await fleet.desired()).installs).toEqual([
        { module: '@acme/flow-tools', action: 'install', version: '1.2.0', ...vetted, at: T0 },
        { module: 'gone', action: 'remove', version: null, at: T0 + 2 },
        { module: 'wave', action: 'install', version: '2.0.1', at: T0 + 1 },
      ])
    })

    it('keeps prune, bumping the revision when it changes only', async () => {
      const fleet = stores().fleet
      const start = await fleet.revision()
      expect(await fleet.setPrune(false)).toBe(false)
      expect(await fleet.setPrune(true)).toBe(true)
      expect(await fleet.setPrune(true)).toBe(false)
      expect(await fleet.desired()).toMatchObject({ revision: start + 1, prune: true })
    })

    it('bumps the revision when told to, for a change outside the stores', async () => {
      const fleet = stores().fleet
      const start = await fleet.revision()
      await fleet.bump()
      await fleet.bump()
      expect(await fleet.desired()).toMatchObject({ revision: start + 2 })
    })

    it('bumps the revision with every change of the modules, and with nothing else', async () => {
      const { modules, fleet } = stores()
      const bumps = async (change: () => Promise<unknown>) => {
        const before = await fleet.revision()
        await change()
        return (await fleet.revision()) - before
      }
      const kit = { name: 'kit', version: '1.0.0', sets: [{ name: 'a', types: ['a'] }] }
      expect(await bumps(() => modules.upsert(kit))).toBe(1)
      expect(await bumps(() => modules.upsert(kit))).toBe(0)
      expect(await bumps(() => modules.upsert({ ...kit, version: '1.0.1' }))).toBe(1)
      expect(await bumps(() => modules.upsert({ ...kit, sets: [{ name: 'a', types: ['a', 'b'] }] }))).toBe(1)
      expect(await bumps(() => modules.setEnabled('kit', ['a'], false))).toBe(1)
      expect(await bumps(() => modules.setEnabled('kit', ['a'], false))).toBe(0)
      expect(await bumps(() => modules.setEnabled('kit', ['nope'], true))).toBe(0)
      expect(await bumps(() => modules.find('kit'))).toBe(0)
      expect(await bumps(() => modules.remove('kit'))).toBe(1)
      expect(await bumps(() => modules.remove('kit'))).toBe(0)
      expect(await bumps(() => fleet.saveReport('edge', 'rs', instanceReport(), 1, T0))).toBe(0)
      expect(await bumps(() => fleet.touch([{ id: 'edge', resourceServer: 'rs' }], T0 + 1, T0))).toBe(0)
    })

    it('bumps one revision for changes made over two connections', async () => {
      const racing = await twoConnections()
      const start = await racing(0).fleet.revision()
      await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          racing(i).modules.upsert({ name: `m${i}`, version: '1.0.0', sets: [{ name: 's', types: [] }] }),
        ),
      )
      expect(await racing(1).fleet.revision()).toBe(start + 6)
    })
  })
}
