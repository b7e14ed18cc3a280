import type { AuthorizationRequest, IssuedCode } from '@flowadmin/core'
import { describe, expect, it } from 'vitest'
import { type ContractPart, MINUTE, T0, WIDE } from './contract-part.js'

const authorizationRequest: AuthorizationRequest = {
  clientId: 'fleet',
  redirectUri: 'https://nodered.example/auth/strategy/callback',
  codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
  state: 'ü 🙂 \u0000',
}

/** A console's one-time code for store tests, keyed `key`, from 10.0.0.1, 30 s from T0. */
const issuedCode = (key: string, overrides: Partial<IssuedCode> = {}): IssuedCode => ({
  key,
  address: '10.0.0.1',
  binding: overrides.authorization ? null : `binding-${key}`,
  owner: { username: 'Zoë', permissions: ['flows.write', 'read'], fingerprint: `sso:${key}:-` },
  authorization: null,
  expiresAt: T0 + 30_000,
  ...overrides,
})

/** The single sign-on store's part of the store contract. */
export const describeSsoContract: ContractPart = (stores, twoConnections) => {
  describe('sso', () => {
    it('binds a name to the first identity that claims it, for good, whichever connection asks', async () => {
      const racing = await twoConnections()
      expect(await stores().sso.claimName('alice', 'identity-1', T0)).toBe('identity-1')
      expect(await racing(1).sso.claimName('alice', 'identity-2', T0 + MINUTE)).toBe('identity-1')
      expect(await stores().sso.claimName('alice', 'identity-1', T0 + 2 * MINUTE)).toBe('identity-1')
      expect(await stores().sso.claimName('bob', 'identity-2', T0)).toBe('identity-2')
    })

    it('gives a name claimed by many at once to exactly one identity', async () => {
      const racing = await twoConnections()
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => racing(i).sso.claimName('carol', `identity-${i}`, T0)),
      )
      expect(new Set(answers).size).toBe(1)
      expect(answers[0]).toMatch(/^identity-\d+$/)
    })

    it('keeps names of any text apart, however alike', async () => {
      const alike = ['admin', 'admin ', 'Admin', 'ü 🙂', 'admin\u0000', 'admin\\u0000']
      for (const [i, name] of alike.entries()) await stores().sso.claimName(name, `identity-${i}`, T0)
      for (const [i, name] of alike.entries())
        expect(await stores().sso.claimName(name, 'late', T0)).toBe(`identity-${i}`)
    })

    it('remembers a logout token until its time ends, once across connections', async () => {
      const racing = await twoConnections()
      const first = await Promise.all(
        Array.from({ length: 10 }, (_, i) => racing(i).sso.rememberLogout('jti-1', T0 + MINUTE, T0)),
      )
      expect(first.filter(Boolean)).toHaveLength(1)
      expect(await stores().sso.rememberLogout('jti-1', T0 + 2 * MINUTE, T0 + MINUTE - 1)).toBe(false)
      expect(await stores().sso.rememberLogout('jti-2', T0 + MINUTE, T0)).toBe(true)
      // Its time ended: remembered again, from now on.
      expect(await stores().sso.rememberLogout('jti-1', T0 + 3 * MINUTE, T0 + MINUTE)).toBe(true)
      expect(await stores().sso.rememberLogout('jti-1', T0 + 3 * MINUTE, T0 + 2 * MINUTE)).toBe(false)
    })

    it('forgets a logout token on request, so it is taken as new again', async () => {
      expect(await stores().sso.rememberLogout('jti-3', T0 + MINUTE, T0)).toBe(true)
      await stores().sso.forgetLogout('jti-3')
      await stores().sso.forgetLogout('never-seen')
      expect(await stores().sso.rememberLogout('jti-3', T0 + MINUTE, T0)).toBe(true)
      expect(await stores().sso.rememberLogout('jti-3', T0 + MINUTE, T0)).toBe(false)
    })

    it('deletes logout tokens whose time ended in batches no larger than the limit, and keeps names', async () => {
      for (let i = 0; i < 5; i++) await stores().sso.rememberLogout(`old-${i}`, T0 + i, T0 - MINUTE)
      await stores().sso.rememberLogout('live', T0 + MINUTE, T0)
      await stores().sso.claimName('dan', 'identity-1', T0)
      expect(await stores().sso.deleteExpired(T0 + 4, 3)).toBe(3)
      expect(await stores().sso.deleteExpired(T0 + 4, 3)).toBe(2)
      expect(await stores().sso.deleteExpired(T0 + 4, 3)).toBe(0)
      expect(await stores().sso.rememberLogout('live', T0 + 2 * MINUTE, T0 + 4)).toBe(false)
      expect(await stores().sso.claimName('dan', 'identity-2', T0)).toBe('identity-1')
    })

    it('keeps the first sign-in key for good, whichever connection offers one, at once or later', async () => {
      const racing = await twoConnections()
      const kept = await Promise.all(
        Array.from({ length: 10 }, (_, i) => racing(i).sso.signInKey(`candidate-${i}`, T0)),
      )
      const [first] = kept
      expect(first).toMatch(/^candidate-\d$/)
      expect(new Set(kept)).toEqual(new Set([first]))
      expect(await stores().sso.signInKey('later', T0 + MINUTE)).toBe(first)
      // Sweeping deletes no key.
      await stores().sso.deleteExpiredSignIns(T0 + 365 * 24 * 60 * MINUTE, 100)
      expect(await racing(1).sso.signInKey('after-a-sweep', T0)).toBe(first)
    })

    it('spends a challenge once across connections, until its time ends', async () => {
      const racing = await twoConnections()
      const spent = await Promise.all(
        Array.from({ length: 10 }, (_, i) => racing(i).sso.spendChallenge('s1', T0 + MINUTE, T0)),
      )
      expect(spent.filter(Boolean)).toHaveLength(1)
      expect(await stores().sso.spendChallenge('s1', T0 + MINUTE, T0 + MINUTE - 1)).toBe(false)
      // Another challenge is its own; one whose time ended may be spent again.
      expect(await stores().sso.spendChallenge('s2', T0 + MINUTE, T0)).toBe(true)
      expect(await racing(1).sso.spendChallenge('s1', T0 + 2 * MINUTE, T0 + MINUTE)).toBe(true)
      expect(await stores().sso.spendChallenge('s1', T0 + 2 * MINUTE, T0 + MINUTE)).toBe(false)
    })

    it('bounds the codes of one address, and all of them, refusing new ones and dropping none', async () => {
      const bounds = { perAddress: 3, total: 5 }
      const save = (key: string, address: string, expiresAt = T0 + 30_000, now = T0) =>
        stores().sso.saveCode(issuedCode(key, { address, expiresAt }), bounds, now)
      for (let i = 0; i < 3; i++) expect(await save(`a${i}`, '10.0.0.1')).toBe('saved')
      expect(await save('a3', '10.0.0.1')).toBe('address_full')
      for (let i = 0; i < 2; i++) expect(await save(`b${i}`, '10.0.0.2')).toBe('saved')
      expect(await save('c0', '10.0.0.3')).toBe('full')
      // Every one saved is still there; a traded one makes room for its address.
      expect(await stores().sso.takeCode('a0', null, T0)).not.toBeNull()
      expect(await save('a4', '10.0.0.1')).toBe('saved')
      for (const key of ['a1', 'a2', 'a4', 'b0', 'b1'])
        expect(await stores().sso.takeCode(key, null, T0)).toMatchObject({ key })
      for (const key of ['a3', 'c0']) expect(await stores().sso.findCode(key, T0)).toBeNull()
      // Expired ones count for nothing.
      for (let i = 0; i < 3; i++) await save(`x${i}`, '10.0.0.1', T0 + 1)
      expect(await save('late', '10.0.0.1', T0 + 30_000, T0 + 1)).toBe('saved')
    })

    it('holds one address to its bound when its codes are saved over two connections at once', async () => {
      const racing = await twoConnections()
      const bounds = { perAddress: 3, total: 100 }
      const saved = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          racing(i).sso.saveCode(issuedCode(`r${i}`, { address: '2001:db8::/64' }), bounds, T0),
        ),
      )
      expect(saved.filter((outcome) => outcome === 'saved')).toHaveLength(3)
      expect(saved.filter((outcome) => outcome === 'address_full')).toHaveLength(9)
    })

    it('takes a one-time code once across connections, and only for its client', async () => {
      const racing = await twoConnections()
      const code = issuedCode('c1', { authorization: authorizationRequest })
      expect(await stores().sso.saveCode(code, WIDE, T0)).toBe('saved')
      // Looking leaves it; the console (null) and another client cannot take it.
      expect(await racing(1).sso.findCode('c1', T0)).toEqual(code)
      expect(await stores().sso.takeCode('c1', null, T0)).toBeNull()
      expect(await stores().sso.takeCode('c1', 'other-fleet', T0)).toBeNull()
      const taken = await Promise.all(
        Array.from({ length: 10 }, (_, i) => racing(i).sso.takeCode('c1', 'fleet', T0 + 1)),
      )
      expect(taken.filter((one) => one !== null)).toEqual([code])
      expect(await stores().sso.findCode('c1', T0 + 1)).toBeNull()

      const console = issuedCode('c2')
      await stores().sso.saveCode(console, WIDE, T0)
      expect(await stores().sso.takeCode('c2', 'fleet', T0)).toBeNull()
      const spent = await Promise.all(
        Array.from({ length: 4 }, (_, i) => racing(i).sso.takeCode('c2', null, T0)),
      )
      expect(spent.filter((one) => one !== null)).toEqual([console])
    })

    it('neither finds nor takes a code whose time ended, and counts no spent challenge as a code', async () => {
      await stores().sso.saveCode(issuedCode('c1', { address: '10.0.0.5', expiresAt: T0 + 30_000 }), WIDE, T0)
      expect(await stores().sso.findCode('c1', T0 + 30_000)).toBeNull()
      expect(await stores().sso.takeCode('c1', null, T0 + 30_000)).toBeNull()
      const bounds = { perAddress: 1, total: 10 }
      expect(await stores().sso.spendChallenge('s1', T0 + MINUTE, T0)).toBe(true)
      expect(await stores().sso.saveCode(issuedCode('c2'), bounds, T0)).toBe('saved')
      expect(await stores().sso.saveCode(issuedCode('c3'), bounds, T0)).toBe('address_full')
      expect(
        await stores().sso.saveCode(
          issuedCode('c4', { address: '10.0.0.9' }),
          { perAddress: 1, total: 1 },
          T0,
        ),
      ).toBe('full')
    })

    it('deletes spent challenges and codes whose time ended in batches no larger than the limit, and keeps live ones', async () => {
      for (let i = 0; i < 3; i++) await stores().sso.spendChallenge(`old-${i}`, T0 + i, T0)
      for (let i = 0; i < 2; i++)
        await stores().sso.saveCode(issuedCode(`old-${i}`, { expiresAt: T0 + i }), WIDE, T0)
      await stores().sso.spendChallenge('live', T0 + MINUTE, T0)
      await stores().sso.saveCode(issuedCode('live'), WIDE, T0)
      expect(await stores().sso.deleteExpiredSignIns(T0 + 3, 4)).toBe(4)
      expect(await stores().sso.deleteExpiredSignIns(T0 + 3, 4)).toBe(1)
      expect(await stores().sso.deleteExpiredSignIns(T0 + 3, 4)).toBe(0)
      expect(await stores().sso.spendChallenge('live', T0 + MINUTE, T0 + 3)).toBe(false)
      expect(await stores().sso.takeCode('live', null, T0 + 3)).toMatchObject({ key: 'live' })
    })
  })
}
