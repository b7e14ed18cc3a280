import { createRequire } from 'node:module'
import { describe, expect, test } from 'vitest'
import { fixedClock } from './load.js'

const require = createRequire(import.meta.url)

interface Health {
  begin(): number
  ok(ticket: number): void
  fail(ticket: number, kind: string, line: string, recovered: string): void
}
interface Cache {
  get(token: string): object | undefined
  share(
    token: string,
    introspect: (keep: (user: object, expiresAt: number | null) => void) => Promise<object | null>,
  ): Promise<object | null>
  forget(token: string): void
}
const { createHealth } = require('../lib/health.js') as {
  createHealth: (log: (line: string) => void) => Health
}
const { createTokenCache } = require('../lib/cache.js') as {
  createTokenCache: (settings: { cacheMs: number; now: () => number }) => Cache
}

describe('outage state', () => {
  test('a request that began before a change cannot undo it: no flapping from slow requests', () => {
    const lines: string[] = []
    const health = createHealth((line) => lines.push(line))
    const slowBefore = health.begin()
    const failing = health.begin()
    health.fail(failing, 'unreachable', 'down', 'up again')
    health.ok(slowBefore) // began before the outage was seen: says nothing about now
    expect(lines).toEqual(['down'])

    const slowDuring = health.begin()
    const recovering = health.begin()
    health.ok(recovering)
    health.fail(slowDuring, 'unreachable', 'down', 'up again') // began before the recovery
    expect(lines).toEqual(['down', 'up again'])

    health.fail(health.begin(), 'unreachable', 'down', 'up again')
    expect(lines).toEqual(['down', 'up again', 'down'])
  })

  test('another kind of problem is a new line; its recovery line is its own', () => {
    const lines: string[] = []
    const health = createHealth((line) => lines.push(line))
    health.fail(health.begin(), 'unreachable', 'down', 'up again')
    health.fail(health.begin(), 'client', 'client refused', 'client accepted again')
    health.fail(health.begin(), 'client', 'client refused', 'client accepted again')
    health.ok(health.begin())
    expect(lines).toEqual(['down', 'client refused', 'client accepted again'])
  })
})

describe('token cache', () => {
  test('an introspection in flight when its token is forgotten (revoked here) does not store its answer', async () => {
    const cache = createTokenCache({ cacheMs: 5000, now: fixedClock().now })
    let answer: (user: object) => void = () => {}
    const pending = cache.share(
      't',
      (keep) =>
        new Promise((resolve) => {
          answer = (user) => {
            keep(user, null)
            resolve(user)
          }
        }),
    )
    cache.forget('t')
    answer({ username: 'admin' })
    expect(await pending).toEqual({ username: 'admin' })
    expect(cache.get('t')).toBeUndefined()
  })

  test('it holds 10000 tokens at most: the oldest go first', async () => {
    const cache = createTokenCache({ cacheMs: 5000, now: fixedClock().now })
    for (let i = 0; i <= 10000; i++) {
      await cache.share(`t${i}`, async (keep) => {
        keep({ i }, null)
        return { i }
      })
    }
    expect(cache.get('t0')).toBeUndefined()
    expect(cache.get('t1')).toEqual({ i: 1 })
    expect(cache.get('t10000')).toEqual({ i: 10000 })
  })
})

interface Revocations {
  refuses(token: string): boolean
  revoke(token: string, expiresAt: number | null, signal: AbortSignal, vouched?: boolean): Promise<string>
}
const { createRevocations, MAX_PENDING, MAX_UNVOUCHED } = require('../lib/revocations.js') as {
  createRevocations: (
    settings: { log: (line: string) => void; now: () => number; timeoutMs: number; url: string },
    client: { revoke: (token: string) => Promise<string> },
  ) => Revocations
  MAX_PENDING: number
  MAX_UNVOUCHED: number
}

describe('logouts waiting for flowadmin', () => {
  /** flowadmin unreachable: every revocation fails. */
  const unreachable = { revoke: async () => 'failed' }
  const signal = () => AbortSignal.timeout(1000)

  test('a token is refused until its expiry, then forgotten', async () => {
    const clock = fixedClock()
    const lines: string[] = []
    const revocations = createRevocations(
      { log: (line) => lines.push(line), now: clock.now, timeoutMs: 1000, url: 'https://fa' },
      unreachable,
    )
    expect(await revocations.revoke('t', clock.now() + 60_000, signal())).toBe('pending')
    expect(revocations.refuses('t')).toBe(true)
    clock.advance(59_999)
    expect(revocations.refuses('t')).toBe(true)
    clock.advance(1)
    expect(revocations.refuses('t')).toBe(false)
    expect(lines).toHaveLength(1)
  })

  test('at most 10000 wait: a logout beyond is refused ("full"), none already kept is forgotten', async () => {
    const clock = fixedClock()
    const lines: string[] = []
    const revocations = createRevocations(
      { log: (line) => lines.push(line), now: clock.now, timeoutMs: 1000, url: 'https://fa' },
      unreachable,
    )
    expect(MAX_PENDING).toBe(10000)
    for (let i = 0; i < MAX_PENDING; i++) await revocations.revoke(`t${i}`, null, signal())
    expect(await revocations.revoke('one-more', null, signal())).toBe('full')
    expect(await revocations.revoke('another', null, signal())).toBe('full')
    expect(revocations.refuses('t0')).toBe(true)
    expect(revocations.refuses('one-more')).toBe(false)
    expect(lines).toEqual([
      'a logout could not be revoked at flowadmin at https://fa: its token is refused on this instance and the revocation is retried until flowadmin takes it',
      '10000 logouts wait for flowadmin at https://fa to revoke their tokens: further logouts are refused (503) until it answers',
    ])
  })

  test('tokens this instance cannot vouch for wait apart, at most 1000, the oldest dropped: they never fill the room of real ones', async () => {
    const clock = fixedClock()
    const lines: string[] = []
    const revocations = createRevocations(
      { log: (line) => lines.push(line), now: clock.now, timeoutMs: 1000, url: 'https://fa' },
      unreachable,
    )
    expect(MAX_UNVOUCHED).toBe(1000)
    for (let i = 0; i <= MAX_PENDING; i++)
      expect(await revocations.revoke(`junk${i}`, null, signal(), false)).toBe('pending')
    // The latest 1000 wait; the older ones were dropped.
    expect(revocations.refuses(`junk${MAX_PENDING}`)).toBe(true)
    expect(revocations.refuses(`junk${MAX_PENDING + 1 - MAX_UNVOUCHED}`)).toBe(true)
    expect(revocations.refuses(`junk${MAX_PENDING - MAX_UNVOUCHED}`)).toBe(false)
    // A token this instance accepted still waits, refused here.
    expect(await revocations.revoke('real', null, signal())).toBe('pending')
    expect(revocations.refuses('real')).toBe(true)
    expect(lines).toEqual([
      'a logout could not be revoked at flowadmin at https://fa: its token is refused on this instance and the revocation is retried until flowadmin takes it',
    ])
  })
})
