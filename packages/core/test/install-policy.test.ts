import { describe, expect, it } from 'vitest'
import { RECENT_SIGN_IN_MS } from '../src/auth/factor-facade.js'
import type { Principal } from '../src/auth/principal.js'
import { FLEET_INSTALL_PERMISSION, mayInstallOnFleet } from '../src/fleet/install-policy.js'

const NOW = Date.UTC(2026, 11, 7, 12)

const person = (
  permissions: string[],
  fields: Partial<Extract<Principal, { kind: 'user' }>> = {},
): Principal => ({
  kind: 'user',
  username: 'alice',
  clientId: 'node-red-admin',
  permissions,
  tokenId: 't1',
  tokenKind: 'session',
  audience: 'flowadmin',
  signedInAt: NOW - 60_000,
  signIn: 'password',
  ...fields,
})

const refusedFor = { ok: false, error: { code: 'forbidden', permission: FLEET_INSTALL_PERMISSION } }

describe('who may install on the fleet', () => {
  it('a session whose permissions cover installs.write, within the recent window; not after', () => {
    for (const granted of [['*'], ['write'], ['*.write'], ['nodes.write', 'installs.write']]) {
      expect(mayInstallOnFleet(person(granted), NOW), granted.join(' ')).toEqual({ ok: true, value: null })
    }
    expect(mayInstallOnFleet(person(['*'], { signedInAt: NOW - RECENT_SIGN_IN_MS }), NOW).ok).toBe(true)
    expect(mayInstallOnFleet(person(['*'], { signedInAt: NOW - RECENT_SIGN_IN_MS - 1 }), NOW)).toEqual({
      ok: false,
      error: { code: 'reauthentication_required', minutes: 10, action: 'fleet_install' },
    })
  })

  it('a session whose permissions do not cover it is refused, recent or not', () => {
    for (const granted of [['nodes.write'], ['read'], ['nodes.read', 'nodes.write', 'flows.write']]) {
      expect(mayInstallOnFleet(person(granted), NOW), granted.join(' ')).toEqual(refusedFor)
    }
  })

  it('an API token only when its scope names installs.write itself, however old', () => {
    const api = (permissions: string[]) =>
      person(permissions, { tokenKind: 'api', signIn: null, signedInAt: NOW - 90 * 86_400_000 })
    for (const scope of [['*'], ['write'], ['*.write'], ['nodes.write']])
      expect(mayInstallOnFleet(api(scope), NOW), scope.join(' ')).toEqual(refusedFor)
    expect(mayInstallOnFleet(api(['nodes.write', 'installs.write']), NOW)).toEqual({ ok: true, value: null })
  })

  it('without people (auth off, the command line) there is no one to ask more of', () => {
    expect(mayInstallOnFleet({ kind: 'anonymous', permissions: ['*'] }, NOW)).toEqual({
      ok: true,
      value: null,
    })
  })
})
