import { describe, expect, it } from 'vitest'
import { holdVerifications } from '../doubles.js'
import type { OpenStores } from '../store-contract.js'
import { waitFor } from '../waiting.js'
import { ADDRESS, adminLogin, OTHER_ADDRESS, useTestCore } from './fixture.js'

/** The core's login queue over the stores `open` gives (fresh ones for each core). */
export function describeLoginQueue(name: string, open: OpenStores): void {
  const createTestCore = useTestCore(open)

  describe(`verifier queue: ${name}`, () => {
    describe('logins beyond the verifier queue', () => {
      it('are answered temporarily_unavailable at once, recorded as shed, and not counted as failures', async () => {
        const { core, hasher, events } = await createTestCore({
          loginQueue: { concurrency: 1, maxWaiting: 2, maxWaitingKnown: 2, retryAfter: 3 },
        })
        // The real user logged in before from her usual address.
        expect((await core.login(adminLogin(), OTHER_ADDRESS)).ok).toBe(true)

        const hold = holdVerifications(hasher)
        const flood = Array.from({ length: 10 }, (_, i) =>
          core.login(adminLogin({ password: 'guess' }), `10.0.0.${i}`),
        )
        // One verifies, two wait: seven are shed before any verification ends.
        await hold.started
        await waitFor(
          () => events.ofType('login.shed').length >= 7,
          () => `7 logins shed (login.shed events: ${events.ofType('login.shed').length})`,
        )
        expect(events.ofType('login.shed')[0]).toMatchObject({ username: 'admin', retryAfter: 3 })
        // Her attempt from her known address takes the known lane, which the flood did not fill.
        const hers = core.login(adminLogin(), OTHER_ADDRESS)
        hold.restore()
        const results = await Promise.all(flood)
        expect((await hers).ok).toBe(true)
        const codes = results.map((result) => (result.ok ? 'ok' : result.error.code))
        expect(codes.filter((code) => code === 'temporarily_unavailable')).toHaveLength(7)
        expect(codes.filter((code) => code === 'invalid_credentials')).toHaveLength(3)
        for (const result of results) {
          if (!result.ok && result.error.code === 'temporarily_unavailable') {
            expect(result.error).toEqual({ code: 'temporarily_unavailable', retryAfter: 3 })
          }
        }
        // A shed attempt left nothing behind: its address may still try five guesses.
        const shedAddress = events.ofType('login.shed')[0]?.address as string
        for (let i = 0; i < 5; i++) {
          expect(await core.login(adminLogin({ password: 'guess' }), shedAddress)).toMatchObject({
            error: { code: 'invalid_credentials' },
          })
        }
        expect(await core.login(adminLogin(), shedAddress)).toMatchObject({ error: { code: 'throttled' } })
        expect(await core.login(adminLogin(), ADDRESS)).toMatchObject({ ok: true })
      })
    })

    it('take more waiting attempts once the queue is resized (core.loginQueue.resize)', async () => {
      const { core, hasher } = await createTestCore({
        loginQueue: { concurrency: 1, maxWaiting: 0, maxWaitingKnown: 0, retryAfter: 1 },
      })
      const hold = holdVerifications(hasher)
      const first = core.login(adminLogin({ password: 'guess' }), '10.0.0.1')
      await hold.started
      expect(await core.login(adminLogin({ password: 'guess' }), '10.0.0.2')).toMatchObject({
        error: { code: 'temporarily_unavailable' },
      })
      core.loginQueue.resize({ maxWaiting: 1 })
      const second = core.login(adminLogin({ password: 'guess' }), '10.0.0.3')
      hold.restore()
      expect(await first).toMatchObject({ error: { code: 'invalid_credentials' } })
      expect(await second).toMatchObject({ error: { code: 'invalid_credentials' } })
      expect(() => core.loginQueue.resize({ maxWaiting: -1 })).toThrow(RangeError)
    })
  })
}
