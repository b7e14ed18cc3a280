import type { AttemptOutcome, LoginAttempt, ThrottlePolicy } from '@flowadmin/core'
import { describe, expect, it } from 'vitest'
import { type ContractPart, MINUTE, T0 } from './contract-part.js'

/** The throttle store's part of the store contract. */
export const describeThrottleContract: ContractPart = (stores, twoConnections) => {
  describe('throttle', () => {
    const WINDOW = 15 * MINUTE
    const LEASE = 30_000
    const KNOWN = 30 * 24 * 60 * MINUTE
    const policy: ThrottlePolicy = {
      pairLimit: 3,
      addressLimit: 5,
      windowMs: WINDOW,
      allowance: 2,
      leaseMs: LEASE,
      knownMs: KNOWN,
    }
    const attempt = (pair = 'admin', address = '127.0.0.1'): LoginAttempt => ({
      pairKey: `user ${address} ${pair}`,
      addressKey: `addr ${address}`,
      knownKey: `known ${address} ${pair}`,
    })
    const begin = (at: LoginAttempt, now = T0) => stores().throttle.begin(at, policy, now)
    const finish = (at: LoginAttempt, outcome: AttemptOutcome, now = T0) =>
      stores().throttle.finish(at, outcome, policy, now)
    /** One attempt that begins, is verified and ends as given; the decision when it could not begin. */
    const tryOnce = async (at: LoginAttempt, outcome: AttemptOutcome, now = T0) => {
      const decision = await begin(at, now)
      if (decision.outcome === 'proceed') await finish(at, outcome, now)
      return decision
    }
    const proceed = (known = false) => ({ outcome: 'proceed', known })

    it('lets a new pair proceed, not known', async () => {
      expect(await begin(attempt())).toEqual(proceed())
    })

    it('throttles a pair once its failures reach the limit, until its window ends (at retryAt exactly)', async () => {
      for (let i = 0; i < 3; i++) expect(await tryOnce(attempt(), 'failed', T0 + i)).toEqual(proceed())
      expect(await begin(attempt(), T0 + MINUTE)).toEqual({ outcome: 'throttled', retryAt: T0 + WINDOW })
      // The pair only: the same user from elsewhere and another user from here still proceed.
      expect(await begin(attempt('admin', '10.0.0.9'), T0 + MINUTE)).toEqual(proceed())
      expect(await begin(attempt('editor'), T0 + MINUTE)).toEqual(proceed())
      expect(await begin(attempt(), T0 + WINDOW - 1)).toEqual({
        outcome: 'throttled',
        retryAt: T0 + WINDOW,
      })
      expect(await begin(attempt(), T0 + WINDOW)).toEqual(proceed())
    })

    it('throttles an address once its failures reach the limit, whatever the usernames', async () => {
      for (let i = 0; i < 5; i++) expect(await tryOnce(attempt(`user${i}`), 'failed')).toEqual(proceed())
      expect(await begin(attempt('someone-new'), T0 + 1)).toEqual({
        outcome: 'throttled',
        retryAt: T0 + WINDOW,
      })
      expect(await begin(attempt('someone-new', '10.0.0.9'), T0 + 1)).toEqual(proceed())
    })

    it('tells when the last closed window ends', async () => {
      await tryOnce(attempt('a'), 'failed', T0)
      await tryOnce(attempt('b'), 'failed', T0)
      for (let i = 0; i < 3; i++) await tryOnce(attempt(), 'failed', T0 + MINUTE)
      // The address window began at T0, the pair's a minute later: both are closed now.
      expect(await begin(attempt(), T0 + 2 * MINUTE)).toEqual({
        outcome: 'throttled',
        retryAt: T0 + MINUTE + WINDOW,
      })
    })

    it('a success clears the pair, leaves the address counting and makes the pair known', async () => {
      await tryOnce(attempt(), 'failed')
      await tryOnce(attempt(), 'failed')
      expect(await tryOnce(attempt(), 'succeeded', T0 + 1)).toEqual(proceed())
      expect(await begin(attempt(), T0 + 2)).toEqual(proceed(true))
      await finish(attempt(), 'failed', T0 + 2)
      // The pair starts over: three more failures before it closes...
      await tryOnce(attempt(), 'failed', T0 + 3)
      expect(await tryOnce(attempt(), 'failed', T0 + 4)).toEqual(proceed(true))
      // ... by then the address holds five failures (two before the success, three after) and closes.
      expect(await begin(attempt('other'), T0 + 5)).toEqual({ outcome: 'throttled', retryAt: T0 + WINDOW })
    })

    it('knows a pair for knownMs after its last success, and only that pair', async () => {
      await tryOnce(attempt(), 'succeeded', T0)
      expect(await tryOnce(attempt(), 'abandoned', T0 + KNOWN - 1)).toEqual(proceed(true))
      expect(await tryOnce(attempt('admin', '10.0.0.9'), 'abandoned', T0 + 1)).toEqual(proceed())
      expect(await tryOnce(attempt('Admin'), 'abandoned', T0 + 1)).toEqual(proceed())
      expect(await tryOnce(attempt(), 'abandoned', T0 + KNOWN)).toEqual(proceed())
      // A later success extends it; an earlier one arriving late does not shorten it.
      await tryOnce(attempt(), 'succeeded', T0 + KNOWN)
      await tryOnce(attempt(), 'succeeded', T0 + 1)
      expect(await tryOnce(attempt(), 'abandoned', 2 * KNOWN - 1 + T0)).toEqual(proceed(true))
    })

    it('answers busy, never throttled, while attempts in flight fill limit + allowance; abandoned ones record nothing', async () => {
      for (let i = 0; i < 5; i++) expect(await begin(attempt())).toEqual(proceed())
      expect(await begin(attempt())).toEqual({ outcome: 'busy' })
      await finish(attempt(), 'abandoned')
      expect(await begin(attempt())).toEqual(proceed())
      for (let i = 0; i < 5; i++) await finish(attempt(), 'abandoned')
      // Nothing was recorded: three failures still close the pair, not fewer.
      await tryOnce(attempt(), 'failed')
      await tryOnce(attempt(), 'failed')
      expect(await tryOnce(attempt(), 'failed')).toEqual(proceed())
      expect(await begin(attempt())).toMatchObject({ outcome: 'throttled' })
    })

    it('counts the failures of attempts already in flight: at most limit + allowance are verified', async () => {
      for (let i = 0; i < 5; i++) await begin(attempt())
      for (let i = 0; i < 5; i++) await finish(attempt(), 'failed')
      expect(await begin(attempt())).toMatchObject({ outcome: 'throttled' })
    })

    it('forgets attempts in flight once none began for leaseMs', async () => {
      for (let i = 0; i < 5; i++) await begin(attempt(), T0)
      expect(await begin(attempt(), T0 + LEASE - 1)).toEqual({ outcome: 'busy' })
      expect(await begin(attempt(), T0 + LEASE)).toEqual(proceed())
      // A late finish of a forgotten attempt never takes the count below zero.
      for (let i = 0; i < 6; i++) await finish(attempt(), 'abandoned', T0 + LEASE)
      for (let i = 0; i < 5; i++) expect(await begin(attempt(), T0 + LEASE)).toEqual(proceed())
      expect(await begin(attempt(), T0 + LEASE)).toEqual({ outcome: 'busy' })
    })

    it('decides racing attempts one at a time, over two connections', async () => {
      const racing = await twoConnections()
      const decisions = await Promise.all(
        Array.from({ length: 40 }, (_, i) => racing(i).throttle.begin(attempt(), policy, T0)),
      )
      expect(decisions.filter((d) => d.outcome === 'proceed')).toHaveLength(5)
      expect(decisions.filter((d) => d.outcome === 'busy')).toHaveLength(35)
      await Promise.all(
        Array.from({ length: 5 }, (_, i) => racing(i).throttle.finish(attempt(), 'failed', policy, T0)),
      )
      expect(await begin(attempt())).toMatchObject({ outcome: 'throttled' })
      // The address counted all five failures too, and reached its limit.
      expect(await begin(attempt('other'))).toMatchObject({ outcome: 'throttled' })
    })

    it('deletes ended windows and forgotten pairs in batches no larger than the limit', async () => {
      for (let i = 0; i < 3; i++) await tryOnce(attempt(`old${i}`, `10.0.0.${i}`), 'failed', T0 - WINDOW - i)
      await tryOnce(attempt('gone', '10.0.1.1'), 'succeeded', T0 - KNOWN)
      await tryOnce(attempt(), 'failed', T0)
      // Ended: three pairs, four addresses (with the success's), one known pair.
      expect(await stores().throttle.deleteExpired(T0, 3)).toBe(3)
      expect(await stores().throttle.deleteExpired(T0, 3)).toBe(3)
      expect(await stores().throttle.deleteExpired(T0, 3)).toBe(2)
      expect(await stores().throttle.deleteExpired(T0, 3)).toBe(0)
      for (let i = 0; i < 2; i++) await tryOnce(attempt(), 'failed', T0)
      expect(await begin(attempt(), T0)).toMatchObject({ outcome: 'throttled' })
    })

    it('keeps keys of any text apart, however alike', async () => {
      const alike = ['user ::1 admin', 'user ::1 admin ', 'user ::1 Admin', 'ü 🙂', 'user ::1 admin\u0000']
      const of = (i: number): LoginAttempt => ({
        pairKey: alike[i] as string,
        addressKey: `addr ${i}`,
        knownKey: `known ${alike[i]}`,
      })
      // Only the key at index 3 reaches the limit; only the key at index 1 logs in.
      for (let n = 0; n < 3; n++) await tryOnce(of(3), 'failed')
      await tryOnce(of(1), 'succeeded')
      const decisions = await Promise.all(alike.map(async (_, i) => tryOnce(of(i), 'abandoned', T0 + 1)))
      expect(decisions).toEqual([
        proceed(),
        proceed(true),
        proceed(),
        { outcome: 'throttled', retryAt: T0 + WINDOW },
        proceed(),
      ])
    })
  })
}
