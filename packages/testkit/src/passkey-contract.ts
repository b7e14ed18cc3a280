import type { PasskeyCredential } from '@flowadmin/core'
import { describe, expect, it } from 'vitest'
import { type ContractPart, MINUTE, T0 } from './contract-part.js'

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
