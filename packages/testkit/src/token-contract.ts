import type { TokenRecord } from '@flowadmin/core'
import { SIGN_IN_METHODS } from '@flowadmin/core'
import { describe, expect, it } from 'vitest'
import { type ContractPart, MINUTE, T0 } from './contract-part.js'

/** A session record for store tests; its id is `id-<hash>` unless overridden. */
export const tokenRecord = (hash: string, overrides: Partial<TokenRecord> = {}): TokenRecord => ({
  hash,
  id: `id-${hash}`,
  kind: 'session',
  name: null,
  username: 'admin',
  clientId: 'service-admin',
  scope: ['*'],
  fingerprint: 'f'.repeat(64),
  createdAt: T0,
  expiresAt: T0 + 10 * MINUTE,
  lastUsedAt: null,
  lastAddress: null,
  agent: null,
  audience: 'flowadmin',
  signIn: 'password',
  ...overrides,
})

/** The token store's part of the store contract. */
export const describeTokenContract: ContractPart = (stores, twoConnections) => {
  describe('tokens', () => {
    it('finds a saved record by its hash, with every field intact', async () => {
      const record = tokenRecord('h1', {
        username: 'Zoë ✓',
        clientId: 'node-red-admin',
        scope: ['read', 'nodes.write'],
      })
      await stores().tokens.save(record)
      expect(await stores().tokens.findByHash('h1')).toEqual(record)
    })

    it('keeps an API token with every field intact, a never-expiring one included', async () => {
      const record = tokenRecord('h1', {
        id: 'Kx9-pub_1',
        kind: 'api',
        name: 'CI deploy ✓',
        scope: ['read'],
        fingerprint: '0a'.repeat(32),
        expiresAt: null,
        lastUsedAt: T0 + MINUTE,
        lastAddress: '2001:db8::1',
        agent: 'curl 8.5.0',
        signIn: null,
      })
      await stores().tokens.save(record)
      expect(await stores().tokens.findByHash('h1')).toEqual(record)
      expect(await stores().tokens.findById('Kx9-pub_1')).toEqual(record)
    })

    it("keeps each record's audience: flowadmin, a resource server's id, or none yet", async () => {
      const records = [
        tokenRecord('h1'),
        tokenRecord('h2', { clientId: 'fleet-east', audience: 'fleet-east ✓' }),
        tokenRecord('h3', { clientId: 'fleet-west', audience: null }),
      ]
      for (const record of records) await stores().tokens.save(record)
      for (const record of records) {
        expect(await stores().tokens.findByHash(record.hash)).toEqual(record)
        expect(await stores().tokens.findById(record.id)).toEqual(record)
      }
      expect((await stores().tokens.list('admin')).map((record) => record.audience)).toEqual([
        'flowadmin',
        'fleet-east ✓',
        null,
      ])
      // Saved again (as the core settles an old record), the new audience replaces the old.
      await stores().tokens.save({ ...records[2], audience: 'fleet-west' } as (typeof records)[number])
      expect(await stores().tokens.findByHash('h3')).toMatchObject({ audience: 'fleet-west' })
    })

    it('keeps how each session was signed in, every method or none', async () => {
      const methods = [...SIGN_IN_METHODS, null]
      const records = methods.map((signIn, i) => tokenRecord(`h${i}`, { createdAt: T0 + i, signIn }))
      for (const record of records) await stores().tokens.save(record)
      for (const record of records) {
        expect(await stores().tokens.findByHash(record.hash)).toEqual(record)
        expect(await stores().tokens.findById(record.id)).toEqual(record)
      }
      expect((await stores().tokens.list('admin')).map((record) => record.signIn)).toEqual(methods)
      // Saved again, the new method replaces the old; a use leaves it as it was.
      await stores().tokens.save({ ...(records[0] as TokenRecord), signIn: 'passkey' })
      await stores().tokens.touch('id-h0', T0 + MINUTE, '10.0.0.9')
      expect(await stores().tokens.findByHash('h0')).toMatchObject({
        signIn: 'passkey',
        lastAddress: '10.0.0.9',
      })
    })

    it('answers null for an unknown hash or id', async () => {
      expect(await stores().tokens.findByHash('nope')).toBeNull()
      expect(await stores().tokens.findById('nope')).toBeNull()
      await stores().tokens.save(tokenRecord('h1'))
      expect(await stores().tokens.findById('h1')).toBeNull()
      expect(await stores().tokens.findByHash('id-h1')).toBeNull()
    })

    it('replaces a record saved again under the same id', async () => {
      await stores().tokens.save(tokenRecord('h1', { id: 'same' }))
      await stores().tokens.save(tokenRecord('h2', { id: 'same', scope: ['read'] }))
      expect(await stores().tokens.findByHash('h1')).toBeNull()
      expect(await stores().tokens.findById('same')).toMatchObject({ hash: 'h2', scope: ['read'] })
      expect(await stores().tokens.list(null)).toHaveLength(1)
    })

    it("lists one user's records or everyone's, oldest first, expired ones included", async () => {
      await stores().tokens.save(tokenRecord('b1', { username: 'bob', createdAt: T0 + 2 }))
      await stores().tokens.save(
        tokenRecord('a2', { username: 'alice', createdAt: T0 + 3, kind: 'api', name: 'n' }),
      )
      await stores().tokens.save(
        tokenRecord('a1', { username: 'alice', createdAt: T0 + 1, expiresAt: T0 - 1 }),
      )
      await stores().tokens.save(tokenRecord('a0', { id: 'z-last', username: 'alice', createdAt: T0 + 1 }))
      await stores().tokens.save(tokenRecord('c1', { username: 'carol', createdAt: T0, expiresAt: null }))
      const ids = (records: TokenRecord[]) => records.map((record) => record.id)
      expect(ids(await stores().tokens.list('alice'))).toEqual(['id-a1', 'z-last', 'id-a2'])
      expect(ids(await stores().tokens.list(null))).toEqual(['id-c1', 'id-a1', 'z-last', 'id-b1', 'id-a2'])
      expect(await stores().tokens.list('nobody')).toEqual([])
      expect((await stores().tokens.list('alice'))[2]).toEqual(
        tokenRecord('a2', { username: 'alice', createdAt: T0 + 3, kind: 'api', name: 'n' }),
      )
    })

    it('names every user holding a record, sorted, each once', async () => {
      expect(await stores().tokens.usernames()).toEqual([])
      await stores().tokens.save(tokenRecord('c1', { username: 'carol' }))
      await stores().tokens.save(tokenRecord('a1', { username: 'alice' }))
      await stores().tokens.save(tokenRecord('a2', { username: 'alice' }))
      await stores().tokens.save(tokenRecord('z1', { username: 'Zoë' }))
      expect(await stores().tokens.usernames()).toEqual(['Zoë', 'alice', 'carol'])
      await stores().tokens.deleteByUser('alice')
      expect(await stores().tokens.usernames()).toEqual(['Zoë', 'carol'])
    })

    it('keeps usernames of any text apart, however alike, a NUL and a backslash included', async () => {
      const alike = ['admin', 'admin\u0000', 'admin\\u0000', 'back\\slash', 'ü 🙂']
      const records = alike.map((username, i) => tokenRecord(`h${i}`, { username, createdAt: T0 + i }))
      for (const record of records) await stores().tokens.save(record)
      for (const record of records) {
        expect(await stores().tokens.findByHash(record.hash)).toEqual(record)
        expect(await stores().tokens.findById(record.id)).toEqual(record)
        expect(await stores().tokens.list(record.username)).toEqual([record])
      }
      expect(await stores().tokens.list(null)).toEqual(records)
      expect(await stores().tokens.usernames()).toEqual([...alike].sort())
      expect(await stores().tokens.deleteByUser('admin\u0000')).toBe(1)
      expect(await stores().tokens.list('admin\u0000')).toEqual([])
      expect(await stores().tokens.list('admin\\u0000')).toEqual([records[2]])
    })

    it('records a use on one record, changing nothing else; an unknown id is a no-op', async () => {
      await stores().tokens.save(tokenRecord('h1'))
      await stores().tokens.save(tokenRecord('h2'))
      await stores().tokens.touch('id-h1', T0 + MINUTE, '192.0.2.7')
      await stores().tokens.touch('unknown', T0 + MINUTE, '192.0.2.7')
      expect(await stores().tokens.findByHash('h1')).toEqual(
        tokenRecord('h1', { lastUsedAt: T0 + MINUTE, lastAddress: '192.0.2.7' }),
      )
      await stores().tokens.touch('id-h1', T0 + 2 * MINUTE, '::1')
      expect(await stores().tokens.findById('id-h1')).toMatchObject({
        lastUsedAt: T0 + 2 * MINUTE,
        lastAddress: '::1',
      })
      expect(await stores().tokens.findByHash('h2')).toEqual(tokenRecord('h2'))
      expect(await stores().tokens.list(null)).toHaveLength(2)
    })

    it('replaces a record saved again under the same hash', async () => {
      await stores().tokens.save(tokenRecord('h1', { scope: ['read'] }))
      await stores().tokens.save(tokenRecord('h1', { scope: ['*'], username: 'other' }))
      expect(await stores().tokens.findByHash('h1')).toMatchObject({ scope: ['*'], username: 'other' })
    })

    it('hands out copies: changing a returned record changes nothing stored', async () => {
      await stores().tokens.save(tokenRecord('h1'))
      const found = await stores().tokens.findByHash('h1')
      found?.scope.push('write')
      expect((await stores().tokens.findByHash('h1'))?.scope).toEqual(['*'])
    })

    it('deletes a record by its id once: true the first time, false after', async () => {
      await stores().tokens.save(tokenRecord('h1'))
      await stores().tokens.save(tokenRecord('h2'))
      expect(await stores().tokens.delete('h1')).toBe(false) // by id, never by hash
      expect(await stores().tokens.delete('id-h1')).toBe(true)
      expect(await stores().tokens.delete('id-h1')).toBe(false)
      expect(await stores().tokens.findByHash('h1')).toBeNull()
      expect(await stores().tokens.findById('id-h1')).toBeNull()
      expect(await stores().tokens.findByHash('h2')).not.toBeNull()
    })

    it('deletes every record of one user and no other', async () => {
      await stores().tokens.save(tokenRecord('a1', { username: 'alice' }))
      await stores().tokens.save(tokenRecord('a2', { username: 'alice' }))
      await stores().tokens.save(tokenRecord('b1', { username: 'bob' }))
      expect(await stores().tokens.deleteByUser('alice')).toBe(2)
      expect(await stores().tokens.deleteByUser('alice')).toBe(0)
      expect(await stores().tokens.findByHash('a1')).toBeNull()
      expect(await stores().tokens.findById('id-a2')).toBeNull()
      expect(await stores().tokens.findByHash('b1')).not.toBeNull()
      expect(await stores().tokens.list(null)).toHaveLength(1)
    })

    it('deletes records expired at or before now, and only those: never-expiring ones stay', async () => {
      await stores().tokens.save(tokenRecord('past', { expiresAt: T0 - 1 }))
      await stores().tokens.save(tokenRecord('edge', { expiresAt: T0 }))
      await stores().tokens.save(tokenRecord('live', { expiresAt: T0 + 1 }))
      await stores().tokens.save(tokenRecord('never', { expiresAt: null }))
      expect(await stores().tokens.deleteExpired(T0, 100)).toBe(2)
      expect(await stores().tokens.findByHash('never')).not.toBeNull()
      expect(await stores().tokens.findByHash('past')).toBeNull()
      expect(await stores().tokens.findByHash('edge')).toBeNull()
      expect(await stores().tokens.findByHash('live')).not.toBeNull()
    })

    it('deletes expired records in batches no larger than the limit', async () => {
      for (let i = 0; i < 7; i++) await stores().tokens.save(tokenRecord(`old${i}`, { expiresAt: T0 - i }))
      await stores().tokens.save(tokenRecord('live', { expiresAt: T0 + MINUTE }))
      expect(await stores().tokens.deleteExpired(T0, 3)).toBe(3)
      expect(await stores().tokens.deleteExpired(T0, 3)).toBe(3)
      expect(await stores().tokens.deleteExpired(T0, 3)).toBe(1)
      expect(await stores().tokens.deleteExpired(T0, 3)).toBe(0)
      expect(await stores().tokens.findByHash('live')).not.toBeNull()
    })

    it('counts the records of each kind that are live at now, never-expiring ones included', async () => {
      expect(await stores().tokens.countLive(T0)).toEqual({ session: 0, api: 0 })
      await stores().tokens.save(tokenRecord('past', { expiresAt: T0 - 1 }))
      await stores().tokens.save(tokenRecord('edge', { expiresAt: T0 }))
      await stores().tokens.save(tokenRecord('live1', { expiresAt: T0 + 1 }))
      await stores().tokens.save(tokenRecord('live2', { expiresAt: T0 + MINUTE }))
      await stores().tokens.save(tokenRecord('api1', { kind: 'api', name: 'ci', expiresAt: null }))
      await stores().tokens.save(tokenRecord('api2', { kind: 'api', name: 'old', expiresAt: T0 - MINUTE }))
      expect(await stores().tokens.countLive(T0)).toEqual({ session: 2, api: 1 })
      await stores().tokens.delete('id-live1')
      expect(await stores().tokens.countLive(T0)).toEqual({ session: 1, api: 1 })
      expect(await stores().tokens.countLive(T0 - MINUTE)).toEqual({ session: 3, api: 1 })
    })

    it('lets exactly one of racing deletes of the same record succeed, over two connections', async () => {
      const racing = await twoConnections()
      await stores().tokens.save(tokenRecord('h1'))
      const outcomes = await Promise.all(
        Array.from({ length: 10 }, (_, i) => racing(i).tokens.delete('id-h1')),
      )
      expect(outcomes.filter(Boolean)).toHaveLength(1)
      expect(await stores().tokens.findByHash('h1')).toBeNull()
      expect(await racing(1).tokens.findByHash('h1')).toBeNull()
    })

    it('keeps every record of racing saves, over two connections', async () => {
      const racing = await twoConnections()
      await Promise.all(Array.from({ length: 20 }, (_, i) => racing(i).tokens.save(tokenRecord(`h${i}`))))
      for (const connection of [racing(0), racing(1)]) {
        const listed = await connection.tokens.list(null)
        expect(listed.map((record) => record.hash).sort()).toEqual(
          Array.from({ length: 20 }, (_, i) => `h${i}`).sort(),
        )
      }
    })
  })
}
