import { createMemoryStores } from '@flowadmin/adapter-memory'
import { WORLD_ADDRESS as ADDRESS, createCoreWorld } from '@flowadmin/testkit'
import { describe, expect, it } from 'vitest'

/** The sign-in cookie of the browser the sign-ins happen in. */
const BROWSER = 'the-browser-binding-of-this-test-43-characte'
const STEP = 30_000
/** A person's factors when they have none. */
const NO_FACTOR = { totp: 'none', recoveryCodes: 0, enrolledAt: null, enrolledAtSignIn: false }

function world({ totp = true, require = 'none' as 'none' | 'everyone' | string[] } = {}) {
  const base = createCoreWorld({
    stores: createMemoryStores(),
    totp,
    adminAuth: (hasher) => ({
      secondFactor: { require },
      resourceServers: [
        { id: 'fleet', secret: hasher.hash('fleet-secret'), redirectUris: ['https://nr.example/cb'] },
      ],
    }),
  })
  const { core, clock, login, principalOf } = base
  /** Signs in as `username`, begins and confirms TOTP; the secret and the recovery codes. */
  const enrol = async (username: string) => {
    const token = await login(username)
    const principal = await principalOf(token)
    const started = await core.mfa.startTotp(principal)
    if (!started.ok) throw new Error(started.error.code)
    const confirmed = await core.mfa.confirmTotp(
      principal,
      base.totp.codeAt(started.value.secret, clock.now()),
      ADDRESS,
    )
    if (!confirmed.ok) throw new Error(confirmed.error.code)
    return { token, principal, secret: started.value.secret, recoveryCodes: confirmed.value.recoveryCodes }
  }
  const actor = { clientId: 'service-admin', address: ADDRESS }
  /** How the session of `token` signed in, as its owner's inventory shows it. */
  const signInOf = async (token: string) => {
    const principal = await principalOf(token)
    const listed = await core.tokens.list(principal, null, null)
    if (!listed.ok) throw new Error(listed.error.code)
    return listed.value.find((view) => view.current)?.signIn
  }
  return { ...base, enrol, actor, signInOf }
}

describe('second factor: TOTP enrolment', () => {
  it('is pending until one code confirms it, then gives ten recovery codes once', async () => {
    const { core, clock, events, totp, login, principalOf } = world()
    const principal = await principalOf(await login('alice'))
    expect(await core.mfa.status(principal)).toEqual(NO_FACTOR)
    const started = await core.mfa.startTotp(principal)
    if (!started.ok) throw new Error(started.error.code)
    expect(started.value).toEqual({
      secret: 'SECRET1',
      uri: expect.stringMatching(/^otpauth:/),
      qrSvg: '<svg/>',
    })
    expect(await core.mfa.status(principal)).toEqual({ ...NO_FACTOR, totp: 'pending' })
    // Signing in does not ask for a pending factor.
    expect(await core.mfa.required('alice')).toBe(false)

    expect(await core.mfa.confirmTotp(principal, '000000', ADDRESS)).toEqual({
      ok: false,
      error: { code: 'invalid_code' },
    })
    expect(events.ofType('mfa.failed')).toMatchObject([
      { username: 'alice', factor: 'totp', reason: 'wrong' },
    ])

    const confirmed = await core.mfa.confirmTotp(principal, totp.codeAt('SECRET1', clock.now()), ADDRESS)
    if (!confirmed.ok) throw new Error(confirmed.error.code)
    expect(confirmed.value.recoveryCodes).toHaveLength(10)
    expect(new Set(confirmed.value.recoveryCodes).size).toBe(10)
    for (const code of confirmed.value.recoveryCodes) expect(code).toMatch(/^[0-9a-z]{5}-[0-9a-z]{5}$/)
    expect(await core.mfa.status(principal)).toEqual({
      totp: 'enrolled',
      recoveryCodes: 10,
      enrolledAt: clock.now(),
      enrolledAtSignIn: false,
    })
    expect(await core.mfa.required('alice')).toBe(true)
    expect(events.ofType('mfa.enrolled')).toMatchObject([
      { username: 'alice', factor: 'totp', atSignIn: false },
    ])

    // Enrolled: a new enrolment is refused, and confirming again too.
    expect(await core.mfa.startTotp(principal)).toEqual({ ok: false, error: { code: 'factor_exists' } })
    expect(await core.mfa.confirmTotp(principal, '123456', ADDRESS)).toEqual({
      ok: false,
      error: { code: 'factor_exists' },
    })
  })

  it('ends the person’s other sessions when a factor is enrolled, keeping this one and API tokens', async () => {
    const { core, login, principalOf, enrol, events } = world()
    const other = await login('alice')
    const otherPrincipal = await principalOf(other)
    const api = await core.tokens.create(otherPrincipal, { name: 'ci', scope: 'read' }, ADDRESS)
    if (!api.ok) throw new Error(api.error.code)
    const admin = await login('admin')
    const { principal } = await enrol('alice')
    expect((await core.authenticate(other)).ok).toBe(false)
    expect((await core.authenticate(api.value.token)).ok).toBe(true)
    expect((await core.authenticate(admin)).ok).toBe(true)
    const mine = await core.tokens.list(principal, null, null)
    if (!mine.ok) throw new Error('list')
    expect(mine.value.map((token) => token.id)).toEqual([api.value.view.id, principal.tokenId])
    expect(events.ofType('mfa.enrolled')).toMatchObject([{ sessionsEnded: 1 }])
  })

  it('refuses a code of the secret an enrolment begun since replaced', async () => {
    const { core, clock, totp, login, principalOf } = world()
    const principal = await principalOf(await login('alice'))
    await core.mfa.startTotp(principal)
    await core.mfa.startTotp(principal)
    const old = await core.mfa.confirmTotp(principal, totp.codeAt('SECRET1', clock.now()), ADDRESS)
    expect(old).toEqual({ ok: false, error: { code: 'invalid_code' } })
    const fresh = await core.mfa.confirmTotp(principal, totp.codeAt('SECRET2', clock.now()), ADDRESS)
    expect(fresh.ok).toBe(true)
  })

  it('is refused when no key for secrets is configured, and without an enrolment', async () => {
    const unkeyed = world({ totp: false })
    const principal = await unkeyed.principalOf(await unkeyed.login('alice'))
    expect(unkeyed.core.mfa.available).toBe(false)
    expect(await unkeyed.core.mfa.startTotp(principal)).toEqual({
      ok: false,
      error: { code: 'mfa_not_configured' },
    })
    const keyed = world()
    const other = await keyed.principalOf(await keyed.login('alice'))
    expect(await keyed.core.mfa.confirmTotp(other, '123456', ADDRESS)).toEqual({
      ok: false,
      error: { code: 'enrolment_not_found' },
    })
  })
})

describe('second factor: codes at sign-in', () => {
  it('accepts a code once: the same code again, or an earlier step’s, is refused as replayed', async () => {
    const { core, clock, totp, enrol, events, actor } = world()
    const { secret } = await enrol('alice')
    clock.advance(STEP)
    const code = totp.codeAt(secret, clock.now())
    expect(await core.mfa.verify('alice', code, actor)).toEqual({ ok: true, value: 'totp' })
    expect(await core.mfa.verify('alice', code, actor)).toEqual({
      ok: false,
      error: { code: 'invalid_code' },
    })
    // The step before is within the window, but a later step was used already.
    const earlier = totp.codeAt(secret, clock.now() - STEP)
    expect(await core.mfa.verify('alice', earlier, actor)).toEqual({
      ok: false,
      error: { code: 'invalid_code' },
    })
    expect(events.ofType('mfa.succeeded')).toMatchObject([{ username: 'alice', factor: 'totp' }])
    expect(events.ofType('mfa.failed')).toMatchObject([
      { username: 'alice', factor: 'totp', reason: 'replayed' },
      { username: 'alice', factor: 'totp', reason: 'replayed' },
    ])
  })

  it('accepts the steps beside now and refuses an expired code', async () => {
    const { core, clock, totp, enrol, events, actor } = world()
    const { secret } = await enrol('alice')
    clock.advance(10 * STEP)
    const expired = totp.codeAt(secret, clock.now() - 2 * STEP)
    expect(await core.mfa.verify('alice', expired, actor)).toEqual({
      ok: false,
      error: { code: 'invalid_code' },
    })
    expect(events.ofType('mfa.failed')).toMatchObject([{ reason: 'wrong' }])
    expect((await core.mfa.verify('alice', totp.codeAt(secret, clock.now() - STEP), actor)).ok).toBe(true)
    expect((await core.mfa.verify('alice', totp.codeAt(secret, clock.now() + STEP), actor)).ok).toBe(true)
  })

  it('uses up each recovery code once, in any case and with spaces', async () => {
    const { core, enrol, events, actor } = world()
    const { recoveryCodes } = await enrol('alice')
    const [first = '', second = ''] = recoveryCodes
    expect(await core.mfa.verify('alice', first, actor)).toEqual({ ok: true, value: 'recovery_code' })
    expect(await core.mfa.verify('alice', first, actor)).toEqual({
      ok: false,
      error: { code: 'invalid_code' },
    })
    expect(await core.mfa.verify('alice', ` ${second.toUpperCase().replace('-', ' ')} `, actor)).toEqual({
      ok: true,
      value: 'recovery_code',
    })
    expect(events.ofType('mfa.recovery_used')).toMatchObject([{ remaining: 9 }, { remaining: 8 }])
    expect(events.ofType('mfa.failed')).toMatchObject([{ factor: 'recovery_code', reason: 'wrong' }])
    // Another person's code is nobody else's.
    const bob = await enrol('admin')
    expect((await core.mfa.verify('alice', bob.recoveryCodes[0] ?? '', actor)).ok).toBe(false)
  })

  it('throttles wrong codes per user, from any address, before checking the right one', async () => {
    const { core, clock, totp, enrol, events } = world()
    const { secret } = await enrol('alice')
    for (let i = 0; i < 5; i++) {
      const answer = await core.mfa.verify('alice', '000000', { clientId: null, address: `10.0.${i}.1` })
      expect(answer).toEqual({ ok: false, error: { code: 'invalid_code' } })
    }
    clock.advance(STEP)
    const right = totp.codeAt(secret, clock.now())
    const refused = await core.mfa.verify('alice', right, { clientId: null, address: '192.0.2.9' })
    expect(refused).toEqual({ ok: false, error: { code: 'throttled', retryAfter: expect.any(Number) } })
    expect(events.ofType('mfa.throttled')).toMatchObject([{ username: 'alice', address: '192.0.2.9' }])
    // The step was not used by the refused attempt: once the window ends, the code holds.
    clock.advance(900_000)
    const later = totp.codeAt(secret, clock.now())
    expect((await core.mfa.verify('alice', later, { clientId: null, address: '192.0.2.9' })).ok).toBe(true)
    // Passwords are counted apart: alice's password still works (and asks for her code).
    const password = await core.signIn.password(
      { clientId: 'service-admin', username: 'alice', password: 'pw' },
      BROWSER,
      '10.0.0.1',
    )
    expect(password).toMatchObject({ ok: true, value: { step: 'second_factor' } })
  })

  it('refuses every code of a person with no confirmed factor', async () => {
    const { core, actor, login, principalOf } = world()
    expect(await core.mfa.verify('alice', '123456', actor)).toEqual({
      ok: false,
      error: { code: 'invalid_code' },
    })
    const principal = await principalOf(await login('alice'))
    await core.mfa.startTotp(principal)
    expect(await core.mfa.verify('alice', '123456', actor)).toEqual({
      ok: false,
      error: { code: 'invalid_code' },
    })
  })
})

describe('second factor: removal', () => {
  const MINUTE = 60_000
  const again = {
    ok: false,
    error: { code: 'reauthentication_required', minutes: 10, action: 'remove_factor' },
  }

  it('removes another person’s factors for a person with * whose own sign-in is recent and used a second factor, ending that person’s sessions, audited', async () => {
    const { core, enrol, login, signedInWith, principalOf, events } = world()
    const { principal: alice, token } = await enrol('alice')
    const admin = await principalOf(await signedInWith('admin', 'password_totp'))
    expect(await core.mfa.remove(admin, 'alice', ADDRESS)).toEqual({ ok: true, value: true })
    expect(await core.mfa.status(alice)).toEqual(NO_FACTOR)
    expect((await core.authenticate(await login('admin'))).ok).toBe(true)
    expect((await core.authenticate(token)).ok).toBe(false)
    expect(events.ofType('mfa.removed')).toMatchObject([
      { username: 'admin', owner: 'alice', factors: 'all', sessionsEnded: 1 },
    ])
    expect(await core.mfa.remove(admin, 'alice', ADDRESS)).toEqual({ ok: true, value: false })
    expect(await core.mfa.required('alice')).toBe(false)
  })

  it('refuses another person’s factors to a person without *, whatever their sign-in', async () => {
    const { core, enrol, signedInWith, principalOf } = world()
    await enrol('admin')
    const alice = await principalOf(await signedInWith('alice', 'passkey'))
    expect(await core.mfa.remove(alice, 'admin', ADDRESS)).toEqual({
      ok: false,
      error: { code: 'forbidden', permission: '*' },
    })
    expect(await core.mfa.required('admin')).toBe(true)
  })

  it('refuses every removal to less than a second factor: an API token with *, a password alone, the provider, an older sign-in', async () => {
    const { core, clock, enrol, login, signedInWith, principalOf, events } = world()
    await enrol('alice')
    const password = await principalOf(await login('admin'))
    const api = await core.tokens.create(password, { name: 'automation', scope: '*' }, ADDRESS)
    if (!api.ok) throw new Error(api.error.code)
    const token = await principalOf(api.value.token)
    expect(token.permissions).toEqual(['*'])
    const recovery = await principalOf(await signedInWith('admin', 'password_recovery_code'))
    const notOwn = { ok: false, error: { code: 'forbidden', permission: 'session' } }
    expect(await core.mfa.remove(token, 'alice', ADDRESS)).toEqual(notOwn)
    expect(await core.mfa.remove({ ...recovery, audience: 'fleet' }, 'alice', ADDRESS)).toEqual(notOwn)
    expect(await core.mfa.removeTotp(token, ADDRESS)).toEqual(notOwn)
    expect(await core.mfa.remove(password, 'alice', ADDRESS)).toEqual(again)
    expect(await core.mfa.remove({ ...recovery, signIn: 'provider' }, 'alice', ADDRESS)).toEqual(again)
    expect(await core.mfa.remove({ ...recovery, signIn: null }, 'alice', ADDRESS)).toEqual(again)
    clock.advance(10 * MINUTE + 1)
    expect(await core.mfa.remove(recovery, 'alice', ADDRESS)).toEqual(again)
    expect(await core.mfa.required('alice')).toBe(true)
    expect(events.ofType('mfa.removed')).toEqual([])
    // A sign-in with a second factor just now may.
    const fresh = await principalOf(await signedInWith('admin', 'password_recovery_code'))
    expect(await core.mfa.remove(fresh, 'alice', ADDRESS)).toEqual({ ok: true, value: true })
  })

  it('lets a person remove their own authenticator app, keeping their passkeys, or all their factors, with a second-factor sign-in', async () => {
    const { core, enrol, login, signedInWith, principalOf, events } = world()
    const { secret } = await enrol('alice')
    expect(secret).not.toBe('')
    const other = await signedInWith('alice', 'password_totp')
    const own = await principalOf(await signedInWith('alice', 'password_totp'))
    expect(await core.mfa.removeTotp(own, ADDRESS)).toEqual({ ok: true, value: true })
    expect(await core.mfa.status(own)).toEqual(NO_FACTOR)
    expect((await core.authenticate(other)).ok).toBe(false)
    expect((await core.authenticate(await signedInWith('alice', 'password'))).ok).toBe(true)
    expect(await core.mfa.removeTotp(own, ADDRESS)).toEqual({ ok: true, value: false })
    expect(await core.mfa.remove(own, 'alice', ADDRESS)).toEqual({ ok: true, value: false })
    expect(events.ofType('mfa.removed')).toMatchObject([
      { username: 'alice', owner: 'alice', factors: 'totp', sessionsEnded: 2 },
    ])
    await login('alice')
  })

  it('resets a person’s factors from the command line, with no session, audited with no actor', async () => {
    const { core, enrol, events } = world()
    await enrol('alice')
    expect(await core.mfa.reset('alice')).toBe(true)
    expect(await core.mfa.required('alice')).toBe(false)
    expect(await core.mfa.reset('alice')).toBe(false)
    expect(events.ofType('mfa.removed')).toMatchObject([
      { username: null, clientId: null, address: null, owner: 'alice', factors: 'all' },
    ])
  })
})

describe('second factors of people of the identity provider', () => {
  it('cannot be set up: a factor of flowadmin’s could never sign them in', async () => {
    const { core, login, principalOf } = world()
    const session = await principalOf(await login('alice'))
    const person = { ...session, username: 'zoe', provider: 'Example ID', signIn: 'provider' as const }
    const refused = { ok: false, error: { code: 'provider_sign_in' } }
    expect(await core.mfa.startTotp(person)).toEqual(refused)
    expect(await core.mfa.confirmTotp(person, '123456', ADDRESS)).toEqual(refused)
    expect(await core.passkeys.registrationOptions(person)).toEqual(refused)
    expect(await core.passkeys.register(person, 'key', {}, ADDRESS)).toEqual(refused)
    // A session saved before sessions recorded their provider is known by its method alone.
    expect(await core.mfa.startTotp({ ...session, signIn: 'provider' })).toEqual(refused)
  })

  it('people of the directory can: they sign in with their password on flowadmin’s page', async () => {
    const { core, login, principalOf } = world()
    const session = await principalOf(await login('alice'))
    const person = { ...session, provider: 'Example directory', signIn: 'password' as const }
    expect(await core.mfa.startTotp(person)).toMatchObject({ ok: true })
    // One whose session says nothing of how it signed in but names a provider is refused.
    expect(await core.mfa.startTotp({ ...person, signIn: null })).toEqual({
      ok: false,
      error: { code: 'provider_sign_in' },
    })
  })
})

describe('sign-in in two steps', () => {
  const passwordOf = (username: string) => ({ clientId: 'service-admin', username, password: 'pw' })

  it('records how each session signed in: the password grant says password, an API token nothing', async () => {
    const { core, login, principalOf, signInOf } = world()
    const token = await login('alice')
    expect(await signInOf(token)).toBe('password')
    const api = await core.tokens.create(await principalOf(token), { name: 'ci' }, ADDRESS)
    if (!api.ok) throw new Error(api.error.code)
    expect(api.value.view.signIn).toBeNull()
    expect(await signInOf(api.value.token)).toBeNull()
  })

  it('verifies a person without a second factor at once', async () => {
    const { core, events } = world()
    const step = await core.signIn.password(passwordOf('alice'), BROWSER, ADDRESS, 'Firefox')
    if (!step.ok || step.value.step !== 'verified') throw new Error('not signed in')
    expect(step.value.person).toMatchObject({ user: { username: 'alice' }, method: 'password' })
    expect(events.ofType('login.succeeded')).toMatchObject([{ username: 'alice', address: ADDRESS }])
  })

  it('asks a person with TOTP for a code, then gives the token; a ticket serves once', async () => {
    const { core, clock, totp, enrol, events, stores } = world()
    const { secret } = await enrol('alice')
    const before = (await stores.tokens.list('alice')).length
    const succeededBefore = events.ofType('login.succeeded').length
    const step = await core.signIn.password(passwordOf('alice'), BROWSER, ADDRESS, 'Firefox')
    if (!step.ok || step.value.step !== 'second_factor') throw new Error('no second factor asked')
    expect(step.value).toEqual({
      step: 'second_factor',
      totp: true,
      passkey: false,
      ticket: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      expiresIn: 300,
    })
    // Nothing issued yet, and the store holds no ticket, only its hash.
    expect((await stores.tokens.list('alice')).length).toBe(before)
    expect(events.ofType('login.succeeded')).toHaveLength(succeededBefore)
    expect(await stores.factors.takePendingSignIn(step.value.ticket, clock.now())).toBeNull()

    clock.advance(STEP)
    const code = totp.codeAt(secret, clock.now())
    const done = await core.signIn.secondFactor(BROWSER, step.value.ticket, code, ADDRESS)
    if (done.step !== 'verified') throw new Error(done.step)
    expect(done.person).toMatchObject({
      user: { username: 'alice', permissions: ['read'] },
      method: 'password_totp',
    })
    expect(events.ofType('mfa.succeeded').at(-1)).toMatchObject({ username: 'alice', factor: 'totp' })
    expect(events.ofType('login.succeeded')).toHaveLength(succeededBefore + 1)
    expect(await core.signIn.secondFactor(BROWSER, step.value.ticket, code, ADDRESS)).toEqual({
      step: 'expired',
    })
  })

  it('takes a ticket only with the cookie of the browser it was given to', async () => {
    const { core, enrol } = world()
    await enrol('alice')
    const step = await core.signIn.password(passwordOf('alice'), BROWSER, ADDRESS)
    if (!step.ok || step.value.step !== 'second_factor') throw new Error('no second factor asked')
    expect(await core.signIn.secondFactor('another-browser', step.value.ticket, '123456', ADDRESS)).toEqual({
      step: 'expired',
    })
  })

  it('goes on with a new ticket after a wrong or replayed code, and never takes the old one again', async () => {
    const { core, clock, totp, enrol, events } = world()
    const { secret } = await enrol('alice')
    clock.advance(STEP)
    const used = totp.codeAt(secret, clock.now())
    const first = await core.signIn.password(passwordOf('alice'), BROWSER, ADDRESS)
    if (!first.ok || first.value.step !== 'second_factor') throw new Error('no second factor asked')
    expect((await core.signIn.secondFactor(BROWSER, first.value.ticket, used, ADDRESS)).step).toBe('verified')

    const second = await core.signIn.password(passwordOf('alice'), BROWSER, ADDRESS)
    if (!second.ok || second.value.step !== 'second_factor') throw new Error('no second factor asked')
    const replayed = await core.signIn.secondFactor(BROWSER, second.value.ticket, used, ADDRESS)
    if (replayed.step !== 'retry') throw new Error(replayed.step)
    expect(replayed.error).toEqual({ code: 'invalid_code' })
    expect(replayed.ticket).not.toBe(second.value.ticket)
    expect(events.ofType('mfa.failed').at(-1)).toMatchObject({ reason: 'replayed' })
    const wrong = await core.signIn.secondFactor(BROWSER, replayed.ticket, '000000', ADDRESS)
    if (wrong.step !== 'retry') throw new Error(wrong.step)
    expect(await core.signIn.secondFactor(BROWSER, replayed.ticket, used, ADDRESS)).toEqual({
      step: 'expired',
    })
    clock.advance(STEP)
    const fresh = await core.signIn.secondFactor(
      BROWSER,
      wrong.ticket,
      totp.codeAt(secret, clock.now()),
      ADDRESS,
    )
    expect(fresh.step).toBe('verified')
  })

  it('takes a recovery code once, and refuses a sign-in past its time or whose user is gone', async () => {
    const { core, clock, enrol } = world()
    const { recoveryCodes } = await enrol('alice')
    const ticketOf = async () => {
      const step = await core.signIn.password(passwordOf('alice'), BROWSER, ADDRESS)
      if (!step.ok || step.value.step !== 'second_factor') throw new Error('no second factor asked')
      return step.value.ticket
    }
    const recovery = recoveryCodes[0] ?? ''
    const recovered = await core.signIn.secondFactor(BROWSER, await ticketOf(), recovery, ADDRESS)
    expect(recovered).toMatchObject({ step: 'verified', person: { method: 'password_recovery_code' } })
    expect((await core.signIn.secondFactor(BROWSER, await ticketOf(), recovery, ADDRESS)).step).toBe('retry')

    const late = await ticketOf()
    clock.advance(300_000)
    expect(await core.signIn.secondFactor(BROWSER, late, recoveryCodes[1] ?? '', ADDRESS)).toEqual({
      step: 'expired',
    })

    const orphan = await ticketOf()
    await core.setUsers([])
    expect(await core.signIn.secondFactor(BROWSER, orphan, recoveryCodes[1] ?? '', ADDRESS)).toEqual({
      step: 'expired',
    })
    expect(await core.signIn.secondFactor(BROWSER, 'not-a-ticket', '123456', ADDRESS)).toEqual({
      step: 'expired',
    })
  })

  it('refuses a wrong password as the password grant does, with no ticket', async () => {
    const { core, enrol } = world()
    await enrol('alice')
    expect(
      await core.signIn.password({ ...passwordOf('alice'), password: 'wrong' }, BROWSER, ADDRESS),
    ).toEqual({
      ok: false,
      error: { code: 'invalid_credentials' },
    })
  })

  it('throttles wrong codes per user: the sign-in goes on, answered throttled', async () => {
    const { core, enrol } = world()
    await enrol('alice')
    const step = await core.signIn.password(passwordOf('alice'), BROWSER, ADDRESS)
    if (!step.ok || step.value.step !== 'second_factor') throw new Error('no second factor asked')
    let ticket = step.value.ticket
    for (let i = 0; i < 5; i++) {
      const answer = await core.signIn.secondFactor(BROWSER, ticket, '000000', ADDRESS)
      if (answer.step !== 'retry') throw new Error(answer.step)
      expect(answer.error).toEqual({ code: 'invalid_code' })
      ticket = answer.ticket
    }
    const throttled = await core.signIn.secondFactor(BROWSER, ticket, '000000', ADDRESS)
    expect(throttled).toMatchObject({ step: 'retry', error: { code: 'throttled' } })
  })
})

describe('adding a second factor needs a recent sign-in', () => {
  it('refuses a session older than 10 minutes, and lets one just signed in', async () => {
    const { core, clock, login, principalOf } = world()
    const old = await principalOf(await login('alice'))
    clock.advance(10 * 60_000 + 1)
    const refused = {
      ok: false,
      error: { code: 'reauthentication_required', minutes: 10, action: 'add_factor' },
    }
    expect(await core.mfa.startTotp(old)).toEqual(refused)
    expect(await core.passkeys.registrationOptions(old)).toEqual(refused)
    const fresh = await principalOf(await login('alice'))
    expect((await core.mfa.startTotp(fresh)).ok).toBe(true)
  })
})

describe('the password grant, for people with a second factor', () => {
  const grant = (username: string) => ({
    grantType: 'password',
    clientId: 'service-admin',
    username,
    password: 'pw',
    scope: 'read',
  })

  it('is refused (mfa_required) once the person has a factor, and audited; the wrong password stays wrong', async () => {
    const { core, enrol, events } = world()
    await enrol('alice')
    expect(await core.login(grant('alice'), ADDRESS)).toEqual({ ok: false, error: { code: 'mfa_required' } })
    expect(events.ofType('login.mfa_required')).toMatchObject([{ username: 'alice', address: ADDRESS }])
    // A resource server checking its editor's login form is refused alike.
    const asFleet = await core.loginAsClient(
      { id: 'fleet', secret: 'fleet-secret' },
      { ...grant('alice'), clientId: 'fleet' },
      ADDRESS,
    )
    expect(asFleet).toEqual({ ok: false, error: { code: 'mfa_required' } })
    // Nothing is learnt without the password.
    expect(await core.login({ ...grant('alice'), password: 'nope' }, ADDRESS)).toEqual({
      ok: false,
      error: { code: 'invalid_credentials' },
    })
    // Someone without a factor is not concerned.
    expect((await core.login({ ...grant('admin'), scope: '*' }, ADDRESS)).ok).toBe(true)
  })

  it('is refused to whoever the policy names, with or without a factor', async () => {
    const admins = world({ require: ['*'] })
    expect(await admins.core.login({ ...grant('admin'), scope: '*' }, ADDRESS)).toEqual({
      ok: false,
      error: { code: 'mfa_required' },
    })
    expect((await admins.core.login(grant('alice'), ADDRESS)).ok).toBe(true)
    const everyone = world({ require: 'everyone' })
    expect(await everyone.core.login(grant('alice'), ADDRESS)).toEqual({
      ok: false,
      error: { code: 'mfa_required' },
    })
  })
})

describe('the sign-in page: policy, enrolment and the handover', () => {
  const passwordOf = (username: string) => ({ clientId: 'service-editor', username, password: 'pw' })

  it('asks a person the policy names and who has no factor to enrol, then shows recovery codes, then signs in', async () => {
    const { core, clock, totp, events, signedInWith, principalOf } = world({ require: 'everyone' })
    const step = await core.signIn.password(passwordOf('alice'), BROWSER, ADDRESS)
    if (!step.ok || step.value.step !== 'enrol') throw new Error('no enrolment asked')
    expect(step.value.enrolment.secret).not.toBe('')
    // A wrong first code: a new secret, a new ticket; the old ticket is spent.
    const wrong = await core.signIn.enrol(BROWSER, step.value.ticket, '000000', ADDRESS)
    if (wrong.step !== 'retry') throw new Error(wrong.step)
    expect(wrong.enrolment.secret).not.toBe(step.value.enrolment.secret)
    expect(await core.signIn.enrol(BROWSER, step.value.ticket, '000000', ADDRESS)).toEqual({
      step: 'expired',
    })
    clock.advance(STEP)
    const enrolled = await core.signIn.enrol(
      BROWSER,
      wrong.ticket,
      totp.codeAt(wrong.enrolment.secret, clock.now()),
      ADDRESS,
    )
    if (enrolled.step !== 'enrolled') throw new Error(enrolled.step)
    expect(enrolled.recoveryCodes).toHaveLength(10)
    expect(events.ofType('mfa.enrolled')).toMatchObject([{ username: 'alice', atSignIn: true }])
    const done = await core.signIn.finishEnrolment(BROWSER, enrolled.ticket, ADDRESS)
    expect(done).toMatchObject({
      step: 'verified',
      person: { user: { username: 'alice' }, method: 'password_totp' },
    })
    expect(await core.signIn.finishEnrolment(BROWSER, enrolled.ticket, ADDRESS)).toEqual({ step: 'expired' })
    // The next sign-in asks for the code; the person sees afterwards that it was set up at a sign-in.
    const next = await core.signIn.password(passwordOf('alice'), BROWSER, ADDRESS)
    expect(next).toMatchObject({ ok: true, value: { step: 'second_factor', totp: true } })
    const alice = await principalOf(await signedInWith('alice', 'password_totp'))
    expect(await core.mfa.status(alice)).toMatchObject({
      totp: 'enrolled',
      enrolledAt: clock.now(),
      enrolledAtSignIn: true,
    })
  })

  it("hands a console's code to the browser whose sign-in it was, worth the user's rights when traded", async () => {
    const { core, stores, signInOf } = world()
    const exchange = core.signIn.exchange
    if (exchange === null) throw new Error('no handover')
    const owner = {
      username: 'alice',
      permissions: ['read'],
      fingerprint: '',
      method: 'password_totp' as const,
    }
    const handOver = async () => {
      const code = await core.signIn.handOver(owner, { binding: BROWSER, authorization: null }, ADDRESS)
      if (!code.ok) throw new Error(code.error)
      return code.value
    }
    // Another browser's cookie does not trade it, and the refusal spends it.
    const first = await handOver()
    expect((await exchange('another-browser', first, 'service-editor', ADDRESS, null)).ok).toBe(false)
    expect((await exchange(BROWSER, first, 'service-editor', ADDRESS, null)).ok).toBe(false)
    const code = await handOver()
    const issued = await exchange(BROWSER, code, 'service-editor', ADDRESS, null)
    if (!issued.ok) throw new Error(issued.error.message)
    const principal = await core.authenticate(issued.value.accessToken)
    expect(principal).toMatchObject({ ok: true, value: { username: 'alice', permissions: ['read'] } })
    expect(await signInOf(issued.value.accessToken)).toBe('password_totp')
    expect(await stores.tokens.list('alice')).toHaveLength(1)
    // A code of a user removed meanwhile is worth nothing.
    const late = await handOver()
    await core.setUsers([])
    expect(await exchange(BROWSER, late, 'service-editor', ADDRESS, null)).toEqual({
      ok: false,
      error: { code: 'invalid_grant', message: 'The code is unknown, used or expired: sign in again' },
    })
    expect(await stores.tokens.list('alice')).toHaveLength(0)
  })
})
