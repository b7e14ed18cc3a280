import { createMemoryStores } from '@flowadmin/adapter-memory'
import { MAX_PASSKEYS, operator, SIGN_IN_BOUNDS, type UserPrincipal } from '@flowadmin/core'
import { WORLD_ADDRESS as ADDRESS, createCoreWorld } from '@flowadmin/testkit'
import { describe, expect, it } from 'vitest'

const MINUTE = 60_000

function world({ configured = true } = {}) {
  const base = createCoreWorld({ stores: createMemoryStores(), webauthn: configured })
  const { core, webauthn } = base
  /** Registers passkey `id` for the principal; its view. */
  const register = async (principal: UserPrincipal, id: string, name = `Key ${id}`) => {
    const options = await core.passkeys.registrationOptions(principal)
    if (!options.ok) throw new Error(options.error.code)
    const registered = await core.passkeys.register(
      principal,
      name,
      webauthn.create(options.value.options, id),
      ADDRESS,
    )
    if (!registered.ok) throw new Error(registered.error.code)
    return registered.value
  }
  /** Sign-in options' answer from passkey `id`, reporting `counter`. */
  const answer = async (id: string, counter = 0, valid = true) => {
    const options = await core.passkeys.signInOptions(ADDRESS)
    if (!options.ok) throw new Error(options.error.code)
    return webauthn.get(options.value.options, id, { counter, valid })
  }
  /**
   * A session of whoever passkey `id` is, as the sign-in page makes one: the passkey's answer,
   * then the one-time code traded by the console (a person with a passkey has no password grant).
   */
  const passkeySession = async (id: string, counter: number) => {
    const signedIn = await core.passkeys.signIn(await answer(id, counter), ADDRESS)
    if (!signedIn.ok) throw new Error(signedIn.error.code)
    const { user } = signedIn.value
    const owner = {
      username: user.username,
      permissions: user.permissions,
      fingerprint: '',
      method: 'passkey' as const,
    }
    const browser = 'a-browser'
    const code = await core.signIn.handOver(owner, { binding: browser, authorization: null }, ADDRESS)
    if (!code.ok || core.signIn.exchange === null) throw new Error('no code')
    const issued = await core.signIn.exchange(browser, code.value, 'service-editor', ADDRESS, null)
    if (!issued.ok) throw new Error(issued.error.code)
    return issued.value.accessToken
  }
  return { ...base, register, answer, passkeySession }
}

describe('passkeys: registration', () => {
  it('registers a passkey of the person’s own session, lists it, and ends their other sessions', async () => {
    const { core, events, login, principalOf, register } = world()
    const other = await login('alice')
    const principal = await principalOf(await login('alice'))
    expect(await core.passkeys.list(principal)).toEqual({ ok: true, value: [] })
    expect(await core.passkeys.has('alice')).toBe(false)
    const view = await register(principal, 'cred-1', 'Laptop ✓')
    expect(view).toEqual({
      id: 'cred-1',
      name: 'Laptop ✓',
      createdAt: expect.any(Number),
      lastUsedAt: null,
      backedUp: false,
    })
    expect(await core.passkeys.list(principal)).toEqual({ ok: true, value: [view] })
    expect(await core.passkeys.has('alice')).toBe(true)
    expect((await core.authenticate(other)).ok).toBe(false)
    expect(events.ofType('passkey.registered')).toMatchObject([
      { username: 'alice', id: 'cred-1', name: 'Laptop ✓', sessionsEnded: 1, address: ADDRESS },
    ])
    // The session that registered stays.
    expect((await core.passkeys.list(principal)).ok).toBe(true)
  })

  it('refuses API tokens and tokens of another audience', async () => {
    const { core, login, principalOf } = world()
    const principal = await principalOf(await login('alice'))
    const api = await core.tokens.create(principal, { name: 'ci', scope: 'read' }, ADDRESS)
    if (!api.ok) throw new Error(api.error.code)
    const apiPrincipal = await principalOf(api.value.token)
    const forbidden = { ok: false, error: { code: 'forbidden', permission: 'session' } }
    for (const caller of [apiPrincipal, { ...principal, audience: 'node-red' }]) {
      expect(await core.passkeys.list(caller)).toEqual(forbidden)
      expect(await core.passkeys.registrationOptions(caller)).toEqual(forbidden)
      expect(await core.passkeys.register(caller, 'x', {}, ADDRESS)).toEqual(forbidden)
      expect(await core.passkeys.remove(caller, 'x', ADDRESS)).toEqual(forbidden)
    }
  })

  it('takes each registration challenge once, for the person it was made for', async () => {
    const { core, webauthn, login, principalOf } = world()
    const alice = await principalOf(await login('alice'))
    const admin = await principalOf(await login('admin'))
    const options = await core.passkeys.registrationOptions(alice)
    if (!options.ok) throw new Error(options.error.code)
    const refused = { ok: false, error: { code: 'passkey_refused' } }
    // Another person's session cannot use it, and that uses it up.
    expect(
      await core.passkeys.register(admin, 'k', webauthn.create(options.value.options, 'c1'), ADDRESS),
    ).toEqual(refused)
    expect(
      await core.passkeys.register(alice, 'k', webauthn.create(options.value.options, 'c1'), ADDRESS),
    ).toEqual(refused)
    // An answer that does not verify, or with no challenge at all.
    const again = await core.passkeys.registrationOptions(alice)
    if (!again.ok) throw new Error(again.error.code)
    expect(
      await core.passkeys.register(
        alice,
        'k',
        webauthn.create(again.value.options, 'c2', { valid: false }),
        ADDRESS,
      ),
    ).toEqual(refused)
    for (const junk of [
      null,
      'text',
      { response: { clientDataJSON: '***' } },
      { response: { clientDataJSON: 'e30' } },
    ])
      expect(await core.passkeys.register(alice, 'k', junk, ADDRESS)).toEqual(refused)
    expect(await core.passkeys.list(alice)).toEqual({ ok: true, value: [] })
  })

  it('refuses an expired challenge, a bad name, and an eleventh passkey', async () => {
    const { core, clock, webauthn, login, principalOf, register } = world()
    const alice = await principalOf(await login('alice'))
    const options = await core.passkeys.registrationOptions(alice)
    if (!options.ok) throw new Error(options.error.code)
    expect(
      await core.passkeys.register(alice, '', webauthn.create(options.value.options, 'c'), ADDRESS),
    ).toEqual({
      ok: false,
      error: { code: 'invalid_passkey_name' },
    })
    expect(
      await core.passkeys.register(
        alice,
        'x'.repeat(65),
        webauthn.create(options.value.options, 'c'),
        ADDRESS,
      ),
    ).toEqual({ ok: false, error: { code: 'invalid_passkey_name' } })
    clock.advance(5 * MINUTE)
    expect(
      await core.passkeys.register(alice, 'k', webauthn.create(options.value.options, 'c'), ADDRESS),
    ).toEqual({
      ok: false,
      error: { code: 'passkey_refused' },
    })
    for (let i = 0; i < MAX_PASSKEYS; i++) await register(alice, `c${i}`, 'x'.repeat(64))
    const tooMany = { ok: false, error: { code: 'too_many_passkeys', limit: MAX_PASSKEYS } }
    expect(await core.passkeys.registrationOptions(alice)).toEqual(tooMany)
  })

  it('removes one passkey of the person’s own, ending their other sessions; another’s is not found', async () => {
    const { core, events, login, principalOf, register, passkeySession } = world()
    const alice = await principalOf(await login('alice'))
    const admin = await principalOf(await login('admin'))
    await register(alice, 'a1')
    await register(alice, 'a2')
    // With a passkey, the password grant refuses alice: her other session comes from a passkey.
    await expect(login('alice')).rejects.toThrow('mfa_required')
    const other = await passkeySession('a2', 1)
    expect(await core.passkeys.remove(admin, 'a1', ADDRESS)).toEqual({
      ok: false,
      error: { code: 'passkey_not_found', id: 'a1' },
    })
    expect(await core.passkeys.remove(alice, 'a1', ADDRESS)).toEqual({ ok: true, value: undefined })
    expect(await core.passkeys.remove(alice, 'a1', ADDRESS)).toMatchObject({ ok: false })
    expect((await core.authenticate(other)).ok).toBe(false)
    const left = await core.passkeys.list(alice)
    expect(left.ok && left.value.map((one) => one.id)).toEqual(['a2'])
    expect(events.ofType('passkey.removed')).toMatchObject([{ owner: 'alice', id: 'a1', sessionsEnded: 1 }])
  })

  it('answers passkeys_not_configured everywhere when no relying party is configured', async () => {
    const { core, login, principalOf } = world({ configured: false })
    const alice = await principalOf(await login('alice'))
    const notConfigured = { ok: false, error: { code: 'passkeys_not_configured' } }
    expect(core.passkeys.available).toBe(false)
    expect(await core.passkeys.list(alice)).toEqual(notConfigured)
    expect(await core.passkeys.registrationOptions(alice)).toEqual(notConfigured)
    expect(await core.passkeys.signInOptions(ADDRESS)).toEqual(notConfigured)
    expect(await core.passkeys.signIn({}, ADDRESS)).toEqual(notConfigured)
  })
})

describe('passkeys: sign-in', () => {
  it('signs in with a registered passkey once per challenge, and records its use', async () => {
    const { core, clock, events, login, principalOf, register, answer, users } = world()
    const alice = await principalOf(await login('alice'))
    await register(alice, 'cred-1')
    clock.advance(MINUTE)
    const response = await answer('cred-1', 1)
    const signedIn = await core.passkeys.signIn(response, '10.0.0.9')
    expect(signedIn).toEqual({ ok: true, value: { user: expect.objectContaining({ username: 'alice' }) } })
    expect(signedIn.ok && 'passwordHash' in signedIn.value.user && signedIn.value.user.passwordHash).toBe(
      users[1]?.password,
    )
    const listed = await core.passkeys.list(alice)
    expect(listed.ok && listed.value[0]?.lastUsedAt).toBe(clock.now())
    expect(events.ofType('passkey.succeeded')).toMatchObject([
      { username: 'alice', id: 'cred-1', address: '10.0.0.9' },
    ])
    // The same answer again: its challenge was used.
    expect(await core.passkeys.signIn(response, '10.0.0.9')).toEqual({
      ok: false,
      error: { code: 'passkey_refused' },
    })
    expect(events.ofType('passkey.failed')).toMatchObject([
      { username: null, id: 'cred-1', reason: 'unknown_challenge', address: '10.0.0.9' },
    ])
  })

  it('refuses, with the reason audited: expired challenges, unknown passkeys, bad answers, registration challenges', async () => {
    const { core, clock, events, webauthn, login, principalOf, register, answer } = world()
    const alice = await principalOf(await login('alice'))
    await register(alice, 'cred-1')
    const refused = { ok: false, error: { code: 'passkey_refused' } }
    const late = await answer('cred-1', 0)
    clock.advance(5 * MINUTE)
    expect(await core.passkeys.signIn(late, ADDRESS)).toEqual(refused)
    expect(await core.passkeys.signIn(await answer('unknown-cred'), ADDRESS)).toEqual(refused)
    expect(await core.passkeys.signIn(await answer('cred-1', 3, false), ADDRESS)).toEqual(refused)
    expect(await core.passkeys.signIn('not an answer', ADDRESS)).toEqual(refused)
    // A registration's challenge does not sign in.
    const registration = await core.passkeys.registrationOptions(alice)
    if (!registration.ok) throw new Error(registration.error.code)
    expect(await core.passkeys.signIn(webauthn.get(registration.value.options, 'cred-1'), ADDRESS)).toEqual(
      refused,
    )
    expect(events.ofType('passkey.failed').map((event) => [event.id, event.reason])).toEqual([
      ['cred-1', 'unknown_challenge'],
      ['unknown-cred', 'unknown_credential'],
      ['cred-1', 'verification_failed'],
      [null, 'unknown_challenge'],
      ['cred-1', 'unknown_challenge'],
    ])
    expect(events.ofType('passkey.succeeded')).toEqual([])
  })

  it('refuses a counter that did not grow as a cloned authenticator, and accepts one that keeps none', async () => {
    const { core, events, login, principalOf, register, answer } = world()
    const alice = await principalOf(await login('alice'))
    await register(alice, 'counting')
    await register(alice, 'zero')
    expect((await core.passkeys.signIn(await answer('counting', 5), ADDRESS)).ok).toBe(true)
    expect(await core.passkeys.signIn(await answer('counting', 5), ADDRESS)).toEqual({
      ok: false,
      error: { code: 'passkey_refused' },
    })
    expect((await core.passkeys.signIn(await answer('counting', 4), ADDRESS)).ok).toBe(false)
    expect((await core.passkeys.signIn(await answer('counting', 6), ADDRESS)).ok).toBe(true)
    expect((await core.passkeys.signIn(await answer('zero', 0), ADDRESS)).ok).toBe(true)
    expect((await core.passkeys.signIn(await answer('zero', 0), ADDRESS)).ok).toBe(true)
    expect(events.ofType('passkey.failed')).toMatchObject([
      { username: 'alice', id: 'counting', reason: 'counter' },
      { username: 'alice', id: 'counting', reason: 'counter' },
    ])
  })

  it('refuses the passkey of a user no longer configured', async () => {
    const { core, events, users, login, principalOf, register, answer } = world()
    const alice = await principalOf(await login('alice'))
    await register(alice, 'cred-1')
    await core.setUsers(users.filter((user) => user.username !== 'alice'))
    expect(await core.passkeys.signIn(await answer('cred-1', 1), ADDRESS)).toEqual({
      ok: false,
      error: { code: 'passkey_refused' },
    })
    expect(events.ofType('passkey.failed')).toMatchObject([
      { username: 'alice', id: 'cred-1', reason: 'user_gone' },
    ])
  })

  it('loses every passkey of a person whose second factors are removed, and the sweep clears old challenges', async () => {
    const { core, clock, stores, login, principalOf, register } = world()
    const alice = await principalOf(await login('alice'))
    await register(alice, 'a1')
    await register(alice, 'a2')
    expect(await core.mfa.remove(operator, 'alice', null)).toEqual({ ok: true, value: true })
    expect(await core.passkeys.has('alice')).toBe(false)
    expect(await stores.passkeys.find('a1')).toBeNull()
    expect(await core.mfa.remove(operator, 'alice', null)).toEqual({ ok: true, value: false })
    for (let i = 0; i < 3; i++) await core.passkeys.signInOptions(ADDRESS)
    expect((await core.sweep()).signIns).toBe(0)
    clock.advance(5 * MINUTE)
    expect((await core.sweep()).signIns).toBe(3)
  })
})

describe('passkeys: bounds of sign-ins under way', () => {
  const tooMany = (scope: 'address' | 'all') => ({ ok: false, error: { code: 'too_many_sign_ins', scope } })

  it('counts an IPv6 client by its /64, and saves nothing it refuses', async () => {
    const { core, clock } = world()
    for (let i = 0; i < SIGN_IN_BOUNDS.perAddress; i++)
      expect((await core.passkeys.signInOptions(`2001:db8::${i.toString(16)}`)).ok).toBe(true)
    expect(await core.passkeys.signInOptions('2001:db8::ffff')).toEqual(tooMany('address'))
    expect(await core.passkeys.signInOptions('[2001:db8:0:0:abcd::1]')).toEqual(tooMany('address'))
    expect((await core.passkeys.signInOptions('2001:db8:0:1::1')).ok).toBe(true)
    clock.advance(5 * MINUTE)
    expect((await core.sweep()).signIns).toBe(SIGN_IN_BOUNDS.perAddress + 1)
  })

  it('keeps every challenge handed out at the bound: the first still signs in, and one ending makes room', async () => {
    const { core, clock, events, webauthn, login, principalOf, register } = world()
    const alice = await principalOf(await login('alice'))
    await register(alice, 'cred-1')
    const first = await core.passkeys.signInOptions(ADDRESS)
    if (!first.ok) throw new Error(first.error.code)
    for (let i = 1; i < SIGN_IN_BOUNDS.perAddress; i++)
      expect((await core.passkeys.signInOptions(ADDRESS)).ok).toBe(true)
    expect(await core.passkeys.signInOptions(ADDRESS)).toEqual(tooMany('address'))
    // Another address, and a person registering from the full one, go on.
    expect((await core.passkeys.signInOptions('2001:db8:0:1::1')).ok).toBe(true)
    await register(alice, 'cred-2')
    expect(events.ofType('passkey.failed')).toEqual([])
    // Nothing was evicted: the first challenge still signs in, and its use makes room for one more.
    const signedIn = await core.passkeys.signIn(webauthn.get(first.value.options, 'cred-1'), ADDRESS)
    expect(signedIn.ok).toBe(true)
    expect((await core.passkeys.signInOptions(ADDRESS)).ok).toBe(true)
    expect(await core.passkeys.signInOptions(ADDRESS)).toEqual(tooMany('address'))
    // Unanswered ones end after 5 minutes: the client may ask again.
    clock.advance(5 * MINUTE)
    expect((await core.passkeys.signInOptions(ADDRESS)).ok).toBe(true)
  })

  it('refuses new sign-in challenges when the store holds its total, from any address, evicting none', async () => {
    const { core, clock, webauthn, login, principalOf, register } = world()
    const alice = await principalOf(await login('alice'))
    await register(alice, 'cred-1')
    const first = await core.passkeys.signInOptions('10.1.0.0')
    if (!first.ok) throw new Error(first.error.code)
    for (let i = 1; i < SIGN_IN_BOUNDS.total; i++) {
      const address = `10.1.${Math.floor(i / SIGN_IN_BOUNDS.perAddress)}.0`
      expect((await core.passkeys.signInOptions(address)).ok).toBe(true)
    }
    expect(await core.passkeys.signInOptions('192.0.2.7')).toEqual(tooMany('all'))
    // Registrations are not counted: a signed-in person still adds a passkey.
    await register(alice, 'cred-2')
    expect((await core.passkeys.signIn(webauthn.get(first.value.options, 'cred-1'), '10.1.0.0')).ok).toBe(
      true,
    )
    expect((await core.passkeys.signInOptions('192.0.2.7')).ok).toBe(true)
    expect(await core.passkeys.signInOptions('192.0.2.8')).toEqual(tooMany('all'))
    clock.advance(5 * MINUTE)
    expect((await core.passkeys.signInOptions('192.0.2.8')).ok).toBe(true)
  })
})
