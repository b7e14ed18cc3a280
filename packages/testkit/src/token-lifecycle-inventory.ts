import type { Principal } from '@flowadmin/core'
import { describe, expect, it } from 'vitest'
import { ADDRESS, MINUTE, refused, type TokenLifecycle } from './token-lifecycle-fixture.js'

/** The id of the token a principal uses. */
const idOf = (principal: Principal) => (principal.kind === 'user' ? principal.tokenId : '')

/** The token lifecycle's inventory: what each token records of its uses, listed, and ended. */
export function describeTokenInventory({ stores, writes, start, login, principal }: TokenLifecycle): void {
  it('keeps authenticated reads free of writes: the last use is written at most once a minute', async () => {
    const { core, clock } = start()
    const loggedInAt = clock.now()
    const alice = await login(core, 'alice')
    // The login is the session's first use: the requests of the next minute write nothing.
    expect((await stores().tokens.list('alice'))[0]).toMatchObject({
      lastUsedAt: loggedInAt,
      lastAddress: ADDRESS,
      agent: null,
    })
    writes().length = 0
    for (let i = 0; i < 20; i++) await core.authorize(alice, 'settings.read', ADDRESS)
    await Promise.all(Array.from({ length: 20 }, () => core.authorize(alice, 'settings.read', ADDRESS)))
    clock.advance(MINUTE - 1)
    await core.authorize(alice, 'settings.read', '192.0.2.99')
    expect(writes()).toEqual([])

    clock.advance(1)
    await Promise.all(Array.from({ length: 10 }, () => core.authorize(alice, 'settings.read', '192.0.2.99')))
    expect(writes()).toEqual(['touch'])
    expect((await stores().tokens.list('alice'))[0]).toMatchObject({
      lastUsedAt: loggedInAt + MINUTE,
      lastAddress: '192.0.2.99',
    })
    clock.advance(MINUTE - 1)
    for (let i = 0; i < 10; i++) await core.authorize(alice, 'settings.read', ADDRESS)
    expect(writes()).toEqual(['touch'])
    clock.advance(1)
    await core.authorize(alice, 'settings.read', ADDRESS)
    expect(writes()).toEqual(['touch', 'touch'])
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
    writes().length = 0
    clock.advance(5)
    await Promise.all(
      Array.from({ length: 5 }, () => core.authorize(created.value.token, 'settings.read', '192.0.2.5')),
    )
    expect(writes()).toEqual(['touch'])
    expect(await stores().tokens.findById(created.value.view.id)).toMatchObject({
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
      expect(events.ofType('token.revoked').map((event) => [event.owner, event.username, event.id])).toEqual([
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
    expect(await stores().tokens.list(null)).toHaveLength(4)
    expect(await core.tokens.revokeUser(alice, '*', ADDRESS)).toEqual({ ok: true, value: 4 })
    expect(await stores().tokens.list(null)).toEqual([])
    expect(events.ofType('tokens.revoked_all').map((event) => [event.owner, event.count])).toEqual([
      ['alice', 1],
      ['bob', 2],
      ['dave', 1],
    ])
  })
}
