import type { NewSnapshot } from '@flowadmin/core'
import { describe, expect, it } from 'vitest'
import { type ContractPart, MINUTE, T0 } from './contract-part.js'

const FLOWS =
  '[{"id":"t1","type":"tab","label":"Line 1"},{"id":"n1","type":"inject","z":"t1","wires":[["n2"]]}]'

const snapshot = (id: string, name: string, overrides: Partial<NewSnapshot> = {}): NewSnapshot => ({
  id,
  name,
  modules: [{ name: 'node-red-dashboard', version: '3.6.5' }],
  nodes: 2,
  bytes: 180,
  createdBy: 'alice',
  createdAt: T0,
  flows: FLOWS,
  ...overrides,
})

/** The snapshot store's part of the store contract: versions per name, kept whole, listed sorted. */
export const describeSnapshotContract: ContractPart = (stores, twoConnections) => {
  describe('snapshots: of flows', () => {
    it('gives each name its versions from 1, keeps each snapshot whole, and lists them without flows', async () => {
      const { snapshots } = stores()
      expect(await snapshots.list()).toEqual([])
      expect(await snapshots.create(snapshot('s1', 'line-2'))).toBe(1)
      expect(await snapshots.create(snapshot('s2', 'line-1', { createdBy: null, modules: [] }))).toBe(1)
      expect(
        await snapshots.create(snapshot('s3', 'line-2', { createdAt: T0 + MINUTE, nodes: 0, flows: '[]' })),
      ).toBe(2)
      expect(await snapshots.create(snapshot('s4', 'Zoë-7'))).toBe(1)
      expect(await snapshots.find('s3')).toEqual({
        ...snapshot('s3', 'line-2', { createdAt: T0 + MINUTE, nodes: 0, flows: '[]' }),
        version: 2,
      })
      expect(await snapshots.find('s2')).toEqual({
        ...snapshot('s2', 'line-1', { createdBy: null, modules: [] }),
        version: 1,
      })
      expect(await snapshots.find('nope')).toBeNull()
      const { flows: _flows, ...first } = { ...snapshot('s1', 'line-2'), version: 1 }
      const listed = await snapshots.list()
      expect(listed.map((each) => `${each.name}@${each.version}`)).toEqual([
        'Zoë-7@1',
        'line-1@1',
        'line-2@1',
        'line-2@2',
      ])
      expect(listed[2]).toEqual(first)
    })

    it('keeps flows of every character and of megabytes as they were written', async () => {
      const { snapshots } = stores()
      const odd = JSON.stringify([{ id: 'c1', type: 'comment', name: 'Zoë 👋 温度', info: 'a\u0000b\\n"q"' }])
      await snapshots.create(snapshot('odd', 'odd', { flows: odd }))
      expect((await snapshots.find('odd'))?.flows).toBe(odd)
      const big = JSON.stringify([{ id: 'c1', type: 'comment', info: 'x'.repeat(3 * 1024 * 1024) }])
      await snapshots.create(snapshot('big', 'big', { flows: big }))
      expect((await snapshots.find('big'))?.flows).toBe(big)
    })

    it('keeps who made a snapshot, and who asked, as they were written, whatever the text', async () => {
      const { snapshots } = stores()
      for (const [index, by] of ['a\u0000b', 'c\\u0041d', 'Zoë 👋'].entries()) {
        await snapshots.create(snapshot(`by${index}`, `by-${index}`, { createdBy: by }))
        expect((await snapshots.find(`by${index}`))?.createdBy).toBe(by)
        expect((await snapshots.list()).find((each) => each.id === `by${index}`)?.createdBy).toBe(by)
        const ask = { instance: `press-${index}`, name: 'line-1', by, at: T0 }
        await snapshots.ask(ask)
        expect(await snapshots.asked(`press-${index}`)).toEqual(ask)
        expect(await snapshots.take(`press-${index}`, 'line-1')).toEqual(ask)
      }
    })

    it('gives racing saves of one name distinct versions, one after another', async () => {
      const racing = await twoConnections()
      const versions = await Promise.all(
        Array.from({ length: 6 }, (_, i) => racing(i).snapshots.create(snapshot(`r${i}`, 'line-1'))),
      )
      expect([...versions].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6])
      const listed = await stores().snapshots.list()
      expect(listed.map((each) => each.version)).toEqual([1, 2, 3, 4, 5, 6])
      for (const [i, version] of versions.entries()) {
        expect(listed.find((each) => each.id === `r${i}`)?.version).toBe(version)
      }
    })

    it('keeps one ask an instance, the latest, until it is taken for its name', async () => {
      const { snapshots } = stores()
      expect(await snapshots.asked('press-1')).toBeNull()
      await snapshots.ask({ instance: 'press-1', name: 'line-1', by: 'alice', at: T0 })
      await snapshots.ask({ instance: 'press-2', name: 'line-2', by: null, at: T0 })
      await snapshots.ask({ instance: 'press-1', name: 'line-1b', by: 'bob', at: T0 + MINUTE })
      expect(await snapshots.asked('press-1')).toEqual({
        instance: 'press-1',
        name: 'line-1b',
        by: 'bob',
        at: T0 + MINUTE,
      })
      expect(await snapshots.take('press-1', 'line-1')).toBeNull()
      expect(await snapshots.take('press-1', 'line-1b')).toEqual({
        instance: 'press-1',
        name: 'line-1b',
        by: 'bob',
        at: T0 + MINUTE,
      })
      expect(await snapshots.asked('press-1')).toBeNull()
      expect(await snapshots.take('press-1', 'line-1b')).toBeNull()
      expect(await snapshots.asked('press-2')).toEqual({
        instance: 'press-2',
        name: 'line-2',
        by: null,
        at: T0,
      })
    })

    it('gives an ask to exactly one of racing takes', async () => {
      const racing = await twoConnections()
      await stores().snapshots.ask({ instance: 'press-1', name: 'line-1', by: 'alice', at: T0 })
      const taken = await Promise.all(
        Array.from({ length: 6 }, (_, i) => racing(i).snapshots.take('press-1', 'line-1')),
      )
      expect(taken.filter((each) => each !== null)).toHaveLength(1)
      expect(await stores().snapshots.asked('press-1')).toBeNull()
    })
  })
}
