import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import {
  createPostgresStores,
  type PostgresStores,
  TOKEN_LISTENER_NAME,
  type TokenCacheOptions,
} from '../src/index.js'
import { createTokenCache } from '../src/token-cache.js'
import { connectionsNamed, EMPTY_TABLES, useTestDatabase } from './pg-server.js'

const database = useTestDatabase()

const record = (n: number, username = 'admin') => ({
  hash: `${n}`.padStart(64, 'a'),
  id: `id-${n}`,
  kind: 'session' as const,
  name: null,
  username,
  clientId: 'service-admin',
  scope: ['*'],
  fingerprint: 'f',
  createdAt: 1000,
  expiresAt: null,
  lastUsedAt: null,
  lastAddress: null,
  agent: null,
  audience: 'flowadmin',
  signIn: 'password' as const,
})

/** Deletes a record behind every instance's back: in the database, announcing nothing. */
const deleteSilently = (hash: string) =>
  database.current().query('DELETE FROM flowadmin_tokens WHERE hash = $1', [hash])

describe('token lookups kept in memory on PostgreSQL', () => {
  const open: PostgresStores[] = []
  const openOne = async (cache: boolean | TokenCacheOptions) => {
    const stores = await createPostgresStores({ url: database.current().url, pool: 2, timeoutMs: 2000 })
    open.push(stores)
    if (cache !== false)
      await stores.cacheTokens(cache === true ? { heartbeatMs: 200, retryMs: 50 } : cache).ready
    return stores
  }
  const listeners = () => connectionsNamed(database, TOKEN_LISTENER_NAME)
  const terminate = (pids: number[]) =>
    database.current().query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [pids])
  beforeEach(() => database.current().query(EMPTY_TABLES))
  afterEach(async () => {
    for (const stores of open.splice(0)) await stores.close()
  })

  it('answers a lookup it made before from memory, even after uses written by either instance', async () => {
    const a = await openOne(true)
    const b = await openOne(true)
    await a.tokens.save(record(1))
    expect(await b.tokens.findByHash(record(1).hash)).toEqual(record(1))
    await b.tokens.touch('id-1', 5000, '10.0.0.2')
    await a.tokens.touch('id-1', 6000, '10.0.0.1')
    await deleteSilently(record(1).hash)
    // Nothing announced the deletion: B answers from what it kept, with the use it wrote itself.
    expect(await b.tokens.findByHash(record(1).hash)).toEqual({
      ...record(1),
      lastUsedAt: 5000,
      lastAddress: '10.0.0.2',
    })
    // A kept nothing (it never looked the token up): it reads the database.
    expect(await a.tokens.findByHash(record(1).hash)).toBeNull()
    // Unknown hashes are never kept: a record saved after a lookup found nothing is found.
    expect(await b.tokens.findByHash(record(2).hash)).toBeNull()
    await a.tokens.save(record(2))
    expect(await b.tokens.findByHash(record(2).hash)).toEqual(record(2))
  })

  it('keeps nothing without cacheTokens', async () => {
    const a = await openOne(false)
    await a.tokens.save(record(1))
    expect(await a.tokens.findByHash(record(1).hash)).toEqual(record(1))
    await deleteSilently(record(1).hash)
    expect(await a.tokens.findByHash(record(1).hash)).toBeNull()
  })

  it('forgets what another instance revokes, deletes by user or changes, once announced', async () => {
    const a = await openOne(true)
    const b = await openOne(true)
    for (const n of [1, 2, 3, 4]) await a.tokens.save(record(n, n === 2 || n === 3 ? 'leaver' : 'admin'))
    for (const n of [1, 2, 3, 4]) expect(await b.tokens.findByHash(record(n).hash)).not.toBeNull()

    expect(await a.tokens.delete('id-1')).toBe(true)
    expect(await a.tokens.deleteByUser('leaver')).toBe(2)
    await a.tokens.save({ ...record(4), scope: ['flows.read'] })
    // The writer forgets at once.
    expect(await a.tokens.findByHash(record(1).hash)).toBeNull()
    await vi.waitFor(
      async () => {
        expect(await b.tokens.findByHash(record(1).hash)).toBeNull()
        expect(await b.tokens.findByHash(record(2).hash)).toBeNull()
        expect(await b.tokens.findByHash(record(3).hash)).toBeNull()
        expect((await b.tokens.findByHash(record(4).hash))?.scope).toEqual(['flows.read'])
      },
      { timeout: 10_000, interval: 10 },
    )
  })

  it('reads the database while its listening connection is down', async () => {
    const a = await openOne(false)
    // Neither a reconnection nor a late heartbeat within the test: only the lost connection tells.
    const reported: string[] = []
    const b = await openOne({ heartbeatMs: 600_000, retryMs: 600_000, onError: (m) => reported.push(m) })
    for (const n of [1, 2]) await a.tokens.save(record(n))
    for (const n of [1, 2]) expect(await b.tokens.findByHash(record(n).hash)).toEqual(record(n))
    // Kept while it listens: a deletion nobody announced is not seen.
    await deleteSilently(record(2).hash)
    expect(await b.tokens.findByHash(record(2).hash)).toEqual(record(2))

    const before = await listeners()
    expect(before).toHaveLength(1)
    await terminate(before)
    await vi.waitFor(() => expect(reported).toHaveLength(1), { timeout: 10_000, interval: 10 })
    expect(reported[0]).toMatch(/^listening for token changes: .*; reconnecting$/)
    expect(await listeners()).toEqual([])
    // Not listening: what it kept is not used, and a revocation nobody hears is seen at once.
    expect(await b.tokens.findByHash(record(2).hash)).toBeNull()
    await deleteSilently(record(1).hash)
    expect(await b.tokens.findByHash(record(1).hash)).toBeNull()
    // Nor is anything kept meanwhile.
    await a.tokens.save(record(3))
    expect(await b.tokens.findByHash(record(3).hash)).toEqual(record(3))
    await deleteSilently(record(3).hash)
    expect(await b.tokens.findByHash(record(3).hash)).toBeNull()
    expect(await listeners()).toEqual([])
  })

  it('keeps again once its listening connection is back', async () => {
    const a = await openOne(true)
    const b = await openOne(true)
    await a.tokens.save(record(1))
    const before = await listeners()
    expect(before).toHaveLength(2)
    await terminate(before)
    // Listening again (new connections), B keeps what it reads from then on.
    await vi.waitFor(
      async () => {
        const now = await listeners()
        expect(now).toHaveLength(2)
        expect(now.some((pid) => before.includes(pid))).toBe(false)
      },
      { timeout: 10_000, interval: 20 },
    )
    await vi.waitFor(
      async () => {
        expect(await b.tokens.findByHash(record(1).hash)).not.toBeNull()
        await a.tokens.save(record(3))
        expect(await b.tokens.findByHash(record(3).hash)).not.toBeNull()
        await deleteSilently(record(3).hash)
        expect(await b.tokens.findByHash(record(3).hash)).not.toBeNull()
      },
      { timeout: 10_000, interval: 50 },
    )
  })
})

describe('the token cache', () => {
  it('keeps nothing while a heartbeat has been out for more than staleMs, until it comes back', () => {
    let now = 0
    const cache = createTokenCache(() => now)
    cache.staleMs = 1000
    cache.listening()
    cache.keep(record(1), cache.generation)
    // No heartbeat sent for a long while (a busy process): nothing is a sign of trouble.
    now = 60_000
    expect(cache.get(record(1).hash)).toEqual(record(1))
    cache.beat(now)
    now += 1000
    cache.beat(now) // a second one sent meanwhile does not reset the wait
    expect(cache.get(record(1).hash)).toEqual(record(1))
    now += 1
    expect(cache.get(record(1).hash)).toBeUndefined()
    cache.keep(record(2), cache.generation)
    cache.alive()
    expect(cache.get(record(1).hash)).toEqual(record(1))
    expect(cache.get(record(2).hash)).toBeUndefined()
  })

  it('does not keep what a lookup read when a change arrived while it read', () => {
    const cache = createTokenCache()
    cache.listening()
    const began = cache.generation
    cache.forget(record(1).hash)
    cache.keep(record(1), began)
    expect(cache.get(record(1).hash)).toBeUndefined()
    cache.keep(record(1), cache.generation)
    expect(cache.get(record(1).hash)).toEqual(record(1))
    cache.lost()
    expect(cache.get(record(1).hash)).toBeUndefined()
    cache.keep(record(1), cache.generation)
    expect(cache.size).toBe(0)
  })
})
