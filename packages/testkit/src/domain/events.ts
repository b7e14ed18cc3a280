import { describe, expect, it } from 'vitest'
import type { OpenStores } from '../store-contract.js'
import { ADDRESS, adminLogin, GREETING, useTestCore } from './fixture.js'

/** The core's events rules over the stores `open` gives (fresh ones for each core). */
export function describeEvents(name: string, open: OpenStores): void {
  const createTestCore = useTestCore(open)

  describe(`events: ${name}`, () => {
    describe('events', () => {
      it('records each security and change event with user, client and address, never a secret', async () => {
        const { core, events, clock } = await createTestCore({ throttle: { maxFailuresPerUser: 1 } })
        await core.modules.sync([GREETING])
        const login = await core.login(adminLogin({ password: 'pw' }), ADDRESS)
        if (!login.ok) throw new Error('login failed')
        const token = login.value.accessToken
        const principal = await core.authenticate(token)
        if (!principal.ok) throw new Error('not authenticated')
        const actor = { username: 'admin', clientId: 'service-admin', address: ADDRESS }
        await core.modules.setModuleEnabled(GREETING.name, false, actor)
        await core.modules.setModuleEnabled(GREETING.name, true, actor)
        await core.revoke(principal.value, token, ADDRESS)
        await core.login(adminLogin({ username: 'mallory', password: 'secret-guess-1' }), ADDRESS)
        await core.login(adminLogin({ username: 'mallory', password: 'secret-guess-2' }), ADDRESS)

        expect(events.events.map((event) => event.type)).toEqual([
          'login.succeeded',
          'module.disabled',
          'module.enabled',
          'token.revoked',
          'login.failed',
          'login.throttled',
        ])
        for (const event of events.events) {
          expect(event).toMatchObject({ at: clock.now(), clientId: 'service-admin', address: ADDRESS })
          expect(event.username).toMatch(/^(admin|mallory)$/)
        }
        const text = JSON.stringify(events.events)
        for (const secret of ['"pw"', 'secret-guess', token]) expect(text).not.toContain(secret)
      })
    })
  })
}
