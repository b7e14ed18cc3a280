import type { ModuleDescriptor, Stores, TokenRecord } from '@flowadmin/core'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'

/** A store under test: the three ports plus a way to release it. */
export type OpenStores = () => Promise<Stores & { close(): Promise<void> }>

const T0 = Date.UTC(2026, 0, 1)
const MINUTE = 60_000

const token = (hash: string, overrides: Partial<TokenRecord> = {}): TokenRecord => ({
  hash,
  username: 'admin',
  clientId: 'service-admin',
  scope: ['*'],
  createdAt: T0,
  expiresAt: T0 + 10 * MINUTE,
  ...overrides,
})

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

/**
 * The contract every store adapter passes unchanged. Each test opens a fresh store; none depends
 * on another's order. Time is a parameter, so no test sleeps.
 */
export function describeStoreContract(name: string, open: OpenStores): void {
  describe(`store contract: ${name}`, () => {
    let stores: Stores & { close(): Promise<void> }
    beforeEach(async () => {
      stores = await open()
    })
    afterEach(async () => {
      await stores.close()
    })

    describe('tokens', () => {
      it('finds a saved record by its hash, with every field intact', async () => {
        const record = token('h1', {
          username: 'Zoë ✓',
          clientId: 'node-red-admin',
          scope: ['read', 'nodes.write'],
        })
        await stores.tokens.save(record)
        expect(await stores.tokens.findByHash('h1')).toEqual(record)
      })

      it('answers null for an unknown hash', async () => {
        expect(await stores.tokens.findByHash('nope')).toBeNull()
      })

      it('replaces a record saved again under the same hash', async () => {
        await stores.tokens.save(token('h1', { scope: ['read'] }))
        await stores.tokens.save(token('h1', { scope: ['*'], username: 'other' }))
        expect(await stores.tokens.findByHash('h1')).toMatchObject({ scope: ['*'], username: 'other' })
      })

      it('hands out copies: changing a returned record changes nothing stored', async () => {
        await stores.tokens.save(token('h1'))
        const found = await stores.tokens.findByHash('h1')
        found?.scope.push('write')
        expect((await stores.tokens.findByHash('h1'))?.scope).toEqual(['*'])
      })

      it('deletes a record once: true the first time, false after', async () => {
        await stores.tokens.save(token('h1'))
        await stores.tokens.save(token('h2'))
        expect(await stores.tokens.delete('h1')).toBe(true)
        expect(await stores.tokens.delete('h1')).toBe(false)
        expect(await stores.tokens.findByHash('h1')).toBeNull()
        expect(await stores.tokens.findByHash('h2')).not.toBeNull()
      })

      it('deletes every record of one user and no other', async () => {
        await stores.tokens.save(token('a1', { username: 'alice' }))
        await stores.tokens.save(token('a2', { username: 'alice' }))
        await stores.tokens.save(token('b1', { username: 'bob' }))
        expect(await stores.tokens.deleteByUser('alice')).toBe(2)
        expect(await stores.tokens.deleteByUser('alice')).toBe(0)
        expect(await stores.tokens.findByHash('a1')).toBeNull()
        expect(await stores.tokens.findByHash('b1')).not.toBeNull()
      })

      it('deletes records expired at or before now, and only those', async () => {
        await stores.tokens.save(token('past', { expiresAt: T0 - 1 }))
        await stores.tokens.save(token('edge', { expiresAt: T0 }))
        await stores.tokens.save(token('live', { expiresAt: T0 + 1 }))
        expect(await stores.tokens.deleteExpired(T0, 100)).toBe(2)
        expect(await stores.tokens.findByHash('past')).toBeNull()
        expect(await stores.tokens.findByHash('edge')).toBeNull()
        expect(await stores.tokens.findByHash('live')).not.toBeNull()
      })

      it('deletes expired records in batches no larger than the limit', async () => {
        for (let i = 0; i < 7; i++) await stores.tokens.save(token(`old${i}`, { expiresAt: T0 - i }))
        await stores.tokens.save(token('live', { expiresAt: T0 + MINUTE }))
        expect(await stores.tokens.deleteExpired(T0, 3)).toBe(3)
        expect(await stores.tokens.deleteExpired(T0, 3)).toBe(3)
        expect(await stores.tokens.deleteExpired(T0, 3)).toBe(1)
        expect(await stores.tokens.deleteExpired(T0, 3)).toBe(0)
        expect(await stores.tokens.findByHash('live')).not.toBeNull()
      })

      it('counts the records that are live at now, and only those', async () => {
        expect(await stores.tokens.countLive(T0)).toBe(0)
        await stores.tokens.save(token('past', { expiresAt: T0 - 1 }))
        await stores.tokens.save(token('edge', { expiresAt: T0 }))
        await stores.tokens.save(token('live1', { expiresAt: T0 + 1 }))
        await stores.tokens.save(token('live2', { expiresAt: T0 + MINUTE }))
        expect(await stores.tokens.countLive(T0)).toBe(2)
        await stores.tokens.delete('live1')
        expect(await stores.tokens.countLive(T0)).toBe(1)
        expect(await stores.tokens.countLive(T0 - 1)).toBe(2)
      })

      it('lets exactly one of racing deletes of the same record succeed', async () => {
        await stores.tokens.save(token('h1'))
        const outcomes = await Promise.all(Array.from({ length: 10 }, () => stores.tokens.delete('h1')))
        expect(outcomes.filter(Boolean)).toHaveLength(1)
        expect(await stores.tokens.findByHash('h1')).toBeNull()
      })

      it('keeps every record of racing saves', async () => {
        await Promise.all(Array.from({ length: 20 }, (_, i) => stores.tokens.save(token(`h${i}`))))
        const found = await Promise.all(
          Array.from({ length: 20 }, (_, i) => stores.tokens.findByHash(`h${i}`)),
        )
        expect(found.every((record) => record !== null)).toBe(true)
      })
    })

    describe('modules', () => {
      it('knows no module until one is recorded', async () => {
        expect(await stores.modules.find(random.name)).toBeNull()
        expect(await stores.modules.list()).toEqual([])
      })

      it('records a discovered module with its sets enabled, in order', async () => {
        const stored = await stores.modules.upsert(scoped)
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
        expect(await stores.modules.find('@acme/flow-tools')).toEqual(expected)
      })

      it('keeps enabled flags when a module is recorded again; new sets start enabled, gone sets go', async () => {
        await stores.modules.upsert(scoped)
        await stores.modules.setEnabled(scoped.name, ['alpha', 'beta'], false)
        const again = await stores.modules.upsert({
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
        expect(await stores.modules.find(scoped.name)).toEqual(again)
      })

      it('lists every module sorted by name', async () => {
        await stores.modules.upsert(random)
        await stores.modules.upsert(scoped)
        await stores.modules.upsert({ name: 'a-first', version: '1.0.0', sets: [] })
        expect((await stores.modules.list()).map((module) => module.name)).toEqual([
          '@acme/flow-tools',
          'a-first',
          'node-red-node-random',
        ])
      })

      it('changes the enabled flag of the named sets only, and persists it', async () => {
        await stores.modules.upsert(scoped)
        const updated = await stores.modules.setEnabled(scoped.name, ['alpha', 'gamma', 'no-such-set'], false)
        expect(updated?.sets.map((set) => set.enabled)).toEqual([false, true, false])
        expect((await stores.modules.find(scoped.name))?.sets.map((set) => set.enabled)).toEqual([
          false,
          true,
          false,
        ])
        const back = await stores.modules.setEnabled(scoped.name, ['alpha', 'gamma'], true)
        expect(back?.sets.every((set) => set.enabled)).toBe(true)
      })

      it('answers null when changing a module it does not know, and creates nothing', async () => {
        expect(await stores.modules.setEnabled('missing', ['x'], false)).toBeNull()
        expect(await stores.modules.find('missing')).toBeNull()
      })

      it('touches no other module', async () => {
        await stores.modules.upsert(random)
        await stores.modules.upsert(scoped)
        await stores.modules.setEnabled(scoped.name, ['alpha', 'beta', 'gamma'], false)
        expect((await stores.modules.find(random.name))?.sets[0]?.enabled).toBe(true)
      })

      it('forgets a removed module', async () => {
        await stores.modules.upsert(random)
        expect(await stores.modules.remove(random.name)).toBe(true)
        expect(await stores.modules.remove(random.name)).toBe(false)
        expect(await stores.modules.find(random.name)).toBeNull()
        expect(await stores.modules.list()).toEqual([])
        const again = await stores.modules.upsert(random)
        expect(again.sets[0]?.enabled).toBe(true)
      })

      it('hands out copies: changing a returned module changes nothing stored', async () => {
        const stored = await stores.modules.upsert(scoped)
        ;(stored.sets[0] as { enabled: boolean }).enabled = false
        stored.sets[1]?.types.push('intruder')
        expect(await stores.modules.find(scoped.name)).toMatchObject({
          sets: [{ enabled: true }, { enabled: true, types: ['beta'] }, { enabled: true }],
        })
      })

      it('applies racing multi-set changes whole: every reader sees all sets alike', async () => {
        await stores.modules.upsert(scoped)
        const all = scoped.sets.map((set) => set.name)
        const results = await Promise.all(
          Array.from({ length: 30 }, (_, i) =>
            i % 3 === 2
              ? stores.modules.find(scoped.name)
              : stores.modules.setEnabled(scoped.name, all, i % 3 === 0),
          ),
        )
        for (const module of results) {
          const flags = new Set(module?.sets.map((set) => set.enabled))
          expect(flags.size).toBe(1)
        }
        const final = await stores.modules.find(scoped.name)
        expect(new Set(final?.sets.map((set) => set.enabled)).size).toBe(1)
      })
    })

    describe('throttle', () => {
      const WINDOW = 15 * MINUTE

      it('starts a window on the first hit and counts within it', async () => {
        expect(await stores.throttle.hit(['k'], T0, WINDOW)).toEqual([{ count: 1, resetAt: T0 + WINDOW }])
        expect(await stores.throttle.hit(['k'], T0 + MINUTE, WINDOW)).toEqual([
          { count: 2, resetAt: T0 + WINDOW },
        ])
        expect(await stores.throttle.peek(['k'], T0 + 2 * MINUTE)).toEqual([
          { count: 2, resetAt: T0 + WINDOW },
        ])
      })

      it('counts several keys at once, each on its own', async () => {
        await stores.throttle.hit(['a'], T0, WINDOW)
        expect(await stores.throttle.hit(['a', 'b'], T0 + 1, WINDOW)).toEqual([
          { count: 2, resetAt: T0 + WINDOW },
          { count: 1, resetAt: T0 + 1 + WINDOW },
        ])
        expect(await stores.throttle.peek(['b', 'missing', 'a'], T0 + 2)).toEqual([
          { count: 1, resetAt: T0 + 1 + WINDOW },
          null,
          { count: 2, resetAt: T0 + WINDOW },
        ])
      })

      it('starts again from one once the window has ended (at resetAt exactly)', async () => {
        await stores.throttle.hit(['k'], T0, WINDOW)
        await stores.throttle.hit(['k'], T0, WINDOW)
        expect(await stores.throttle.peek(['k'], T0 + WINDOW - 1)).toEqual([
          { count: 2, resetAt: T0 + WINDOW },
        ])
        expect(await stores.throttle.peek(['k'], T0 + WINDOW)).toEqual([null])
        expect(await stores.throttle.hit(['k'], T0 + WINDOW, WINDOW)).toEqual([
          { count: 1, resetAt: T0 + 2 * WINDOW },
        ])
      })

      it('forgets a cleared key and only that key', async () => {
        await stores.throttle.hit(['a', 'b'], T0, WINDOW)
        await stores.throttle.clear('a')
        await stores.throttle.clear('never-seen')
        expect(await stores.throttle.peek(['a', 'b'], T0)).toEqual([null, { count: 1, resetAt: T0 + WINDOW }])
      })

      it('deletes ended windows in batches no larger than the limit', async () => {
        for (let i = 0; i < 5; i++) await stores.throttle.hit([`old${i}`], T0 - WINDOW - i, WINDOW)
        await stores.throttle.hit(['live'], T0, WINDOW)
        expect(await stores.throttle.deleteExpired(T0, 2)).toBe(2)
        expect(await stores.throttle.deleteExpired(T0, 10)).toBe(3)
        expect(await stores.throttle.deleteExpired(T0, 10)).toBe(0)
        expect(await stores.throttle.peek(['live'], T0)).toEqual([{ count: 1, resetAt: T0 + WINDOW }])
      })

      it('loses no hit when hits race', async () => {
        const results = await Promise.all(
          Array.from({ length: 40 }, () => stores.throttle.hit(['k'], T0, WINDOW)),
        )
        expect(results.map(([counter]) => counter?.count).sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual(
          Array.from({ length: 40 }, (_, i) => i + 1),
        )
        expect(await stores.throttle.peek(['k'], T0)).toEqual([{ count: 40, resetAt: T0 + WINDOW }])
      })

      it('keeps keys of any text apart, however alike', async () => {
        const keys = [
          'user 127.0.0.1 admin',
          'user 127.0.0.1 admin ',
          'user ::1 Admin',
          'addr 127.0.0.1',
          'ü 🙂',
        ]
        for (const [i, key] of keys.entries()) {
          for (let n = 0; n <= i; n++) await stores.throttle.hit([key], T0, WINDOW)
        }
        expect((await stores.throttle.peek(keys, T0)).map((counter) => counter?.count)).toEqual([
          1, 2, 3, 4, 5,
        ])
      })
    })
  })
}
