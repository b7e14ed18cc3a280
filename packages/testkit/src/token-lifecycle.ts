import {
  type AdminAuthOptions,
  API_TOKEN_PREFIX,
  type Core,
  operator,
  type Principal,
  type Stores,
  type TokenStore,
} from '@flowadmin/core'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createCoreWithDoubles } from './core-with-doubles.js'
import type { PlainHasher } from './doubles.js'
import type { OpenStores } from './store-contract.js'

const ADDRESS = '192.0.2.10'
const MINUTE = 60_000
const DAY = 86_400_000

type UserList = NonNullable<AdminAuthOptions['users']>

/** alice, bob and carol with `*`, dave with `read`; each password is the name followed by `-pw`. */
const team = (hasher: PlainHasher): UserList =>
  [
    ['alice', '*'],
    ['bob', '*'],
    ['carol', '*'],
    ['dave', 'read'],
  ].map(([username, permissions]) => ({
    username: username as string,
    password: hasher.hash(`${username}-pw`),
    permissions: permissions as string,
  }))

/** The write operations of a token store, counted. */
const WRITES = ['save', 'touch', 'delete', 'deleteByUser', 'deleteExpired'] as const

/** Wraps a token store so each write is counted; reads pass through. */
function countingWrites(store: TokenStore) {
  const writes: string[] = []
  const counted = { ...store } as TokenStore
  for (const name of WRITES) {
    const original = store[name] as (...args: unknown[]) => Promise<unknown>
    ;(counted as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
      writes.push(name)
      return original.apply(store, args)
    }
  }
  return { store: counted, writes }
}

/**
 * The token lifecycle of the core over a store: a token is worth what its user is worth now.
 * Every store adapter runs it, like the store contract.
 */
export function describeTokenLifecycle(name: string, open: OpenStores): void {
  describe(`token lifecycle: ${name}`, () => {
    let stores: Stores & { close(): Promise<void> }
    let counter: ReturnType<typeof countingWrites>
    beforeEach(async () => {
      stores = await open()
      counter = countingWrites(stores.tokens)
    })
    afterEach(async () => {
      await stores.close()
    })

    /** A core over the (write-counting) stores; `seed` differs per start, as randomness would. */
    function start(
      users: (hasher: PlainHasher) => UserList = team,
      seed = 1,
      auth: Partial<AdminAuthOptions> = {},
    ) {
      return createCoreWithDoubles({
        stores: { ...stores, tokens: counter.store },
        adminAuth: (hasher) => ({ users: users(hasher), ...auth }),
        seed,
      })
    }

    async function login(core: Core, username: string, scope = '*') {
      const result = await core.login(
        { grantType: 'password', clientId: 'service-admin', username, password: `${username}-pw`, scope },
        ADDRESS,
      )
      if (!result.ok) throw new Error(`login of ${username} failed: ${result.error.code}`)
      return result.value.accessToken
    }

    /** The id of the token a principal uses. */
    const idOf = (principal: Principal) => (principal.kind === 'user' ? principal.tokenId : '')

    async function principal(core: Core, token: string): Promise<Principal> {
      const result = await core.authenticate(token, ADDRESS)
      if (!result.ok) throw new Error(`token refused: ${result.error.code}`)
      return result.value
    }

    const refused = { ok: false, error: { code: 'unauthenticated', reason: 'invalid' } }

    it('refuses the token of a removed user and deletes its record; the others keep working', async () => {
      const first = start()
      const alice = await login(first.core, 'alice')
      const bob = await login(first.core, 'bob')
      const without = (hasher: PlainHasher) => team(hasher).filter((user) => user.username !== 'alice')
      const restarted = start(without, 2)
      expect(await restarted.core.authenticate(alice, ADDRESS)).toEqual(refused)
      expect(await stores.tokens.list('alice')).toEqual([])
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
      expect(await stores.tokens.list('bob')).toHaveLength(1) // narrowed, not ended
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
      expect(await stores.tokens.list('carol')).toEqual([])
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
      const [record] = await stores.tokens.list('alice')
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
      expect(await stores.tokens.usernames()).toEqual(['bob'])
      expect(await restarted.core.tokens.purgeRemovedUsers()).toEqual([])
    })

    it('purges the tokens of users a reload removed', async () => {
      const { core, hasher, events } = start()
      const alice = await login(core, 'alice')
      expect(await core.setUsers(team(hasher).slice(1))).toEqual([{ username: 'alice', count: 1 }])
      expect(await core.authenticate(alice, ADDRESS)).toEqual(refused)
      expect(events.ofType('tokens.revoked_all')).toHaveLength(1)
    })

    it('keeps authenticated reads free of writes: the last use is written at most once a minute', async () => {
      const { core, clock } = start()
      const loggedInAt = clock.now()
      const alice = await login(core, 'alice')
      // The login is the session's first use: the requests of the next minute write nothing.
      expect((await stores.tokens.list('alice'))[0]).toMatchObject({
        lastUsedAt: loggedInAt,
        lastAddress: ADDRESS,
        agent: null,
      })
      counter.writes.length = 0
      for (let i = 0; i < 20; i++) await core.authorize(alice, 'settings.read', ADDRESS)
      await Promise.all(Array.from({ length: 20 }, () => core.authorize(alice, 'settings.read', ADDRESS)))
      clock.advance(MINUTE - 1)
      await core.authorize(alice, 'settings.read', '192.0.2.99')
      expect(counter.writes).toEqual([])

      clock.advance(1)
      await Promise.all(
        Array.from({ length: 10 }, () => core.authorize(alice, 'settings.read', '192.0.2.99')),
      )
      expect(counter.writes).toEqual(['touch'])
      expect((await stores.tokens.list('alice'))[0]).toMatchObject({
        lastUsedAt: loggedInAt + MINUTE,
        lastAddress: '192.0.2.99',
      })
      clock.advance(MINUTE - 1)
      for (let i = 0; i < 10; i++) await core.authorize(alice, 'settings.read', ADDRESS)
      expect(counter.writes).toEqual(['touch'])
      clock.advance(1)
      await core.authorize(alice, 'settings.read', ADDRESS)
      expect(counter.writes).toEqual(['touch', 'touch'])
    })

    it('keeps what asked for a session, for the inventory to show', async () => {
      const { core } = start()
      const result = await core.login(
        {
          grantType: 'password',
          clientId: 'service-admin',
          username: 'alice',
          password: 'alice-pw',
          scope: '*',
        },
        ADDRESS,
        'Chrome 142 on Linux',
      )
      if (!result.ok) throw new Error(result.error.code)
      const me = await principal(core, result.value.accessToken)
      const listed = await core.tokens.list(me, null, ADDRESS)
      if (!listed.ok) throw new Error(listed.error.code)
      expect(listed.value).toMatchObject([
        { agent: 'Chrome 142 on Linux', lastAddress: ADDRESS, current: true },
      ])
    })

    it('writes the first use of an API token, which its creation is not', async () => {
      const { core, clock } = start()
      const alice = await principal(core, await login(core, 'alice'))
      const created = await core.tokens.create(alice, { name: 'ci', agent: 'Firefox 133 on Linux' }, ADDRESS)
      if (!created.ok) throw new Error(created.error.code)
      expect(created.value.view).toMatchObject({
        lastUsedAt: null,
        lastAddress: null,
        agent: 'Firefox 133 on Linux',
      })
      counter.writes.length = 0
      clock.advance(5)
      await Promise.all(
        Array.from({ length: 5 }, () => core.authorize(created.value.token, 'settings.read', '192.0.2.5')),
      )
      expect(counter.writes).toEqual(['touch'])
      expect(await stores.tokens.findById(created.value.view.id)).toMatchObject({
        lastUsedAt: clock.now(),
        lastAddress: '192.0.2.5',
      })
    })

    describe('inventory', () => {
      it("lists the caller's own tokens, marking the one in use; one user's or everyone's needs *", async () => {
        const { core, clock } = start()
        const alice1 = await login(core, 'alice')
        clock.advance(1000)
        await login(core, 'alice')
        clock.advance(1000)
        const dave = await login(core, 'dave', 'read')
        const asAlice = await principal(core, alice1)
        const asDave = await principal(core, dave)

        const own = await core.tokens.list(asAlice, null, ADDRESS)
        expect(own.ok && own.value.map((view) => [view.user, view.kind, view.current])).toEqual([
          ['alice', 'session', true],
          ['alice', 'session', false],
        ])
        expect(own.ok && own.value[0]).toMatchObject({
          clientId: 'service-admin',
          scope: ['*'],
          name: null,
          expiresAt: expect.any(Number),
          lastAddress: ADDRESS,
        })
        expect(JSON.stringify(own)).not.toContain(alice1)
        const everyone = await core.tokens.list(asAlice, '*', ADDRESS)
        expect(everyone.ok && everyone.value.map((view) => view.user)).toEqual(['alice', 'alice', 'dave'])
        const ofDave = await core.tokens.list(asAlice, 'dave', ADDRESS)
        expect(ofDave.ok && ofDave.value.map((view) => view.current)).toEqual([false])
        expect(await core.tokens.list(asDave, 'alice', ADDRESS)).toMatchObject({
          ok: false,
          error: { code: 'forbidden' },
        })
        expect(await core.tokens.list(asDave, '*', ADDRESS)).toMatchObject({
          ok: false,
          error: { code: 'forbidden' },
        })
        expect(await core.tokens.list(asDave, 'dave', ADDRESS)).toMatchObject({
          ok: true,
          value: [{ user: 'dave' }],
        })
      })

      it("ends one token by id: one's own, or any with *; another's without * is as unknown", async () => {
        const { core, events } = start()
        const alice = await login(core, 'alice')
        const dave = await login(core, 'dave', 'read')
        const dave2 = await login(core, 'dave', 'read')
        const asDave = await principal(core, dave)
        const asAlice = await principal(core, alice)
        const aliceId = idOf(asAlice)
        const daveId = idOf(asDave)
        const id = idOf(await principal(core, dave2))

        expect(await core.tokens.revoke(asDave, aliceId, ADDRESS)).toEqual({
          ok: false,
          error: { code: 'token_not_found', id: aliceId },
        })
        expect(await core.authenticate(alice, ADDRESS)).toMatchObject({ ok: true })
        expect(await core.tokens.revoke(asDave, id, ADDRESS)).toMatchObject({ ok: true, value: { id } })
        expect(await core.authenticate(dave2, ADDRESS)).toEqual(refused)
        expect(await core.tokens.revoke(asAlice, daveId, ADDRESS)).toMatchObject({ ok: true })
        expect(await core.authenticate(dave, ADDRESS)).toEqual(refused)
        expect(await core.tokens.revoke(asAlice, daveId, ADDRESS)).toMatchObject({ ok: false })
        expect(
          events.ofType('token.revoked').map((event) => [event.owner, event.username, event.id]),
        ).toEqual([
          ['dave', 'dave', id],
          ['dave', 'alice', daveId],
        ])
      })

      it("ends every token of a user: one's own, or anyone's with *", async () => {
        const { core, events } = start()
        const alice = await login(core, 'alice')
        const bob1 = await login(core, 'bob')
        await login(core, 'bob')
        const dave = await login(core, 'dave', 'read')
        expect(await core.tokens.revokeUser(await principal(core, dave), 'bob', ADDRESS)).toMatchObject({
          ok: false,
          error: { code: 'forbidden' },
        })
        expect(await core.tokens.revokeUser(await principal(core, alice), 'bob', ADDRESS)).toEqual({
          ok: true,
          value: 2,
        })
        expect(await core.authenticate(bob1, ADDRESS)).toEqual(refused)
        expect(await core.tokens.revokeUser(await principal(core, dave), 'dave', ADDRESS)).toEqual({
          ok: true,
          value: 1,
        })
        expect(
          events.ofType('tokens.revoked_all').map((event) => [event.owner, event.count, event.reason]),
        ).toEqual([
          ['bob', 2, 'request'],
          ['dave', 1, 'request'],
        ])
      })
    })

    it('ends every token of everyone with *, one event per user', async () => {
      const { core, events } = start()
      const alice = await principal(core, await login(core, 'alice'))
      await login(core, 'bob')
      await login(core, 'bob')
      const dave = await principal(core, await login(core, 'dave', 'read'))
      expect(await core.tokens.revokeUser(dave, '*', ADDRESS)).toMatchObject({
        ok: false,
        error: { code: 'forbidden' },
      })
      expect(await stores.tokens.list(null)).toHaveLength(4)
      expect(await core.tokens.revokeUser(alice, '*', ADDRESS)).toEqual({ ok: true, value: 4 })
      expect(await stores.tokens.list(null)).toEqual([])
      expect(events.ofType('tokens.revoked_all').map((event) => [event.owner, event.count])).toEqual([
        ['alice', 1],
        ['bob', 2],
        ['dave', 1],
      ])
    })

    describe('named API tokens', () => {
      it("creates an fa_ token within the caller's rights, 90 days by default, usable as a bearer", async () => {
        const { core, clock, events } = start()
        const alice = await principal(core, await login(core, 'alice'))
        const created = await core.tokens.create(alice, { name: ' CI deploy ' }, ADDRESS)
        if (!created.ok) throw new Error(created.error.code)
        expect(created.value.token).toMatch(new RegExp(`^${API_TOKEN_PREFIX}[A-Za-z0-9_-]{43}$`))
        expect(created.value.view).toMatchObject({
          user: 'alice',
          kind: 'api',
          name: 'CI deploy',
          scope: ['*'],
          expiresAt: clock.now() + 90 * DAY,
          current: false,
        })
        expect(await principal(core, created.value.token)).toMatchObject({
          username: 'alice',
          permissions: ['*'],
        })
        expect(JSON.stringify(await stores.tokens.list(null))).not.toContain(created.value.token)
        expect(events.ofType('token.created')).toEqual([
          expect.objectContaining({
            owner: 'alice',
            username: 'alice',
            name: 'CI deploy',
            id: created.value.view.id,
          }),
        ])
      })

      it('keeps the scope within the rights of the caller now, and the lifetime within the bounds', async () => {
        const { core } = start()
        const dave = await principal(core, await login(core, 'dave', 'read'))
        const narrowAlice = await principal(core, await login(core, 'alice', 'read'))
        for (const caller of [dave, narrowAlice]) {
          expect(await core.tokens.create(caller, { name: 'x', scope: '*' }, ADDRESS)).toMatchObject({
            ok: false,
            error: { code: 'invalid_scope' },
          })
          expect(await core.tokens.create(caller, { name: 'x' }, ADDRESS)).toMatchObject({
            ok: true,
            value: { view: { scope: ['read'] } },
          })
        }
        const bad = [
          { name: '' },
          { name: 'x'.repeat(101) },
          { name: 'x', scope: 'everything' },
          { name: 'x', expiresIn: 0 },
          { name: 'x', expiresIn: 1.5 },
          { name: 'x', expiresIn: 366 * 86_400 },
          { name: 'x', expiresIn: null },
        ]
        for (const request of bad) {
          const outcome = await core.tokens.create(dave, request, ADDRESS)
          expect({ request, ok: outcome.ok }).toEqual({ request, ok: false })
        }
        expect(await stores.tokens.list(null)).toHaveLength(4)
      })

      it('never expires, or lives longer, only when the settings allow it', async () => {
        const { core } = start(team, 1, { apiTokens: { allowNoExpiry: true, maxExpiryTime: 1000 * 86_400 } })
        const alice = await principal(core, await login(core, 'alice'))
        expect(await core.tokens.create(alice, { name: 'forever', expiresIn: null }, ADDRESS)).toMatchObject({
          ok: true,
          value: { view: { expiresAt: null } },
        })
        expect(
          await core.tokens.create(alice, { name: 'long', expiresIn: 999 * 86_400 }, ADDRESS),
        ).toMatchObject({
          ok: true,
        })
      })

      it('is subject to its user like every token: a password change ends it', async () => {
        const { core, hasher } = start()
        const created = await core.tokens.create(operator, { name: 'ci', user: 'carol', scope: 'read' }, null)
        if (!created.ok) throw new Error(created.error.code)
        expect(await principal(core, created.value.token)).toMatchObject({
          username: 'carol',
          permissions: ['read'],
        })
        await core.setUsers(
          team(hasher).map((user) =>
            user.username === 'carol' ? { ...user, password: hasher.hash('x') } : user,
          ),
        )
        expect(await core.authenticate(created.value.token, ADDRESS)).toEqual(refused)
      })

      it('is created for another user only with *, and only for a configured one', async () => {
        const { core } = start()
        const dave = await principal(core, await login(core, 'dave', 'read'))
        expect(await core.tokens.create(dave, { name: 'x', user: 'alice' }, ADDRESS)).toMatchObject({
          ok: false,
          error: { code: 'forbidden' },
        })
        expect(await core.tokens.create(operator, { name: 'x', user: 'nobody' }, null)).toMatchObject({
          ok: false,
          error: { code: 'invalid_request' },
        })
      })
    })
  })
}
