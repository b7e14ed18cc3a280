import { webDigest } from '@flowadmin/core'
import { describe, expect, it } from 'vitest'
import type { OpenStores } from '../store-contract.js'
import { ADDRESS, adminLogin, type TestCore, useTestCore } from './fixture.js'

/** The core's tokens rules over the stores `open` gives (fresh ones for each core). */
export function describeTokens(name: string, open: OpenStores): void {
  const createTestCore = useTestCore(open)

  const DAY = 86_400_000

  async function loginAs(core: TestCore['core'], overrides: Record<string, string> = {}) {
    const result = await core.login(adminLogin(overrides), ADDRESS)
    if (!result.ok) throw new Error(`login failed: ${result.error.code}`)
    return result.value.accessToken
  }

  describe(`tokens: ${name}`, () => {
    describe('issuing tokens', () => {
      it('issues 256-bit URL-safe tokens, a new one each time', async () => {
        const { core } = await createTestCore()
        const tokens = [await loginAs(core), await loginAs(core), await loginAs(core)]
        for (const token of tokens) expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/)
        expect(new Set(tokens).size).toBe(3)
      })

      it('names each token by an id that never starts with "-", so a command line reads it as an argument', async () => {
        const { core, stores } = await createTestCore()
        // One id in 64 would start with "-" if drawn plainly: 300 ids hold some that would.
        for (let i = 0; i < 300; i++) await loginAs(core)
        const ids = (await stores.tokens.list(null)).map((record) => record.id)
        expect(new Set(ids).size).toBe(300)
        for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{15}$/)
      })

      it('stores only the SHA-256 hash of a token', async () => {
        const { core, stores } = await createTestCore()
        const token = await loginAs(core)
        expect(await stores.tokens.findByHash(token)).toBeNull()
        const record = await stores.tokens.findByHash(await webDigest.sha256(token))
        expect(record).toMatchObject({ username: 'admin', clientId: 'service-admin', scope: ['*'] })
        expect(JSON.stringify(record)).not.toContain(token)
      })

      it('lives sessionExpiryTime seconds, seven days by default', async () => {
        const fresh = await createTestCore()
        expect(fresh.core.tokenLifetime).toBe(604_800)
        const short = await createTestCore({ sessionExpiryTime: 60 })
        const result = await short.core.login(adminLogin(), ADDRESS)
        expect(result).toMatchObject({ ok: true, value: { expiresIn: 60 } })
      })

      it('refuses a lifetime that is not a positive whole number of seconds', async () => {
        await expect(createTestCore({ sessionExpiryTime: 0 })).rejects.toThrow(RangeError)
        await expect(createTestCore({ sessionExpiryTime: 1.5 })).rejects.toThrow(RangeError)
      })
    })

    describe('authenticating a bearer', () => {
      it('accepts a live token until the instant it expires, then removes it', async () => {
        const { core, clock, stores } = await createTestCore({ sessionExpiryTime: 60 })
        const token = await loginAs(core)
        clock.advance(59_999)
        expect(await core.authenticate(token)).toMatchObject({
          ok: true,
          value: { kind: 'user', username: 'admin' },
        })
        clock.advance(1)
        expect(await core.authenticate(token)).toEqual({
          ok: false,
          error: { code: 'unauthenticated', reason: 'invalid' },
        })
        expect(await stores.tokens.findByHash(await webDigest.sha256(token))).toBeNull()
      })

      it.each(['', 'garbage', 'x'.repeat(10_000)])('refuses the unknown token %j', async (token) => {
        const { core } = await createTestCore()
        await loginAs(core)
        expect(await core.authenticate(token)).toEqual({
          ok: false,
          error: { code: 'unauthenticated', reason: 'invalid' },
        })
      })
    })

    describe('revoking', () => {
      it('revokes the caller’s own token and leaves its others valid', async () => {
        const { core, events } = await createTestCore()
        const first = await loginAs(core)
        const second = await loginAs(core)
        const caller = await core.authenticate(second)
        if (!caller.ok) throw new Error('not authenticated')
        await core.revoke(caller.value, first, ADDRESS)
        expect((await core.authenticate(first)).ok).toBe(false)
        expect((await core.authenticate(second)).ok).toBe(true)
        expect(events.ofType('token.revoked')).toEqual([
          expect.objectContaining({
            owner: 'admin',
            username: 'admin',
            clientId: 'service-admin',
            address: ADDRESS,
          }),
        ])
      })

      it('lets a caller without * revoke only its own user’s tokens, silently', async () => {
        const { core, events } = await createTestCore()
        const admins = await loginAs(core)
        const readers = await loginAs(core, { username: 'reader', password: 'rpw', scope: 'read' })
        const reader = await core.authenticate(readers)
        if (!reader.ok) throw new Error('not authenticated')
        await core.revoke(reader.value, admins, ADDRESS)
        expect((await core.authenticate(admins)).ok).toBe(true)
        expect(events.ofType('token.revoked')).toEqual([])
      })

      it('lets a caller with * revoke another user’s token', async () => {
        const { core } = await createTestCore()
        const admins = await loginAs(core)
        const readers = await loginAs(core, { username: 'reader', password: 'rpw', scope: 'read' })
        const admin = await core.authenticate(admins)
        if (!admin.ok) throw new Error('not authenticated')
        await core.revoke(admin.value, readers, ADDRESS)
        expect((await core.authenticate(readers)).ok).toBe(false)
      })

      it('treats an unknown token as a silent success', async () => {
        const { core, events } = await createTestCore()
        const admin = await core.authenticate(await loginAs(core))
        if (!admin.ok) throw new Error('not authenticated')
        await expect(core.revoke(admin.value, 'no-such-token', ADDRESS)).resolves.toBeUndefined()
        expect(events.ofType('token.revoked')).toEqual([])
      })

      it('revokes once when revokes race', async () => {
        const { core, events } = await createTestCore()
        const token = await loginAs(core)
        const admin = await core.authenticate(token)
        if (!admin.ok) throw new Error('not authenticated')
        await Promise.all(Array.from({ length: 8 }, () => core.revoke(admin.value, token, ADDRESS)))
        expect(events.ofType('token.revoked')).toHaveLength(1)
        expect((await core.authenticate(token)).ok).toBe(false)
      })
    })

    describe('sweeping', () => {
      it('removes expired tokens in bounded batches and keeps live ones', async () => {
        const { core, clock } = await createTestCore({ sessionExpiryTime: 3600 })
        for (let i = 0; i < 12; i++) await loginAs(core)
        clock.advance(DAY)
        const live = await loginAs(core)
        expect(await core.sweep({ batchSize: 5, maxBatches: 2 })).toMatchObject({ tokens: 10 })
        expect(await core.sweep({ batchSize: 5, maxBatches: 2 })).toMatchObject({ tokens: 2 })
        expect(await core.sweep()).toMatchObject({ tokens: 0 })
        expect((await core.authenticate(live)).ok).toBe(true)
      })

      it('removes ended throttle windows', async () => {
        const { core, clock } = await createTestCore()
        await core.login(adminLogin({ password: 'wrong' }), ADDRESS)
        expect(await core.sweep()).toMatchObject({ throttle: 0 })
        clock.advance(DAY)
        expect(await core.sweep()).toMatchObject({ throttle: 2 })
      })
    })
  })
}
