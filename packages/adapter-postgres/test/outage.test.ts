import { isStoreUnavailable } from '@flowadmin/core'
import { tokenRecord } from '@flowadmin/testkit'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createPostgresStores, PostgresStoreError, type PostgresStores } from '../src/index.js'
import { freePort, useTestDatabase } from './pg-server.js'
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js'

const database = useTestDatabase()
const record = (hash: string) => tokenRecord(hash)

/** What an operation did: its value, or that the store said it is unavailable. Anything else throws. */
async function outcome<T>(operation: Promise<T>): Promise<{ value: T } | 'unavailable'> {
  try {
    return { value: await operation }
  } catch (error) {
    if (isStoreUnavailable(error)) return 'unavailable'
    throw error
  }
}

describe('PostgreSQL going away', () => {
  let stores: PostgresStores
  let proxy: TcpProxy
  beforeEach(async () => {
    const url = new URL(database.current().url)
    proxy = await startTcpProxy(url.hostname, Number(url.port || 5432))
    url.host = `127.0.0.1:${proxy.port}`
    stores = await createPostgresStores({ url: url.toString(), pool: 3, timeoutMs: 1000 })
  })
  afterEach(async () => {
    await stores.close()
    await proxy.close()
  })

  it('answers StoreUnavailable within the timeout while the server does not answer, then recovers by itself', async () => {
    await stores.tokens.save(record('before'))
    proxy.pause()
    const started = Date.now()
    expect(await outcome(stores.tokens.findByHash('before'))).toBe('unavailable')
    const firstFailure = Date.now() - started
    // A write in flight when the server stopped answering is not acknowledged.
    expect(await outcome(stores.tokens.save(record('during')))).toBe('unavailable')
    expect(firstFailure).toBeLessThan(3000)

    proxy.resume()
    const resumed = Date.now()
    let recovered: { value: unknown } | 'unavailable' = 'unavailable'
    while (recovered === 'unavailable' && Date.now() - resumed < 5000) {
      recovered = await outcome(stores.tokens.findByHash('before'))
    }
    expect(recovered).toEqual({ value: record('before') })
    console.info(
      `server not answering: first StoreUnavailable after ${firstFailure} ms; recovered ${Date.now() - resumed} ms after it answered again`,
    )
  })

  it('survives its connections being terminated: outages are StoreUnavailable, acknowledged writes stay', async () => {
    await stores.tokens.save(record('kept'))
    await stores.modules.upsert({ name: 'm', version: '1.0.0', sets: [{ name: 's', types: ['t'] }] })
    await database
      .current()
      .admin(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [database.current().name],
      )
    const outcomes = []
    for (let i = 0; i < 5; i++) outcomes.push(await outcome(stores.tokens.findByHash('kept')))
    for (const result of outcomes) expect([{ value: record('kept') }, 'unavailable']).toContainEqual(result)
    expect(outcomes.at(-1)).toEqual({ value: record('kept') })
    expect((await stores.modules.find('m'))?.sets[0]?.enabled).toBe(true)
  })

  it('throws StoreUnavailable, never hangs, when every connection is reset mid-way', async () => {
    const policy = {
      pairLimit: 5,
      addressLimit: 20,
      windowMs: 60_000,
      allowance: 2,
      leaseMs: 30_000,
      knownMs: 60_000,
    }
    const attempt = (i: number) => ({ pairKey: `pair ${i}`, addressKey: `addr ${i}`, knownKey: `known ${i}` })
    const now = Date.UTC(2026, 0, 1)
    const inFlight = Array.from({ length: 6 }, (_, i) =>
      outcome(stores.throttle.begin(attempt(i), policy, now)),
    )
    proxy.cut()
    for (const result of await Promise.all(inFlight)) {
      expect([{ value: { outcome: 'proceed', known: false } }, 'unavailable']).toContainEqual(result)
    }
    expect(await outcome(stores.throttle.begin(attempt(9), policy, now))).toEqual({
      value: { outcome: 'proceed', known: false },
    })
  })
})

describe('opening with no server at the address', () => {
  it('fails with one line naming host and port, never the password', async () => {
    const port = await freePort()
    const error = await createPostgresStores({
      url: `postgres://admin:hunter2@127.0.0.1:${port}/flows`,
    }).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(PostgresStoreError)
    const { code, message } = error as PostgresStoreError
    expect(code).toBe('unreachable')
    expect(message).toContain(`cannot reach PostgreSQL at 127.0.0.1:${port}/flows`)
    expect(message).not.toContain('hunter2')
    expect(message).not.toContain('\n')
  })
})
