import { createMemoryStores } from '@flowadmin/adapter-memory'
import { MAX_PASSKEYS, SIGN_IN_BOUNDS, type UserPrincipal } from '@flowadmin/core'
import { WORLD_ADDRESS as ADDRESS, createCoreWorld } from '@flowadmin/testkit'
import { describe, expect, it } from 'vitest'

const MINUTE = 60_000
/** The sign-in page's cookie of the browser the passkey sign-ins happen in. */
const BROWSER = 'the-browser-binding-of-this-test-43-characte'

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
  /** Sign-in options' answer from passkey `id`, reporting `counter`, in BROWSER at ADDRESS. */
  const answer = async (id: string, counter = 0, valid = true, address = ADDRESS) => {
    const options = await core.passkeys.signInOptions(BROWSER, address)
    if (!options.ok) throw new Error(options.error.code)
    return webauthn.get(options.value.options, id, { counter, valid })
  }
  /**
   * A session of whoever passkey `id` is, as the sign-in page makes one: the passkey's answer,
   * then the one-time code traded by the console (a person with a passkey has no password grant).
   */
  const passkeySession = async (id: string, counter: number) => {
    const signedIn = await core.passkeys.signIn(await answer(id, counter), BROWSER, ADDRESS)
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

  it('takes each registration challenge once, from the session it was given to', async () => {
    const { core, webauthn, login, principalOf } = world()
    const alice = await principalOf(await login('alice'))
    const admin = await principalOf(await login('admin'))
    const otherSession = await principalOf(await login('alice'))
    const options = await core.passkeys.registrationOptions(alice)
    if (!options.ok) throw new Error(options.error.code)
    const refused = { ok: false, error: { code: 'passkey_refused' } }
    // Another person's session, or another session of hers, cannot use it; that does not use it up.
    for (const other of [admin, otherSession])
      expect(
        await core.passkeys.register(other, 'k', webauthn.create(options.value.options, 'c1'), ADDRESS),
      ).toEqual(refused)
    const answered = webauthn.create(options.value.options, 'c1')
    expect((await core.passkeys.register(alice, 'k', answered, ADDRESS)).ok).toBe(true)
    // Once used, never again, even for a credential not registered yet.
    expect(
      await core.passkeys.register(alice, 'k', webauthn.create(options.value.options, 'c9'), ADDRESS),
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
    const listed = await core.passkeys.list(alice)
    expect(listed.ok && listed.value.map((one) => one.id)).toEqual(['c1'])
  })

  it('stores nothing for registration options: any number of them, and each still serves', async () => {
    const { core, clock, webauthn, stores, login, principalOf } = world()
    const alice = await principalOf(await login('alice'))
    const made = []
    for (let i = 0; i < 1000; i++) {
      const options = await core.passkeys.registrationOptions(alice)
      if (!options.ok) throw new Error(options.error.code)
      made.push(options.value.options)
    }
    expect(await stores.sso.deleteExpiredSignIns(clock.now() + 10 * MINUTE, 10_000)).toBe(0)
    for (const [i, options] of [made[0], made[999]].entries())
      expect(
        (await core.passkeys.register(alice, `k${i}`, webauthn.create(options, `c${i}`), ADDRESS)).ok,
      ).toBe(true)
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
    await register(admin, 'admin-key')
    // With a passkey, the password grant refuses alice: her sessions come from a passkey.
    await expect(login('alice')).rejects.toThrow('mfa_required')
    const other = await passkeySession('a2', 1)
    const own = await principalOf(await passkeySession('a1', 1))
    const adminOwn = await principalOf(await passkeySession('admin-key', 1))
    expect(await core.passkeys.remove(adminOwn, 'a1', ADDRESS)).toEqual({
      ok: false,
      error: { code: 'passkey_not_found', id: 'a1' },
    })
    expect(await core.passkeys.remove(own, 'a1', ADDRESS)).toEqual({ ok: true, value: undefined })
    expect(await core.passkeys.remove(own, 'a1', ADDRESS)).toMatchObject({ ok: false })
    expect((await core.authenticate(other)).ok).toBe(false)
    const left = await core.passkeys.list(own)
    expect(left.ok && left.value.map((one) => one.id)).toEqual(['a2'])
    // Her other sessions: the passkey's, and the one she registered with.
    expect(events.ofType('passkey.removed')).toMatchObject([{ owner: 'alice', id: 'a1', sessionsEnded: 2 }])
  })

  it('removes a passkey only for a recent sign-in with a second factor: never a password alone, an older session or an API token', async () => {
    const { core, clock, events, login, signedInWith, principalOf, register, passkeySession } = world()
    const password = await principalOf(await login('alice'))
    await register(password, 'a1')
    const again = {
      ok: false,
      error: { code: 'reauthentication_required', minutes: 10, action: 'remove_factor' },
    }
    // The session that registered it signed in with a password alone: a stolen one strips nothing.
    expect(await core.passkeys.remove(password, 'a1', ADDRESS)).toEqual(again)
    const api = await core.tokens.create(password, { name: 'ci', scope: 'read' }, ADDRESS)
    if (!api.ok) throw new Error(api.error.code)
    expect(await core.passkeys.remove(await principalOf(api.value.token), 'a1', ADDRESS)).toEqual({
      ok: false,
      error: { code: 'forbidden', permission: 'session' },
    })
    const withPasskey = await principalOf(await passkeySession('a1', 1))
    const withCode = await principalOf(await signedInWith('alice', 'password_totp'))
    clock.advance(10 * MINUTE + 1)
    expect(await core.passkeys.remove(withPasskey, 'a1', ADDRESS)).toEqual(again)
    expect(await core.passkeys.remove(withCode, 'a1', ADDRESS)).toEqual(again)
    expect(await core.passkeys.has('alice')).toBe(true)
    expect(events.ofType('passkey.removed')).toEqual([])
    const fresh = await principalOf(await signedInWith('alice', 'password_recovery_code'))
    expect(await core.passkeys.remove(fresh, 'a1', ADDRESS)).toEqual({ ok: true, value: undefined })
  })

  it('answers passkeys_not_configured everywhere when no relying party is configured', async () => {
    const { core, login, principalOf } = world({ configured: false })
    const alice = await principalOf(await login('alice'))
    const notConfigured = { ok: false, error: { code: 'passkeys_not_configured' } }
    expect(core.passkeys.available).toBe(false)
    expect(await core.passkeys.list(alice)).toEqual(notConfigured)
    expect(await core.passkeys.registrationOptions(alice)).toEqual(notConfigured)
    expect(await core.passkeys.signInOptions(BROWSER, ADDRESS)).toEqual(notConfigured)
    expect(await core.passkeys.signIn({}, BROWSER, ADDRESS)).toEqual(notConfigured)
  })
})

describe('passkeys: sign-in', () => {
  it('signs in with a registered passkey once per challenge, and records its use', async () => {
    const { core, clock, events, login, principalOf, register, answer, users } = world()
    const alice = await principalOf(await login('alice'))
    await register(alice, 'cred-1')
    clock.advance(MINUTE)
    const response = await answer('cred-1', 1, true, '10.0.0.9')
    const signedIn = await core.passkeys.signIn(response, BROWSER, '10.0.0.9')
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
    expect(await core.passkeys.signIn(response, BROWSER, '10.0.0.9')).toEqual({
      ok: false,
      error: { code: 'passkey_refused' },
    })
    // Its passkey signed it, so the refusal names whose it is.
    expect(events.ofType('passkey.failed')).toMatchObject([
      { username: 'alice', id: 'cred-1', reason: 'unknown_challenge', address: '10.0.0.9' },
    ])
  })

  it('refuses, with the reason audited: expired challenges, unknown passkeys, bad answers, registration challenges', async () => {
    const { core, clock, events, webauthn, login, principalOf, register, answer } = world()
    const alice = await principalOf(await login('alice'))
    await register(alice, 'cred-1')
    const refused = { ok: false, error: { code: 'passkey_refused' } }
    const late = await answer('cred-1', 0)
    clock.advance(5 * MINUTE)
    expect(await core.passkeys.signIn(late, BROWSER, ADDRESS)).toEqual(refused)
    expect(await core.passkeys.signIn(await answer('unknown-cred'), BROWSER, ADDRESS)).toEqual(refused)
    expect(await core.passkeys.signIn(await answer('cred-1', 3, false), BROWSER, ADDRESS)).toEqual(refused)
    expect(await core.passkeys.signIn('not an answer', BROWSER, ADDRESS)).toEqual(refused)
    // A registration's challenge does not sign in.
    const registration = await core.passkeys.registrationOptions(alice)
    if (!registration.ok) throw new Error(registration.error.code)
    expect(
      await core.passkeys.signIn(webauthn.get(registration.value.options, 'cred-1'), BROWSER, ADDRESS),
    ).toEqual(refused)
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
    expect((await core.passkeys.signIn(await answer('counting', 5), BROWSER, ADDRESS)).ok).toBe(true)
    expect(await core.passkeys.signIn(await answer('counting', 5), BROWSER, ADDRESS)).toEqual({
      ok: false,
      error: { code: 'passkey_refused' },
    })
    expect((await core.passkeys.signIn(await answer('counting', 4), BROWSER, ADDRESS)).ok).toBe(false)
    expect((await core.passkeys.signIn(await answer('counting', 6), BROWSER, ADDRESS)).ok).toBe(true)
    expect((await core.passkeys.signIn(await answer('zero', 0), BROWSER, ADDRESS)).ok).toBe(true)
    expect((await core.passkeys.signIn(await answer('zero', 0), BROWSER, ADDRESS)).ok).toBe(true)
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
    expect(await core.passkeys.signIn(await answer('cred-1', 1), BROWSER, ADDRESS)).toEqual({
      ok: false,
      error: { code: 'passkey_refused' },
    })
    expect(events.ofType('passkey.failed')).toMatchObject([
      { username: 'alice', id: 'cred-1', reason: 'user_gone' },
    ])
  })

  it('loses every passkey of a person whose second factors are removed; unanswered challenges leave nothing to sweep', async () => {
    const { core, clock, stores, login, principalOf, register } = world()
    const alice = await principalOf(await login('alice'))
    await register(alice, 'a1')
    await register(alice, 'a2')
    expect(await core.mfa.reset('alice')).toBe(true)
    expect(await core.passkeys.has('alice')).toBe(false)
    expect(await stores.passkeys.find('a1')).toBeNull()
    expect(await core.mfa.reset('alice')).toBe(false)
    for (let i = 0; i < 3; i++) await core.passkeys.signInOptions(BROWSER, ADDRESS)
    expect((await core.sweep()).signIns).toBe(0)
    clock.advance(5 * MINUTE)
    // The two registrations' challenges were spent, and their time ended; the sign-ins' were never kept.
    expect((await core.sweep()).signIns).toBe(2)
  })

  it('signs in once when the same answer arrives twice at once', async () => {
    const { core, events, login, principalOf, register, answer } = world()
    await register(await principalOf(await login('alice')), 'zero')
    const response = await answer('zero', 0)
    const both = await Promise.all([
      core.passkeys.signIn(response, BROWSER, ADDRESS),
      core.passkeys.signIn(response, BROWSER, ADDRESS),
    ])
    expect(both.map((one) => one.ok).sort()).toEqual([false, true])
    expect(events.ofType('passkey.failed')).toMatchObject([{ reason: 'unknown_challenge' }])
  })
})

describe('passkeys: sign-in challenges are carried by the browser', () => {
  it('binds a challenge to the browser’s cookie and the client’s address scope (an IPv6 /64)', async () => {
    const { core, events, webauthn, login, principalOf, register } = world()
    await register(await principalOf(await login('alice')), 'cred-1')
    const options = async (address: string) => {
      const made = await core.passkeys.signInOptions(BROWSER, address)
      if (!made.ok) throw new Error(made.error.code)
      return webauthn.get(made.value.options, 'cred-1')
    }
    const refused = { ok: false, error: { code: 'passkey_refused' } }
    // Another browser, or another address (another /64), cannot answer it.
    const fromHere = await options('2001:db8::1')
    expect(await core.passkeys.signIn(fromHere, 'another-browser', '2001:db8::1')).toEqual(refused)
    expect(await core.passkeys.signIn(fromHere, BROWSER, '2001:db8:0:1::1')).toEqual(refused)
    expect(await core.passkeys.signIn(await options('10.0.0.2'), BROWSER, '10.0.0.3')).toEqual(refused)
    expect(events.ofType('passkey.failed').map((event) => event.reason)).toEqual([
      'unknown_challenge',
      'unknown_challenge',
      'unknown_challenge',
    ])
    // The same /64, another host in it: the same client. Refusals did not spend it.
    expect((await core.passkeys.signIn(fromHere, BROWSER, '[2001:db8:0:0:abcd::7]')).ok).toBe(true)
  })

  it('never refuses sign-in options, from one /64 or from many, stores nothing for them, and a person still signs in', async () => {
    const { core, clock, stores, webauthn, login, principalOf, register } = world()
    const alice = await principalOf(await login('alice'))
    await register(alice, 'cred-1')
    const first = await core.passkeys.signInOptions(BROWSER, '2001:db8::1')
    if (!first.ok) throw new Error(first.error.code)
    // Past what the old bounds allowed: from one /64, and in all from many.
    for (let i = 0; i <= SIGN_IN_BOUNDS.perAddress; i++)
      expect((await core.passkeys.signInOptions(`attacker-${i}`, `2001:db8::${i.toString(16)}`)).ok).toBe(
        true,
      )
    for (let i = 0; i <= SIGN_IN_BOUNDS.total; i++) {
      const address = `2001:db8:${Math.floor(i / 256).toString(16)}:${(i % 256).toString(16)}::1`
      expect((await core.passkeys.signInOptions(`attacker-${i}`, address)).ok).toBe(true)
    }
    // Nothing of them is in the store: once their time ended, the sweep finds the registration's
    // challenge (spent by its answer), and nothing else.
    expect(await stores.sso.deleteExpiredSignIns(clock.now() + 10 * MINUTE, 100_000)).toBe(1)
    // The person's own sign-in, begun before, and one begun now, both go through.
    expect(
      (
        await core.passkeys.signIn(
          webauthn.get(first.value.options, 'cred-1', { counter: 1 }),
          BROWSER,
          '2001:db8::1',
        )
      ).ok,
    ).toBe(true)
    const now = await core.passkeys.signInOptions(BROWSER, '192.0.2.7')
    if (!now.ok) throw new Error(now.error.code)
    expect(
      (
        await core.passkeys.signIn(
          webauthn.get(now.value.options, 'cred-1', { counter: 2 }),
          BROWSER,
          '192.0.2.7',
        )
      ).ok,
    ).toBe(true)
  })
})
