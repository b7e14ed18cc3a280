import { describe, expect, it } from 'vitest'
import type { PlainHasher } from './doubles.js'
import type { OpenStores } from './store-contract.js'
import { describeApiTokens } from './token-lifecycle-api.js'
import { ADDRESS, refused, team, useTokenLifecycle } from './token-lifecycle-fixture.js'
import { describeTokenInventory } from './token-lifecycle-inventory.js'

/**
 * The token lifecycle of the core over a store: a token is worth what its user is worth now.
 * Every store adapter runs it, like the store contract.
 */
export function describeTokenLifecycle(name: string, open: OpenStores): void {
  describe(`token lifecycle: ${name}`, () => {
    const lifecycle = useTokenLifecycle(open)
    const { stores, start, login, principal } = lifecycle

    it('refuses the token of a removed user and deletes its record; the others keep working', async () => {
      const first = start()
      const alice = await login(first.core, 'alice')
      const bob = await login(first.core, 'bob')
      const without = (hasher: PlainHasher) => team(hasher).filter((user) => user.username !== 'alice')
      const restarted = start(without, 2)
      expect(await restarted.core.authenticate(alice, ADDRESS)).toEqual(refused)
      expect(await stores().tokens.list('alice')).toEqual([])
      expect(await restarted.core.authorize(bob, 'nodes.write', ADDRESS)).toMatchObject({ ok: true })
      expect(restarted.events.ofType('token.invalidated')).toEqual([
        expect.objectContaining({
          owner: 'alice',
          reason: 'user_removed',
          username: 'alice',
          address: ADDRESS,
        }),
      ])
    })

    it("acts with the intersection when a user's permissions shrank", async () => {
      const { core, hasher } = start()
      const bob = await login(core, 'bob')
      await core.setUsers(
        team(hasher).map((user) => (user.username === 'bob' ? { ...user, permissions: 'read' } : user)),
      )
      expect(await principal(core, bob)).toMatchObject({ username: 'bob', permissions: ['read'] })
      expect(await core.authorize(bob, 'nodes.read', ADDRESS)).toMatchObject({ ok: true })
      expect(await core.authorize(bob, 'nodes.write', ADDRESS)).toEqual({
        ok: false,
        error: { code: 'forbidden', permission: 'nodes.write' },
      })
      expect(await stores().tokens.list('bob')).toHaveLength(1) // narrowed, not ended
    })

    it('never widens a token beyond its scope when the user gains rights', async () => {
      const { core, hasher } = start()
      const dave = await login(core, 'dave', 'read')
      await core.setUsers(team(hasher).map((user) => ({ ...user, permissions: '*' })))
      expect(await principal(core, dave)).toMatchObject({ permissions: ['read'] })
    })

    it('refuses a token issued before a password change and deletes its record', async () => {
      const { core, hasher, events } = start()
      const carol = await login(core, 'carol')
      const alice = await login(core, 'alice')
      await core.setUsers(
        team(hasher).map((user) =>
          user.username === 'carol' ? { ...user, password: hasher.hash('new') } : user,
        ),
      )
      expect(await core.authenticate(carol, ADDRESS)).toEqual(refused)
      expect(await stores().tokens.list('carol')).toEqual([])
      expect(await core.authenticate(alice, ADDRESS)).toMatchObject({ ok: true })
      expect(events.ofType('token.invalidated')).toEqual([
        expect.objectContaining({ owner: 'carol', reason: 'credential_changed' }),
      ])
      const again = await core.login(
        { grantType: 'password', clientId: 'service-admin', username: 'carol', password: 'new', scope: '*' },
        ADDRESS,
      )
      expect(again.ok && (await core.authenticate(again.value.accessToken, ADDRESS)).ok).toBe(true)
    })

    it('stores a keyed fingerprint of the credential, never the password hash', async () => {
      const { core, hasher } = start()
      await login(core, 'alice')
      const [record] = await stores().tokens.list('alice')
      expect(record?.fingerprint).toMatch(/^[0-9a-f]{64}$/)
      expect(JSON.stringify(record)).not.toContain(hasher.hash('alice-pw'))
      expect(JSON.stringify(record)).not.toContain('alice-pw')
    })

    it('deletes every token of users no longer configured, one event per user naming the count', async () => {
      const first = start()
      await login(first.core, 'alice')
      await login(first.core, 'alice')
      await login(first.core, 'dave', 'read')
      await login(first.core, 'bob')
      const restarted = start((hasher) => team(hasher).filter((user) => user.username === 'bob'), 2)
      expect(await restarted.core.tokens.purgeRemovedUsers()).toEqual([
        { username: 'alice', count: 2 },
        { username: 'dave', count: 1 },
      ])
      expect(restarted.events.ofType('tokens.revoked_all')).toEqual([
        expect.objectContaining({ owner: 'alice', count: 2, reason: 'user_removed' }),
        expect.objectContaining({ owner: 'dave', count: 1, reason: 'user_removed' }),
      ])
      expect(await stores().tokens.usernames()).toEqual(['bob'])
      expect(await restarted.core.tokens.purgeRemovedUsers()).toEqual([])
    })

    it('purges the tokens of users a reload removed', async () => {
      const { core, hasher, events } = start()
      const alice = await login(core, 'alice')
      expect(await core.setUsers(team(hasher).slice(1))).toEqual([{ username: 'alice', count: 1 }])
      expect(await core.authenticate(alice, ADDRESS)).toEqual(refused)
      expect(events.ofType('tokens.revoked_all')).toHaveLength(1)
    })

    describeTokenInventory(lifecycle)
    describeApiTokens(lifecycle)
  })
}
