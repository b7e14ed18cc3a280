import type { ModuleDescriptor } from '@flowadmin/core'
import { describe, expect, it } from 'vitest'
import type { ContractPart } from './contract-part.js'

const random: ModuleDescriptor = {
  name: 'node-red-node-random',
  version: '0.4.1',
  sets: [{ name: 'random', types: ['random'] }],
}
const scoped: ModuleDescriptor = {
  name: '@acme/flow-tools',
  version: '2.0.0',
  sets: [
    { name: 'alpha', types: ['alpha-in', 'alpha-out'] },
    { name: 'beta', types: ['beta'] },
    { name: 'gamma', types: [] },
  ],
}

/** The module store's part of the store contract. */
export const describeModuleContract: ContractPart = (stores, twoConnections) => {
  describe('modules', () => {
    it('knows no module until one is recorded', async () => {
      expect(await stores().modules.find(random.name)).toBeNull()
      expect(await stores().modules.list()).toEqual([])
    })

    it('records a discovered module with its sets enabled, in order', async () => {
      const stored = await stores().modules.upsert(scoped)
      const expected = {
        name: '@acme/flow-tools',
        version: '2.0.0',
        sets: [
          {
            id: '@acme/flow-tools/alpha',
            name: 'alpha',
            module: '@acme/flow-tools',
            types: ['alpha-in', 'alpha-out'],
            enabled: true,
          },
          {
            id: '@acme/flow-tools/beta',
            name: 'beta',
            module: '@acme/flow-tools',
            types: ['beta'],
            enabled: true,
          },
          {
            id: '@acme/flow-tools/gamma',
            name: 'gamma',
            module: '@acme/flow-tools',
            types: [],
            enabled: true,
          },
        ],
      }
      expect(stored).toEqual(expected)
      expect(await stores().modules.find('@acme/flow-tools')).toEqual(expected)
    })

    it('keeps enabled flags when a module is recorded again; new sets start enabled, gone sets go', async () => {
      await stores().modules.upsert(scoped)
      await stores().modules.setEnabled(scoped.name, ['alpha', 'beta'], false)
      const again = await stores().modules.upsert({
        name: scoped.name,
        version: '2.1.0',
        sets: [
          { name: 'beta', types: ['beta', 'beta2'] },
          { name: 'alpha', types: ['alpha-in'] },
          { name: 'delta', types: ['delta'] },
        ],
      })
      expect(again.version).toBe('2.1.0')
      expect(again.sets.map((set) => [set.name, set.enabled, set.types])).toEqual([
        ['beta', false, ['beta', 'beta2']],
        ['alpha', false, ['alpha-in']],
        ['delta', true, ['delta']],
      ])
      expect(await stores().modules.find(scoped.name)).toEqual(again)
    })

    it('records new sets with the flags asked, in one write; sets it knows keep their own', async () => {
      const stored = await stores().modules.upsert({
        ...scoped,
        sets: scoped.sets.map((set) => ({ ...set, enabled: set.name !== 'beta' })),
      })
      expect(stored.sets.map((set) => [set.name, set.enabled])).toEqual([
        ['alpha', true],
        ['beta', false],
        ['gamma', true],
      ])
      const again = await stores().modules.upsert({
        ...scoped,
        sets: scoped.sets.map((set) => ({ ...set, enabled: false })),
      })
      expect(again.sets.map((set) => set.enabled)).toEqual([true, false, true])
      expect(await stores().modules.find(scoped.name)).toEqual(again)
    })

    it('lists every module sorted by name', async () => {
      await stores().modules.upsert(random)
      await stores().modules.upsert(scoped)
      await stores().modules.upsert({ name: 'a-first', version: '1.0.0', sets: [] })
      expect((await stores().modules.list()).map((module) => module.name)).toEqual([
        '@acme/flow-tools',
        'a-first',
        'node-red-node-random',
      ])
    })

    it('changes the enabled flag of the named sets only, and persists it', async () => {
      await stores().modules.upsert(scoped)
      const updated = await stores().modules.setEnabled(scoped.name, ['alpha', 'gamma', 'no-such-set'], false)
      expect(updated?.sets.map((set) => set.enabled)).toEqual([false, true, false])
      expect((await stores().modules.find(scoped.name))?.sets.map((set) => set.enabled)).toEqual([
        false,
        true,
        false,
      ])
      const back = await stores().modules.setEnabled(scoped.name, ['alpha', 'gamma'], true)
      expect(back?.sets.every((set) => set.enabled)).toBe(true)
    })

    it('answers null when changing a module it does not know, and creates nothing', async () => {
      expect(await stores().modules.setEnabled('missing', ['x'], false)).toBeNull()
      expect(await stores().modules.find('missing')).toBeNull()
    })

    it('touches no other module', async () => {
      await stores().modules.upsert(random)
      await stores().modules.upsert(scoped)
      await stores().modules.setEnabled(scoped.name, ['alpha', 'beta', 'gamma'], false)
      expect((await stores().modules.find(random.name))?.sets[0]?.enabled).toBe(true)
    })

    it('forgets a removed module', async () => {
      await stores().modules.upsert(random)
      expect(await stores().modules.remove(random.name)).toBe(true)
      expect(await stores().modules.remove(random.name)).toBe(false)
      expect(await stores().modules.find(random.name)).toBeNull()
      expect(await stores().modules.list()).toEqual([])
      const again = await stores().modules.upsert(random)
      expect(again.sets[0]?.enabled).toBe(true)
    })

    it('hands out copies: changing a returned module changes nothing stored', async () => {
      const stored = await stores().modules.upsert(scoped)
      ;(stored.sets[0] as { enabled: boolean }).enabled = false
      stored.sets[1]?.types.push('intruder')
      expect(await stores().modules.find(scoped.name)).toMatchObject({
        sets: [{ enabled: true }, { enabled: true, types: ['beta'] }, { enabled: true }],
      })
    })

    it('applies racing multi-set changes whole, over two connections: every reader sees all sets alike', async () => {
      const racing = await twoConnections()
      await stores().modules.upsert(scoped)
      const all = scoped.sets.map((set) => set.name)
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          i % 3 === 2
            ? racing(i).modules.find(scoped.name)
            : racing(i).modules.setEnabled(scoped.name, all, i % 3 === 0),
        ),
      )
      for (const module of results) {
        const flags = new Set(module?.sets.map((set) => set.enabled))
        expect(flags.size).toBe(1)
      }
      const final = await stores().modules.find(scoped.name)
      expect(new Set(final?.sets.map((set) => set.enabled)).size).toBe(1)
    })
  })
}
