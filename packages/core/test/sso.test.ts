import { createMemoryStores } from '@flowadmin/adapter-memory'
import { createCore, operator, permissionsOfGroups } from '@flowadmin/core'
import {
  createEventRecorder,
  createFakeIdentityProvider,
  createFakeLoader,
  createFakeTypeUsage,
  createFixedClock,
  createPlainHasher,
  createSeededRandom,
} from '@flowadmin/testkit'
import { describe, expect, it } from 'vitest'

const MAP = { 'nr-admins': '*', 'nr-deployers': ['flows.write', 'nodes.read'], 'nr-viewers': 'read' } as const

function world(options: { users?: boolean; maxSessionSeconds?: number } = {}) {
  const clock = createFixedClock()
  const hasher = createPlainHasher()
  const events = createEventRecorder()
  const fake = createFakeIdentityProvider('https://id.example/realms/ops')
  const core = createCore(
    {
      stores: createMemoryStores(),
      verifier: hasher,
      loader: createFakeLoader(),
      typeUsage: createFakeTypeUsage(),
      events,
      clock,
      random: createSeededRandom(11),
      identityProvider: fake.provider,
    },
    {
      adminAuth: {
        users: options.users ? [{ username: 'admin', password: hasher.hash('pw'), permissions: '*' }] : [],
        oidc: {
          label: 'Sign in with Example ID',
          permissions: { claim: 'groups', map: MAP },
          maxSessionSeconds: options.maxSessionSeconds,
        },
      },
    },
  )
  if (core.sso === null) throw new Error('sso not configured')
  const sso = core.sso
  /** A whole sign-in: start, the provider's answer, the exchange; the token or the refusal. */
  async function signIn(subject: string, claims: Record<string, unknown>) {
    const started = await sso.begin('https://fa.example/auth/strategy/callback', '/', '10.0.0.1')
    if (!started.ok) throw new Error(started.error.message)
    const state = new URL(started.value.url).searchParams.get('state')
    fake.signsIn(subject, claims)
    const completed = await sso.complete(
      started.value.binding,
      `https://fa.example/cb?code=c&state=${state}`,
      '10.0.0.1',
    )
    if (!completed.ok) return completed
    return sso.exchange(started.value.binding, completed.value.code, 'service-editor', '10.0.0.1', null)
  }
  return { core, sso, clock, events, fake, signIn }
}

describe('groups to permissions', () => {
  it('is the union of the mapped groups, * alone when any gives it, nothing for unknown groups', () => {
    expect(permissionsOfGroups(['nr-deployers', 'nr-viewers', 'other'], MAP)).toEqual([
      'flows.write',
      'nodes.read',
      'read',
    ])
    expect(permissionsOfGroups(['nr-viewers', 'nr-admins'], MAP)).toEqual(['*'])
    expect(permissionsOfGroups('nr-viewers', MAP)).toEqual(['read'])
    expect(permissionsOfGroups(['toString', 'constructor'], MAP)).toEqual([])
    expect(permissionsOfGroups(undefined, MAP)).toEqual([])
    expect(permissionsOfGroups([1, null], MAP)).toEqual([])
  })
})

describe('single sign-on in the core', () => {
  it('announces the strategy alone, or the button beside the credentials prompts', () => {
    expect(world().core.loginScheme()).toEqual({
      type: 'strategy',
      prompts: [{ type: 'button', label: 'Sign in with Example ID', url: '/auth/strategy' }],
    })
    const both = world({ users: true }).core.loginScheme()
    expect(both).toMatchObject({
      type: 'credentials',
      sso: { type: 'button', label: 'Sign in with Example ID', url: '/auth/strategy' },
    })
  })

  it('hands a token with the mapped permissions, living at most maxSessionSeconds', async () => {
    const { core, signIn, events } = world({ maxSessionSeconds: 600 })
    const issued = await signIn('sub-alice', { preferred_username: 'alice', groups: ['nr-deployers'] })
    if (!issued.ok) throw new Error(issued.error.message)
    expect(issued.value.expiresIn).toBe(600)
    const principal = await core.authenticate(issued.value.accessToken)
    expect(principal).toEqual({
      ok: true,
      value: expect.objectContaining({
        kind: 'user',
        username: 'alice',
        permissions: ['flows.write', 'nodes.read'],
        provider: 'Sign in with Example ID',
      }),
    })
    expect(events.ofType('sso.succeeded')).toHaveLength(1)
  })

  it('refuses a person whose groups map to nothing, and ends the tokens they held', async () => {
    const { core, signIn, events } = world()
    const first = await signIn('sub-bob', { preferred_username: 'bob', groups: ['nr-viewers'] })
    if (!first.ok) throw new Error('first sign-in refused')
    const second = await signIn('sub-bob', { preferred_username: 'bob', groups: ['marketing'] })
    expect(second).toEqual({
      ok: false,
      error: {
        reason: 'no_permissions',
        message: expect.stringContaining('your groups (marketing) give no permission here'),
      },
    })
    expect((await core.authenticate(first.value.accessToken)).ok).toBe(false)
    expect(events.ofType('sso.refused')).toEqual([
      expect.objectContaining({ reason: 'no_permissions', username: 'bob' }),
    ])
  })

  it('narrows the tokens a person holds when they sign in with fewer groups', async () => {
    const { core, signIn } = world()
    const admin = await signIn('sub-carol', { preferred_username: 'carol', groups: ['nr-admins'] })
    if (!admin.ok) throw new Error('refused')
    await signIn('sub-carol', { preferred_username: 'carol', groups: ['nr-viewers'] })
    const principal = await core.authenticate(admin.value.accessToken)
    expect(principal.ok && principal.value.permissions).toEqual(['read'])
  })

  it('takes a one-time code once, from the browser that started, within 30 s', async () => {
    const { sso, fake, clock } = world()
    const start = async () => {
      const started = await sso.begin('https://fa.example/cb', '/', null)
      if (!started.ok) throw new Error('begin')
      fake.signsIn('sub-dan', { preferred_username: 'dan', groups: 'nr-viewers' })
      const state = new URL(started.value.url).searchParams.get('state')
      const done = await sso.complete(started.value.binding, `https://fa.example/cb?state=${state}`, null)
      if (!done.ok) throw new Error('complete')
      return { binding: started.value.binding, code: done.value.code }
    }
    const once = await start()
    expect((await sso.exchange(once.binding, once.code, 'service-editor', 'a', null)).ok).toBe(true)
    expect(await sso.exchange(once.binding, once.code, 'service-editor', 'a', null)).toEqual({
      ok: false,
      error: { code: 'invalid_grant', message: 'The code is unknown, used or expired: sign in again' },
    })
    const elsewhere = await start()
    expect(await sso.exchange('another-browser', elsewhere.code, 'service-editor', 'a', null)).toEqual({
      ok: false,
      error: { code: 'invalid_grant', message: 'The code was not issued to this browser: sign in again' },
    })
    const late = await start()
    clock.advance(30_000)
    expect((await sso.exchange(late.binding, late.code, 'service-editor', 'a', null)).ok).toBe(false)
  })

  it('completes a started sign-in once, and refuses a wrong state', async () => {
    const { sso, fake } = world()
    const started = await sso.begin('https://fa.example/cb', '/', null)
    if (!started.ok) throw new Error('begin')
    fake.signsIn('sub-eve', { preferred_username: 'eve', groups: 'nr-viewers' })
    const wrong = await sso.complete(started.value.binding, 'https://fa.example/cb?state=forged', null)
    expect(wrong).toEqual({ ok: false, error: { reason: 'invalid', message: 'state mismatch' } })
    const again = await sso.complete(started.value.binding, 'https://fa.example/cb?state=forged', null)
    expect(again.ok || again.error.message).toMatch(/not started in this browser, was already used/)
  })

  it('ends every token of the person a back-channel logout names', async () => {
    const { core, sso, signIn, fake } = world()
    const a = await signIn('sub-fay', { preferred_username: 'fay', groups: ['nr-viewers'] })
    const b = await signIn('sub-fay', { preferred_username: 'fay', groups: ['nr-viewers'] })
    const other = await signIn('sub-gus', { preferred_username: 'gus', groups: ['nr-viewers'] })
    if (!a.ok || !b.ok || !other.ok) throw new Error('refused')
    fake.logsOut('sub-fay', 's1')
    expect(await sso.logout('logout-token', null)).toEqual({ ok: true, value: 2 })
    expect((await core.authenticate(a.value.accessToken)).ok).toBe(false)
    expect((await core.authenticate(b.value.accessToken)).ok).toBe(false)
    expect((await core.authenticate(other.value.accessToken)).ok).toBe(true)
  })

  it('lets the command line make an API token for a signed-in person, within their rights and session', async () => {
    const { core, signIn, clock } = world({ maxSessionSeconds: 3600 })
    const issued = await signIn('sub-ida', { preferred_username: 'ida', groups: ['nr-deployers'] })
    if (!issued.ok) throw new Error('refused')
    clock.advance(600_000)
    const made = await core.tokens.create(operator, { name: 'ci', user: 'ida' }, null)
    if (!made.ok) throw new Error(JSON.stringify(made.error))
    expect(made.value.view).toMatchObject({
      user: 'ida',
      kind: 'api',
      scope: ['flows.write', 'nodes.read'],
      provider: 'Sign in with Example ID',
      expiresAt: clock.now() + 3_000_000,
    })
    const wider = await core.tokens.create(operator, { name: 'ci', user: 'ida', scope: '*' }, null)
    expect(wider.ok || wider.error.code).toBe('invalid_scope')
    const longer = await core.tokens.create(operator, { name: 'ci', user: 'ida', expiresIn: 86_400 }, null)
    expect(longer.ok || longer.error).toEqual({
      code: 'invalid_request',
      message:
        'expires_in must be at most 3000 seconds: a token of a single sign-on ends with the session it was created in',
    })
    const unknown = await core.tokens.create(operator, { name: 'ci', user: 'nobody' }, null)
    expect(unknown.ok || unknown.error).toEqual({ code: 'invalid_request', message: 'No such user: nobody' })
  })

  it('keeps signed-in people’s tokens when the settings’ users are purged', async () => {
    const { core, signIn } = world({ users: true })
    const issued = await signIn('sub-hal', { preferred_username: 'hal', groups: ['nr-viewers'] })
    if (!issued.ok) throw new Error('refused')
    await core.tokens.purgeRemovedUsers()
    expect((await core.authenticate(issued.value.accessToken)).ok).toBe(true)
  })
})
