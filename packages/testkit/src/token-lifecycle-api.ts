import { API_TOKEN_PREFIX, operator } from '@flowadmin/core'
import { describe, expect, it } from 'vitest'
import { ADDRESS, DAY, refused, type TokenLifecycle, team } from './token-lifecycle-fixture.js'

/** The token lifecycle of named API tokens. */
export function describeApiTokens({ stores, start, login, principal }: TokenLifecycle): void {
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
      expect(JSON.stringify(await stores().tokens.list(null))).not.toContain(created.value.token)
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
      expect(await stores().tokens.list(null)).toHaveLength(4)
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
}
