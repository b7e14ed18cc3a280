import type { PasskeyChallenge, PasskeyCredential } from '@flowadmin/core'
import { describe, expect, it } from 'vitest'
import { type ContractPart, MINUTE, T0, WIDE } from './contract-part.js'

/** A passkey for store tests: `alice`'s unless overridden, counter 0, never used. */
export const passkeyCredential = (
  id: string,
  overrides: Partial<PasskeyCredential> = {},
): PasskeyCredential => ({
  id,
  username: 'alice',
  name: `Key ${id}`,
  publicKey: `pk-${id}`,
  counter: 0,
  transports: ['internal', 'hybrid'],
  backedUp: false,
  createdAt: T0,
  lastUsedAt: null,
  ...overrides,
})

/** A sign-in's challenge from 10.0.0.1, five minutes from T0. */
const challenge = (overrides: Partial<PasskeyChallenge> = {}): PasskeyChallenge => ({
  purpose: 'sign_in',
  username: null,
  address: '10.0.0.1',
  expiresAt: T0 + 5 * MINUTE,
  ...overrides,
})

/** A registration's challenge for `username`: no address. */
const registration = (username: string, overrides: Partial<PasskeyChallenge> = {}): PasskeyChallenge =>
  challenge({ purpose: 'register', username, address: null, ...overrides })

/** The passkey store's part of the store contract. */
export const describePasskeyContract: ContractPart = (stores, twoConnections) => {
  describe('passkeys', () => {
    it('keeps each person’s passkeys apart, oldest first, and finds one by its id', async () => {
      const passkeys = stores().passkeys
      expect(await passkeys.list('alice')).toEqual([])
      expect(await passkeys.find('k1')).toBeNull()
      await passkeys.save(passkeyCredential('k2', { createdAt: T0 + MINUTE, backedUp: true }))
      await passkeys.save(passkeyCredential('k1', { name: 'Zoë’s key 🙂', transports: [] }))
      await passkeys.save(passkeyCredential('k3', { username: 'bob', counter: 7, lastUsedAt: T0 + 2 }))
      expect(await passkeys.list('alice')).toEqual([
        passkeyCredential('k1', { name: 'Zoë’s key 🙂', transports: [] }),
        passkeyCredential('k2', { createdAt: T0 + MINUTE, backedUp: true }),
      ])
      expect(await passkeys.find('k3')).toEqual(
        passkeyCredential('k3', { username: 'bob', counter: 7, lastUsedAt: T0 + 2 }),
      )
      expect(await passkeys.list('Alice')).toEqual([])
    })

    it('deletes a person’s passkey only for that person, and all of theirs at once', async () => {
      const passkeys = stores().passkeys
      for (const id of ['a1', 'a2', 'a3']) await passkeys.save(passkeyCredential(id))
      await passkeys.save(passkeyCredential('b1', { username: 'bob' }))
      expect(await passkeys.delete('bob', 'a1')).toBe(false)
      expect(await passkeys.delete('alice', 'a1')).toBe(true)
      expect(await passkeys.delete('alice', 'a1')).toBe(false)
      expect((await passkeys.list('alice')).map((credential) => credential.id)).toEqual(['a2', 'a3'])
      expect(await passkeys.deleteAll('alice')).toBe(2)
      expect(await passkeys.deleteAll('alice')).toBe(0)
      expect(await passkeys.find('a2')).toBeNull()
      expect((await passkeys.list('bob')).map((credential) => credential.id)).toEqual(['b1'])
    })

    it('records a use only when the counter grew, unless both counters are 0', async () => {
      const racing = await twoConnections()
      const passkeys = stores().passkeys
      await passkeys.save(passkeyCredential('zero'))
      await passkeys.save(passkeyCredential('counting', { counter: 5 }))
      // An authenticator that keeps no counter reports 0 every time.
      expect(await racing(1).passkeys.updateUse('zero', 0, true, T0 + 1)).toBe(true)
      expect(await racing(0).passkeys.updateUse('zero', 0, true, T0 + 2)).toBe(true)
      expect(await passkeys.find('zero')).toMatchObject({ counter: 0, backedUp: true, lastUsedAt: T0 + 2 })
      // One that counts must count up: the same or a lower count is a clone's.
      expect(await racing(1).passkeys.updateUse('counting', 5, false, T0 + 3)).toBe(false)
      expect(await racing(1).passkeys.updateUse('counting', 4, false, T0 + 3)).toBe(false)
      expect(await racing(1).passkeys.updateUse('counting', 0, false, T0 + 3)).toBe(false)
      expect(await passkeys.find('counting')).toMatchObject({ counter: 5, lastUsedAt: null })
      expect(await racing(1).passkeys.updateUse('counting', 6, true, T0 + 4)).toBe(true)
      expect(await passkeys.find('counting')).toMatchObject({
        counter: 6,
        backedUp: true,
        lastUsedAt: T0 + 4,
      })
      // A counter of 0 that starts counting is fine; back to 0 is not.
      expect(await passkeys.updateUse('zero', 1, true, T0 + 5)).toBe(true)
      expect(await passkeys.updateUse('zero', 0, true, T0 + 6)).toBe(false)
      expect(await passkeys.updateUse('unknown', 9, false, T0)).toBe(false)
    })

    it('records a counter offered at once on both connections exactly once', async () => {
      const racing = await twoConnections()
      await stores().passkeys.save(passkeyCredential('raced', { counter: 10 }))
      for (const counter of [11, 12, 13]) {
        const answers = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            racing(i).passkeys.updateUse('raced', counter, false, T0 + counter),
          ),
        )
        expect(answers.filter(Boolean)).toHaveLength(1)
      }
      expect(await racing(1).passkeys.find('raced')).toMatchObject({ counter: 13, lastUsedAt: T0 + 13 })
    })

    it('gives a challenge back once, whichever connection asks, until its time ends', async () => {
      const racing = await twoConnections()
      const passkeys = stores().passkeys
      expect(await passkeys.saveChallenge('c1', challenge(), WIDE, T0)).toBe('saved')
      expect(await passkeys.saveChallenge('c2', registration('Zoë 🙂'), WIDE, T0)).toBe('saved')
      const taken = await Promise.all(
        Array.from({ length: 10 }, (_, i) => racing(i).passkeys.takeChallenge('c1', T0 + 1)),
      )
      expect(taken.filter((one) => one !== null)).toEqual([challenge()])
      expect(await racing(1).passkeys.takeChallenge('c1', T0 + 2)).toBeNull()
      expect(await racing(1).passkeys.takeChallenge('c2', T0 + 2)).toEqual(registration('Zoë 🙂'))
      // One whose time ended is not given back, and is gone.
      await passkeys.saveChallenge('c3', challenge(), WIDE, T0)
      expect(await passkeys.takeChallenge('c3', T0 + 5 * MINUTE)).toBeNull()
      expect(await passkeys.takeChallenge('c3', T0)).toBeNull()
      expect(await passkeys.takeChallenge('unknown', T0)).toBeNull()
    })

    it('bounds the sign-in challenges of one address, and all of them, refusing new ones and dropping none', async () => {
      const passkeys = stores().passkeys
      const bounds = { perAddress: 3, total: 5 }
      const save = (key: string, address: string, expiresAt = T0 + 5 * MINUTE, now = T0) =>
        passkeys.saveChallenge(key, challenge({ address, expiresAt }), bounds, now)
      for (let i = 0; i < 3; i++) expect(await save(`a${i}`, '10.0.0.1')).toBe('saved')
      expect(await save('a3', '10.0.0.1')).toBe('address_full')
      // Another address has a bound of its own; an IPv6 /64 is one address.
      for (let i = 0; i < 2; i++) expect(await save(`b${i}`, '2001:db8:0:1::/64')).toBe('saved')
      expect(await save('c0', '10.0.0.3')).toBe('full')
      // A registration's challenge belongs to a signed-in person: neither counted nor refused.
      expect(await passkeys.saveChallenge('r0', registration('alice'), bounds, T0)).toBe('saved')
      expect(await save('c1', '10.0.0.3')).toBe('full')
      // Nothing refused was saved; every one saved is still there; a taken one makes room.
      for (const key of ['a3', 'c0', 'c1']) expect(await passkeys.takeChallenge(key, T0)).toBeNull()
      expect(await passkeys.takeChallenge('a0', T0)).toEqual(challenge())
      expect(await save('a4', '10.0.0.1')).toBe('saved')
      for (const key of ['a1', 'a2', 'a4']) expect(await passkeys.takeChallenge(key, T0)).toEqual(challenge())
      for (const key of ['b0', 'b1'])
        expect(await passkeys.takeChallenge(key, T0)).toEqual(challenge({ address: '2001:db8:0:1::/64' }))
      expect(await passkeys.takeChallenge('r0', T0)).toEqual(registration('alice'))
      // Challenges whose time ended count for nothing.
      for (let i = 0; i < 3; i++) expect(await save(`x${i}`, '10.0.0.1', T0 + 1)).toBe('saved')
      for (let i = 0; i < 2; i++) expect(await save(`y${i}`, '10.0.0.2', T0 + 1)).toBe('saved')
      expect(await save('late', '10.0.0.1', T0 + MINUTE, T0 + 1)).toBe('saved')
    })

    it('holds one address to its bound when its sign-in challenges are saved over two connections at once', async () => {
      const racing = await twoConnections()
      const bounds = { perAddress: 3, total: 100 }
      const saved = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          racing(i).passkeys.saveChallenge(`r${i}`, challenge({ address: '2001:db8::/64' }), bounds, T0),
        ),
      )
      expect(saved.filter((outcome) => outcome === 'saved')).toHaveLength(3)
      expect(saved.filter((outcome) => outcome === 'address_full')).toHaveLength(9)
      const kept = await Promise.all(
        Array.from({ length: 12 }, (_, i) => racing(i + 1).passkeys.takeChallenge(`r${i}`, T0)),
      )
      expect(kept.filter((one) => one !== null)).toHaveLength(3)
    })

    it('holds the store to its total when one address saves over two connections at once', async () => {
      const racing = await twoConnections()
      const bounds = { perAddress: 100, total: 4 }
      const saved = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          racing(i).passkeys.saveChallenge(`t${i}`, challenge(), bounds, T0),
        ),
      )
      expect(saved.filter((outcome) => outcome === 'saved')).toHaveLength(4)
      expect(saved.filter((outcome) => outcome === 'full')).toHaveLength(8)
    })

    it('deletes challenges whose time ended in batches no larger than the limit', async () => {
      const passkeys = stores().passkeys
      for (let i = 0; i < 5; i++)
        await passkeys.saveChallenge(`old-${i}`, challenge({ expiresAt: T0 + i }), WIDE, T0)
      await passkeys.saveChallenge('live', challenge(), WIDE, T0)
      expect(await passkeys.deleteExpiredChallenges(T0 + 4, 3)).toBe(3)
      expect(await passkeys.deleteExpiredChallenges(T0 + 4, 3)).toBe(2)
      expect(await passkeys.deleteExpiredChallenges(T0 + 4, 3)).toBe(0)
      expect(await passkeys.takeChallenge('live', T0 + 4)).toEqual(challenge())
    })

    it('gives back an id and transports exactly as saved, a backslash and a NUL included', async () => {
      const passkeys = stores().passkeys
      const odd = ['k\\u0041', 'k\u0000', 'k\\', 'k']
      const credentials = odd.map((id, i) =>
        passkeyCredential(id, {
          publicKey: `pk-${i}`,
          createdAt: T0 + i,
          transports: [`usb\\u0000${i}`, `nfc\u0000${i}`, 'a\\b'],
        }),
      )
      for (const credential of credentials) await passkeys.save(credential)
      for (const credential of credentials) expect(await passkeys.find(credential.id)).toEqual(credential)
      expect(await passkeys.list('alice')).toEqual(credentials)
      expect(await passkeys.updateUse('k\\u0041', 3, true, T0 + 9)).toBe(true)
      expect(await passkeys.find('k\\u0041')).toMatchObject({ id: 'k\\u0041', counter: 3 })
      expect(await passkeys.find('kA')).toBeNull()
      expect(await passkeys.delete('alice', 'k\u0000')).toBe(true)
      expect((await passkeys.list('alice')).map((credential) => credential.id)).toEqual([
        'k\\u0041',
        'k\\',
        'k',
      ])
    })

    it('keeps names of any text apart, however alike', async () => {
      const passkeys = stores().passkeys
      const alike = ['admin', 'admin ', 'Admin', 'ü 🙂', 'admin\\u0000', 'back\\slash']
      for (const [i, name] of alike.entries())
        await passkeys.save(passkeyCredential(`k${i}`, { username: name }))
      for (const [i, name] of alike.entries()) {
        expect(await passkeys.list(name)).toEqual([passkeyCredential(`k${i}`, { username: name })])
        expect(await passkeys.find(`k${i}`)).toEqual(passkeyCredential(`k${i}`, { username: name }))
      }
    })
  })
}
