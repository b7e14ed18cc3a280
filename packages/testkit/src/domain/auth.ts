import { describe, expect, it } from 'vitest'
import type { OpenStores } from '../store-contract.js'
import { ADDRESS, adminLogin, useTestCore } from './fixture.js'

/** The core's auth rules over the stores `open` gives (fresh ones for each core). */
export function describeAuth(name: string, open: OpenStores): void {
  const createTestCore = useTestCore(open)

  describe(`auth: ${name}`, () => {
    describe('login scheme', () => {
      it('is empty when no adminAuth is configured', async () => {
        expect((await createTestCore(null)).core.loginScheme()).toEqual({})
      })

      it('is the credentials scheme with username then password prompts and readable labels', async () => {
        expect((await createTestCore()).core.loginScheme()).toEqual({
          type: 'credentials',
          prompts: [
            { id: 'username', type: 'text', label: 'Username' },
            { id: 'password', type: 'password', label: 'Password' },
          ],
        })
      })
    })

    describe('password grant', () => {
      it('issues a Bearer token to either default client', async () => {
        const { core } = await createTestCore()
        for (const clientId of ['service-admin', 'service-editor']) {
          const result = await core.login(adminLogin({ clientId }), ADDRESS)
          expect(result).toMatchObject({
            ok: true,
            value: { tokenType: 'Bearer', expiresIn: 604800, scope: ['*'] },
          })
        }
      })

      it('accepts configured extra clients and no others', async () => {
        const { core } = await createTestCore({ clients: ['node-red-admin'] })
        expect((await core.login(adminLogin({ clientId: 'node-red-admin' }), ADDRESS)).ok).toBe(true)
        expect(await core.login(adminLogin({ clientId: 'node-red-editor' }), ADDRESS)).toEqual({
          ok: false,
          error: { code: 'invalid_credentials' },
        })
      })

      it.each([
        ['an unknown client', { clientId: 'Service-Admin' }],
        ['a missing client', { clientId: undefined }],
        ['an unknown user', { username: 'ghost' }],
        ['a wrong password', { password: 'PW' }],
        ['a username in another case', { username: 'Admin' }],
      ])('refuses %s with invalid_credentials, after one password verification', async (_, overrides) => {
        const { core, hasher } = await createTestCore()
        expect(await core.login(adminLogin(overrides), ADDRESS)).toEqual({
          ok: false,
          error: { code: 'invalid_credentials' },
        })
        expect(hasher.verified).toHaveLength(1)
      })

      it('verifies unknown users against the dummy hash, so they cost the same', async () => {
        const { core, hasher } = await createTestCore()
        await core.login(adminLogin({ username: 'ghost' }), ADDRESS)
        expect(hasher.verified).toEqual([hasher.dummyHash])
      })

      it('refuses a scope beyond the user’s permissions like any credential failure', async () => {
        const { core } = await createTestCore()
        const result = await core.login(
          adminLogin({ username: 'reader', password: 'rpw', scope: '*' }),
          ADDRESS,
        )
        expect(result).toEqual({ ok: false, error: { code: 'invalid_credentials' } })
      })

      it.each([
        [{ grantType: undefined }, 'invalid_request', 'grant_type'],
        [{ grantType: '' }, 'invalid_request', 'grant_type'],
        [{ username: undefined }, 'invalid_request', 'username'],
        [{ username: '' }, 'invalid_request', 'username'],
        [{ password: undefined }, 'invalid_request', 'password'],
        [{ scope: undefined }, 'invalid_request', 'scope'],
        [{ grantType: 'client_credentials' }, 'unsupported_grant_type', 'client_credentials'],
        [{ grantType: 'Password' }, 'unsupported_grant_type', 'Password'],
        [{ scope: 'write' }, 'invalid_scope', 'write'],
        [{ scope: 'read,*' }, 'invalid_scope', 'read,*'],
        [{ scope: 'nodes.read' }, 'invalid_scope', 'nodes.read'],
      ])(
        'reports a malformed request %o as %s without verifying a password',
        async (overrides, code, mention) => {
          const { core, hasher } = await createTestCore()
          const result = await core.login(adminLogin(overrides), ADDRESS)
          if (result.ok) throw new Error('a malformed request logged in')
          expect(result.error.code).toBe(code)
          expect('message' in result.error && result.error.message).toContain(mention)
          expect(hasher.verified).toHaveLength(0)
        },
      )

      it.each([
        ['*', 'admin', 'pw', ['*']],
        ['read', 'admin', 'pw', ['read']],
        ['read *', 'admin', 'pw', ['read', '*']],
        ['  read   read ', 'admin', 'pw', ['read']],
        ['', 'admin', 'pw', ['*']],
        ['', 'reader', 'rpw', ['read']],
        ['read', 'reader', 'rpw', ['read']],
      ])('grants scope %j to %s as %o', async (scope, username, password, granted) => {
        const { core } = await createTestCore()
        const result = await core.login(adminLogin({ scope, username, password }), ADDRESS)
        expect(result).toMatchObject({ ok: true, value: { scope: granted } })
      })

      it('has the token’s scope govern, not the user’s permissions', async () => {
        const { core } = await createTestCore()
        const read = await core.login(adminLogin({ scope: 'read' }), ADDRESS)
        if (!read.ok) throw new Error('login failed')
        expect((await core.authorize(read.value.accessToken, 'nodes.read', ADDRESS)).ok).toBe(true)
        expect(await core.authorize(read.value.accessToken, 'nodes.write', ADDRESS)).toEqual({
          ok: false,
          error: { code: 'forbidden', permission: 'nodes.write' },
        })
      })
    })

    describe('bearer authentication', () => {
      it('lets everyone in with every permission when auth is off', async () => {
        const { core } = await createTestCore(null)
        expect(await core.authorize(null, 'nodes.write', ADDRESS)).toEqual({
          ok: true,
          value: { kind: 'anonymous', permissions: ['*'] },
        })
        expect((await core.authorize('garbage', 'nodes.write', ADDRESS)).ok).toBe(true)
      })

      it('refuses a request without a token unless default permissions are configured', async () => {
        expect(await (await createTestCore()).core.authorize(null, 'settings.read', ADDRESS)).toEqual({
          ok: false,
          error: { code: 'unauthenticated', reason: 'missing' },
        })
        const anon = (await createTestCore({ default: { permissions: 'read' } })).core
        expect(await anon.authorize(null, 'settings.read', ADDRESS)).toEqual({
          ok: true,
          value: { kind: 'anonymous', permissions: ['read'] },
        })
        expect(await anon.authorize(null, 'nodes.write', ADDRESS)).toEqual({
          ok: false,
          error: { code: 'forbidden', permission: 'nodes.write' },
        })
      })

      it('does not fall back to anonymous for an invalid token', async () => {
        const { core } = await createTestCore({ default: { permissions: 'read' } })
        expect(await core.authorize('not-a-token', 'settings.read', ADDRESS)).toEqual({
          ok: false,
          error: { code: 'unauthenticated', reason: 'invalid' },
        })
      })

      it('records a refused permission as an event with the actor', async () => {
        const { core, events } = await createTestCore()
        const read = await core.login(adminLogin({ scope: 'read', clientId: 'service-editor' }), ADDRESS)
        if (!read.ok) throw new Error('login failed')
        await core.authorize(read.value.accessToken, 'nodes.write', ADDRESS)
        expect(events.ofType('permission.denied')).toEqual([
          expect.objectContaining({
            permission: 'nodes.write',
            username: 'admin',
            clientId: 'service-editor',
            address: ADDRESS,
          }),
        ])
      })
    })
  })
}
