import { addressScope, createCore } from '@flowadmin/core'
import { describe, expect, it } from 'vitest'
import { holdVerifications } from '../doubles.js'
import type { OpenStores } from '../store-contract.js'
import { ADDRESS, adminLogin, OTHER_ADDRESS, useTestCore } from './fixture.js'

/** The core's throttle rules over the stores `open` gives (fresh ones for each core). */
export function describeThrottle(name: string, open: OpenStores): void {
  const createTestCore = useTestCore(open)

  const WINDOW_MS = 900_000

  describe(`throttle: ${name}`, () => {
    describe('login throttling', () => {
      it('throttles a username from one address after 5 failures, without checking the password', async () => {
        const { core, hasher, events } = await createTestCore()
        for (let i = 0; i < 5; i++) {
          expect(await core.login(adminLogin({ password: 'guess' }), ADDRESS)).toMatchObject({
            error: { code: 'invalid_credentials' },
          })
        }
        const verified = hasher.verified.length
        expect(await core.login(adminLogin(), ADDRESS)).toEqual({
          ok: false,
          error: { code: 'throttled', retryAfter: 900 },
        })
        expect(hasher.verified).toHaveLength(verified)
        expect(events.ofType('login.throttled')).toEqual([
          expect.objectContaining({ username: 'admin', address: ADDRESS, retryAfter: 900 }),
        ])
      })

      it('does not lock the real user out from another address', async () => {
        const { core } = await createTestCore()
        for (let i = 0; i < 8; i++) await core.login(adminLogin({ password: 'guess' }), ADDRESS)
        expect((await core.login(adminLogin(), OTHER_ADDRESS)).ok).toBe(true)
        expect(await core.login(adminLogin(), ADDRESS)).toMatchObject({ error: { code: 'throttled' } })
      })

      it('counts down Retry-After and lets the pair try again once the window ends', async () => {
        const { core, clock } = await createTestCore()
        for (let i = 0; i < 5; i++) await core.login(adminLogin({ password: 'guess' }), ADDRESS)
        clock.advance(WINDOW_MS - 1500)
        expect(await core.login(adminLogin(), ADDRESS)).toEqual({
          ok: false,
          error: { code: 'throttled', retryAfter: 2 },
        })
        clock.advance(1000)
        expect(await core.login(adminLogin(), ADDRESS)).toEqual({
          ok: false,
          error: { code: 'throttled', retryAfter: 1 },
        })
        clock.advance(500)
        expect((await core.login(adminLogin(), ADDRESS)).ok).toBe(true)
      })

      it('does not extend the wait for attempts made while throttled', async () => {
        const { core, clock } = await createTestCore()
        for (let i = 0; i < 5; i++) await core.login(adminLogin({ password: 'guess' }), ADDRESS)
        for (let i = 0; i < 50; i++) await core.login(adminLogin({ password: 'guess' }), ADDRESS)
        clock.advance(WINDOW_MS)
        expect((await core.login(adminLogin(), ADDRESS)).ok).toBe(true)
      })

      it('throttles an address spraying many usernames, for every username', async () => {
        const { core } = await createTestCore()
        for (let i = 0; i < 20; i++)
          await core.login(adminLogin({ username: `user${i}`, password: 'guess' }), ADDRESS)
        expect(await core.login(adminLogin(), ADDRESS)).toMatchObject({ error: { code: 'throttled' } })
        expect(await core.login(adminLogin({ username: 'someone-new' }), ADDRESS)).toMatchObject({
          error: { code: 'throttled' },
        })
        expect((await core.login(adminLogin(), OTHER_ADDRESS)).ok).toBe(true)
      })

      it('forgives a pair’s failures after a success, but not the address’s', async () => {
        const { core } = await createTestCore({ throttle: { maxFailuresPerAddress: 10 } })
        for (let round = 0; round < 2; round++) {
          for (let i = 0; i < 4; i++) await core.login(adminLogin({ password: 'guess' }), ADDRESS)
          expect((await core.login(adminLogin(), ADDRESS)).ok).toBe(true)
        }
        for (let i = 0; i < 2; i++) await core.login(adminLogin({ password: 'guess' }), ADDRESS)
        expect(await core.login(adminLogin(), ADDRESS)).toMatchObject({ error: { code: 'throttled' } })
      })

      it('counts unknown clients and too-wide scopes as failures', async () => {
        const { core } = await createTestCore({ throttle: { maxFailuresPerUser: 2 } })
        await core.login(adminLogin({ clientId: 'other' }), ADDRESS)
        await core.login(adminLogin({ username: 'reader', password: 'rpw', scope: '*' }), ADDRESS)
        await core.login(adminLogin({ clientId: 'other' }), ADDRESS)
        expect(await core.login(adminLogin(), ADDRESS)).toMatchObject({ error: { code: 'throttled' } })
      })

      it('keeps counting across a restart: the counters live in the store', async () => {
        const first = await createTestCore()
        for (let i = 0; i < 5; i++) await first.core.login(adminLogin({ password: 'guess' }), ADDRESS)
        const restarted = createCore(
          {
            stores: first.stores,
            verifier: first.hasher,
            loader: first.loader,
            typeUsage: first.typeUsage,
            clock: first.clock,
          },
          {
            adminAuth: {
              users: [{ username: 'admin', password: first.hasher.hash('pw'), permissions: '*' }],
            },
          },
        )
        expect(await restarted.login(adminLogin(), ADDRESS)).toMatchObject({ error: { code: 'throttled' } })
      })

      it('uses configured limits and window', async () => {
        const { core, clock } = await createTestCore({
          throttle: { maxFailuresPerUser: 2, windowSeconds: 60 },
        })
        await core.login(adminLogin({ password: 'guess' }), ADDRESS)
        expect((await core.login(adminLogin(), ADDRESS)).ok).toBe(true)
        await core.login(adminLogin({ password: 'guess' }), ADDRESS)
        await core.login(adminLogin({ password: 'guess' }), ADDRESS)
        expect(await core.login(adminLogin(), ADDRESS)).toEqual({
          ok: false,
          error: { code: 'throttled', retryAfter: 60 },
        })
        clock.advance(60_000)
        expect((await core.login(adminLogin(), ADDRESS)).ok).toBe(true)
      })

      it('does not count malformed requests', async () => {
        const { core } = await createTestCore({ throttle: { maxFailuresPerUser: 1 } })
        for (let i = 0; i < 3; i++) await core.login(adminLogin({ grantType: 'implicit' }), ADDRESS)
        await core.login(adminLogin({ scope: 'write' }), ADDRESS)
        expect((await core.login(adminLogin(), ADDRESS)).ok).toBe(true)
      })
    })

    describe('throttle keys', () => {
      it('keys a huge username by its digest: counted alike, stored short, kept apart from others', async () => {
        const { core, stores } = await createTestCore({ throttle: { maxFailuresPerUser: 2 } })
        const seen: string[] = []
        const begin = stores.throttle.begin.bind(stores.throttle)
        stores.throttle.begin = (attempt, policy, now) => {
          seen.push(attempt.pairKey, attempt.addressKey, attempt.knownKey)
          return begin(attempt, policy, now)
        }
        const huge = 'u'.repeat(60_000)
        await core.login(adminLogin({ username: huge, password: 'guess' }), ADDRESS)
        await core.login(adminLogin({ username: `${huge}x`, password: 'guess' }), ADDRESS)
        await core.login(adminLogin({ username: huge, password: 'guess' }), ADDRESS)
        expect(seen.every((key) => key.length <= 160)).toBe(true)
        expect(await core.login(adminLogin({ username: huge }), ADDRESS)).toMatchObject({
          error: { code: 'throttled' },
        })
        expect(await core.login(adminLogin({ username: `${huge}x` }), ADDRESS)).toMatchObject({
          error: { code: 'invalid_credentials' },
        })
      })
    })

    describe('attempts sent all at once', () => {
      it('cannot slip past the limit together: at most limit + allowance reach the verifier', async () => {
        const { core, hasher, events } = await createTestCore()
        const results = await Promise.all(
          Array.from({ length: 30 }, () => core.login(adminLogin({ password: 'guess' }), ADDRESS)),
        )
        const codes = results.map((result) => (result.ok ? 'ok' : result.error.code))
        const refused = codes.filter((code) => code === 'invalid_credentials').length
        expect(refused).toBe(hasher.verified.length)
        expect(refused).toBeGreaterThanOrEqual(5)
        expect(refused).toBeLessThanOrEqual(5 + 4)
        const shed = codes.filter((code) => code === 'temporarily_unavailable').length
        expect(shed).toBe(events.ofType('login.shed').length)
        expect(codes.filter((code) => code === 'throttled')).toHaveLength(30 - refused - shed)
        // Shed attempts were not counted; the verified failures were, and closed the pair.
        expect(await core.login(adminLogin(), ADDRESS)).toMatchObject({ error: { code: 'throttled' } })
      })

      it('never throttles right passwords from an address without failures, however many at once', async () => {
        const { core } = await createTestCore()
        const results = await Promise.all(Array.from({ length: 40 }, () => core.login(adminLogin(), ADDRESS)))
        const codes = results.map((result) => (result.ok ? 'ok' : result.error.code))
        expect(codes.filter((code) => code !== 'ok' && code !== 'temporarily_unavailable')).toEqual([])
        expect(codes).toContain('ok')
        for (const result of results) {
          if (!result.ok) expect(result.error).toEqual({ code: 'temporarily_unavailable', retryAfter: 1 })
        }
        expect((await core.login(adminLogin(), ADDRESS)).ok).toBe(true)
      })

      it('lets 20 right passwords at once from one address all through: the busy ones ask again as others end', async () => {
        const { core, hasher } = await createTestCore()
        const hold = holdVerifications(hasher)
        const logins = Array.from({ length: 20 }, () => core.login(adminLogin(), ADDRESS))
        await hold.started
        hold.restore()
        const results = await Promise.all(logins)
        expect(results.map((result) => result.ok)).toEqual(Array(20).fill(true))
        expect(hasher.verified).toHaveLength(20)
      })
    })

    describe('address scope', () => {
      it.each([
        ['2001:db8:0:1:aaaa::1', '2001:db8:0:1::/64'],
        ['2001:0db8:0000:0001:ffff:ffff:ffff:ffff', '2001:db8:0:1::/64'],
        ['[2001:db8::1]', '2001:db8:0:0::/64'],
        ['fe80::1%eth0', 'fe80:0:0:0::/64'],
        ['::1', '0:0:0:0::/64'],
        ['127.0.0.2', '127.0.0.2'],
        ['::ffff:10.0.0.1', '::ffff:10.0.0.1'],
        ['unknown', 'unknown'],
        ['1:2:3:4:5:6:7:8:9', '1:2:3:4:5:6:7:8:9'],
        ['1::2::3', '1::2::3'],
      ])('counts %s as %s', (address, scope) => {
        expect(addressScope(address)).toBe(scope)
      })

      it('throttles an IPv6 /64 as one address, and another /64 not', async () => {
        const { core, events } = await createTestCore()
        for (let i = 0; i < 5; i++)
          await core.login(adminLogin({ password: 'guess' }), `2001:db8:0:1::${i + 1}`)
        expect(await core.login(adminLogin(), '2001:db8:0:1:ffff::9')).toMatchObject({
          error: { code: 'throttled' },
        })
        expect((await core.login(adminLogin(), '2001:db8:0:2::1')).ok).toBe(true)
        expect(events.ofType('login.throttled')[0]?.address).toBe('2001:db8:0:1:ffff::9')
      })
    })
  })
}
