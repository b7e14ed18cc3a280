import { createMemoryStores } from '@flowadmin/adapter-memory'
import { ONE_TIME_CODE_MS, operator, permissionsOfGroups, SIGN_IN_BOUNDS, SIGN_IN_MS } from '@flowadmin/core'
import { createCoreWorld, createFakeIdentityProvider } from '@flowadmin/testkit'
import { describe, expect, it } from 'vitest'

const CALLBACK = 'https://fa.example/auth/strategy/callback'
const FLEET_REDIRECT = 'https://nodered.example/auth/strategy/callback'
/** A PKCE verifier and its S256 challenge (base64url of its SHA-256). */
const VERIFIER = 'dBjftJeZ4CVP-mJ0kn1_Hw6rCNBlTmh5uZaW2Yx52vo'
const CHALLENGE = 'nF-WeNg1AWSxdD8mB442ntqo08DNc2v1tzWpInIV00Y'

const MAP = { 'nr-admins': '*', 'nr-deployers': ['flows.write', 'nodes.read'], 'nr-viewers': 'read' } as const

function world(
  options: {
    users?: boolean
    maxSessionSeconds?: number
    /** Another instance's stores, to share them. */
    stores?: ReturnType<typeof createMemoryStores>
    seed?: number
  } = {},
) {
  const fake = createFakeIdentityProvider('https://id.example/realms/ops')
  const { core, clock, events, stores } = createCoreWorld({
    stores: options.stores ?? createMemoryStores(),
    seed: options.seed ?? 11,
    identityProvider: fake.provider,
    adminAuth: (hasher) => ({
      resourceServers: [{ id: 'fleet', secret: hasher.hash('fleet-secret'), redirectUris: [FLEET_REDIRECT] }],
      users: options.users ? [{ username: 'admin', password: hasher.hash('pw'), permissions: '*' }] : [],
      oidc: {
        label: 'Sign in with Example ID',
        permissions: { claim: 'groups', map: MAP },
        maxSessionSeconds: options.maxSessionSeconds,
      },
    }),
  })
  if (core.sso === null || core.signIn.exchange === null) throw new Error('sso not configured')
  const exchange = core.signIn.exchange
  /** Single sign-on, with the trade of its codes (the handover it shares with the sign-in page). */
  const sso = {
    ...core.sso,
    exchange,
    redeem: (clientId: string, code: string, redirectUri: string, codeVerifier: string, address: string) =>
      core.redeemCode(
        { id: clientId, secret: 'fleet-secret' },
        { clientId, code, redirectUri, codeVerifier },
        address,
      ),
  }
  /** A whole sign-in: start, the provider's answer, the exchange; the token or the refusal. */
  async function signIn(subject: string, claims: Record<string, unknown>) {
    const started = await sso.begin('https://fa.example/auth/strategy/callback', '/', '10.0.0.1')
    if (!started.ok) throw new Error(started.error.message)
    const state = new URL(started.value.url).searchParams.get('state')
    fake.signsIn(subject, claims)
    const completed = await sso.complete(
      started.value.binding,
      started.value.carried,
      `https://fa.example/cb?code=c&state=${state}`,
      '10.0.0.1',
    )
    if (!completed.ok) return completed
    return sso.exchange(started.value.binding, completed.value.code, 'service-editor', '10.0.0.1', null)
  }
  return { core, sso, clock, events, fake, signIn, stores }
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
    if (!principal.ok) throw new Error('not signed in')
    const listed = await core.tokens.list(principal.value, null, null)
    expect(listed.ok && listed.value).toMatchObject([
      { current: true, kind: 'session', signIn: 'provider', provider: 'Sign in with Example ID' },
    ])
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
      const done = await sso.complete(
        started.value.binding,
        started.value.carried,
        `https://fa.example/cb?state=${state}`,
        null,
      )
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

  it('completes a started sign-in once, refusing a wrong state, another browser and another address', async () => {
    const { sso, fake, events } = world()
    const started = await sso.begin('https://fa.example/cb', '/', '2001:db8::1')
    if (!started.ok) throw new Error('begin')
    const { binding, carried, url } = started.value
    const right = `https://fa.example/cb?state=${new URL(url).searchParams.get('state')}`
    fake.signsIn('sub-eve', { preferred_username: 'eve', groups: 'nr-viewers' })
    const wrong = await sso.complete(binding, carried, 'https://fa.example/cb?state=forged', '2001:db8::1')
    expect(wrong).toEqual({ ok: false, error: { reason: 'invalid', message: 'state mismatch' } })
    // Another browser's cookie, a start it did not carry, another /64: not this sign-in.
    const notStarted = /not started in this browser, was already used/
    for (const [otherBinding, otherCarried, address] of [
      ['another-browser', carried, '2001:db8::1'],
      [binding, `${carried.slice(0, 10)}x${carried.slice(11)}`, '2001:db8::1'],
      [binding, null, '2001:db8::1'],
      [binding, carried, '2001:db8:0:1::1'],
    ] as const) {
      const refused = await sso.complete(otherBinding, otherCarried, right, address)
      expect(refused.ok || refused.error.message).toMatch(notStarted)
    }
    // A refused answer did not spend it: the right one completes it, once.
    expect((await sso.complete(binding, carried, right, '2001:db8::abcd')).ok).toBe(true)
    const again = await sso.complete(binding, carried, right, '2001:db8::1')
    expect(again.ok || again.error.message).toMatch(notStarted)
    expect(events.ofType('sso.succeeded')).toHaveLength(1)
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
      signIn: null,
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

  it('refuses a person the provider names like a configured user, with a page that says why, and audits it', async () => {
    const { core, signIn, events } = world({ users: true })
    const refused = await signIn('sub-viewer', { preferred_username: 'admin', groups: ['nr-viewers'] })
    expect(refused).toEqual({
      ok: false,
      error: {
        reason: 'name_taken',
        message:
          'Your identity provider names you "admin", which is the name of a user configured in flowadmin itself, so you cannot sign in with it. Ask an administrator to rename one of the two.',
      },
    })
    expect(events.ofType('sso.refused')).toEqual([
      expect.objectContaining({ reason: 'name_taken', username: 'admin', address: '10.0.0.1' }),
    ])
    expect(await core.tokens.list(operator, 'admin', null)).toMatchObject({ ok: true, value: [] })
  })

  it('never lets a token of a signed-in person named like a configured user act: it ends at its first use', async () => {
    // Issued before the name was a configured user's (or before this rule): a viewer's token named admin.
    const { core, signIn, stores, events } = world({ users: true })
    const admin = await core.login(
      { grantType: 'password', clientId: 'service-editor', scope: '*', username: 'admin', password: 'pw' },
      '10.0.0.2',
    )
    if (!admin.ok) throw new Error('admin refused')
    const viewer = await signIn('sub-viewer', { preferred_username: 'viewa', groups: ['nr-viewers'] })
    if (!viewer.ok) throw new Error('refused')
    const [record] = await stores.tokens.list('viewa')
    if (record === undefined) throw new Error('no record')
    await stores.tokens.save({ ...record, username: 'admin' })
    const principal = await core.authenticate(viewer.value.accessToken)
    expect(principal.ok).toBe(false)
    expect(events.ofType('token.invalidated')).toEqual([
      expect.objectContaining({ owner: 'admin', reason: 'name_taken' }),
    ])
    // Admin's own session is untouched.
    expect((await core.authenticate(admin.value.accessToken)).ok).toBe(true)
  })

  it('binds a name to the identity that used it first: another subject claiming it is refused and acts on nothing', async () => {
    const { core, signIn, events } = world()
    const first = await signIn('sub-jo', { preferred_username: 'jo', groups: ['nr-admins'] })
    if (!first.ok) throw new Error('refused')
    const second = await signIn('sub-mallory', { preferred_username: 'jo', groups: ['nr-viewers'] })
    expect(second).toEqual({
      ok: false,
      error: {
        reason: 'name_taken',
        message:
          'Your identity provider names you "jo", but another account of the provider signed in here with that name first, so you cannot sign in with it. Ask an administrator.',
      },
    })
    expect(events.ofType('sso.refused')).toEqual([
      expect.objectContaining({ reason: 'name_taken', username: 'jo' }),
    ])
    // The first keeps their rights (not narrowed to the second's), and signs in again.
    const principal = await core.authenticate(first.value.accessToken)
    expect(principal.ok && principal.value.permissions).toEqual(['*'])
    expect((await signIn('sub-jo', { preferred_username: 'jo', groups: ['nr-admins'] })).ok).toBe(true)
  })

  it('takes each logout token once: a replay is refused and ends no new session', async () => {
    const { core, sso, signIn, fake } = world()
    const before = await signIn('sub-kim', { preferred_username: 'kim', groups: ['nr-viewers'] })
    if (!before.ok) throw new Error('refused')
    fake.logsOut('sub-kim', null, { tokenId: 'jti-1' })
    expect(await sso.logout('logout-token', null)).toEqual({ ok: true, value: 1 })
    const after = await signIn('sub-kim', { preferred_username: 'kim', groups: ['nr-viewers'] })
    if (!after.ok) throw new Error('refused')
    expect(await sso.logout('logout-token', null)).toEqual({
      ok: false,
      error: { reason: 'invalid', message: 'This logout token was received before (same jti): refused.' },
    })
    expect((await core.authenticate(after.value.accessToken)).ok).toBe(true)
  })

  it('takes the retry of a logout whose tokens could not be deleted as new, and ends them then', async () => {
    const { core, sso, signIn, fake, stores } = world()
    const issued = await signIn('sub-kit', { preferred_username: 'kit', groups: ['nr-viewers'] })
    if (!issued.ok) throw new Error('refused')
    // The store fails once at deleting (a database hiccup): the logout fails as a whole.
    const remove = stores.tokens.delete.bind(stores.tokens)
    let failures = 1
    stores.tokens.delete = async (id) => {
      if (failures-- > 0) throw new Error('connection lost')
      return remove(id)
    }
    fake.logsOut('sub-kit', null, { tokenId: 'jti-9' })
    await expect(sso.logout('logout-token', null)).rejects.toThrow('connection lost')
    expect((await core.authenticate(issued.value.accessToken)).ok).toBe(true)
    // The provider retries the same logout token: taken, and the token ends.
    expect(await sso.logout('logout-token', null)).toEqual({ ok: true, value: 1 })
    expect((await core.authenticate(issued.value.accessToken)).ok).toBe(false)
    expect(await sso.logout('logout-token', null)).toMatchObject({ ok: false, error: { reason: 'invalid' } })
  })

  it('forgets a logout token’s jti once the token would be refused anyway, when swept', async () => {
    const { core, sso, fake, clock } = world()
    fake.logsOut('sub-lu', null, { tokenId: 'jti-2', expiresAt: clock.now() + 330_000 })
    expect((await sso.logout('logout-token', null)).ok).toBe(true)
    expect(await core.sweep()).toMatchObject({ logoutTokens: 0 })
    clock.advance(330_000)
    expect(await core.sweep()).toMatchObject({ logoutTokens: 1 })
  })

  it('ends only the session a logout token’s sid names, of the person its sub names', async () => {
    const { core, sso, signIn, fake } = world()
    fake.signsIn('sub-mo', { preferred_username: 'mo', groups: ['nr-viewers'] }, 'laptop')
    const laptop = await signIn('sub-mo', { preferred_username: 'mo', groups: ['nr-viewers'] })
    const signInAt = async (sessionId: string) => {
      const started = await sso.begin('https://fa.example/cb', '/', null)
      if (!started.ok) throw new Error('begin')
      fake.signsIn('sub-mo', { preferred_username: 'mo', groups: ['nr-viewers'] }, sessionId)
      const state = new URL(started.value.url).searchParams.get('state')
      const done = await sso.complete(
        started.value.binding,
        started.value.carried,
        `https://fa.example/cb?state=${state}`,
        null,
      )
      if (!done.ok) throw new Error('complete')
      const issued = await sso.exchange(started.value.binding, done.value.code, 'service-editor', 'a', null)
      if (!issued.ok) throw new Error('exchange')
      return issued.value.accessToken
    }
    const phone = await signInAt('phone')
    const desk = await signInAt('desk')
    if (!laptop.ok) throw new Error('refused')
    fake.logsOut('sub-mo', 'phone')
    expect(await sso.logout('logout-token', null)).toEqual({ ok: true, value: 1 })
    expect((await core.authenticate(phone)).ok).toBe(false)
    expect((await core.authenticate(desk)).ok).toBe(true)
    fake.logsOut(null, 'desk')
    expect(await sso.logout('logout-token', null)).toEqual({ ok: true, value: 1 })
    expect((await core.authenticate(desk)).ok).toBe(false)
    // A sid of another person ends nothing of theirs.
    fake.logsOut('sub-other', 's1')
    expect(await sso.logout('logout-token', null)).toEqual({ ok: true, value: 0 })
  })
})

describe('names of tokens saved before names were bound', () => {
  /** Instances over one token store, each with a fresh SSO store: as before names were bound. */
  function before() {
    const tokens = createMemoryStores().tokens
    const fresh = () => ({ ...createMemoryStores(), tokens })
    return { tokens, fresh }
  }

  it('binds them to the identity of the oldest live token: another identity is refused and the first signs in again', async () => {
    const { fresh } = before()
    const old = world({ stores: fresh() })
    const a = await old.signIn('sub-a', { preferred_username: 'x', groups: ['nr-admins'] })
    if (!a.ok) throw new Error('refused')
    // The upgrade: the SSO store binds no name yet; the token store has A's token named x.
    const now = world({ stores: fresh(), seed: 2 })
    expect(await now.sso.bindNamesOfTokens()).toBe(0)
    const b = await now.signIn('sub-b', { preferred_username: 'x', groups: ['nr-viewers'] })
    expect(b).toMatchObject({ ok: false, error: { reason: 'name_taken' } })
    const principal = await now.core.authenticate(a.value.accessToken)
    expect(principal.ok && principal.value).toMatchObject({ username: 'x', permissions: ['*'] })
    expect(await now.core.tokens.list(operator, 'x', null)).toMatchObject({ ok: true, value: [{}] })
    expect((await now.signIn('sub-a', { preferred_username: 'x', groups: ['nr-admins'] })).ok).toBe(true)
    // A second run (another instance starting) changes nothing.
    expect(await now.sso.bindNamesOfTokens()).toBe(0)
    expect(await now.core.tokens.list(operator, 'x', null)).toMatchObject({ ok: true, value: [{}, {}] })
  })

  it('ends, audited, the tokens of a later identity that got the same name before names were bound', async () => {
    const { fresh } = before()
    const first = world({ stores: fresh() })
    const a = await first.signIn('sub-a', { preferred_username: 'x', groups: ['nr-viewers'] })
    if (!a.ok) throw new Error('refused')
    const second = world({ stores: fresh(), seed: 2 })
    second.clock.advance(60_000)
    const b = await second.signIn('sub-b', { preferred_username: 'x', groups: ['nr-admins'] })
    const other = await second.signIn('sub-c', { preferred_username: 'y', groups: ['nr-viewers'] })
    if (!b.ok || !other.ok) throw new Error('refused')
    // Upgraded, two instances over one store start at once: x is A's, B's token ends once.
    const stores = fresh()
    const [upgraded, beside] = [3, 4].map((seed) => world({ stores, seed })) as [World, World]
    upgraded.clock.advance(120_000)
    beside.clock.advance(120_000)
    const ended = await Promise.all([upgraded.sso.bindNamesOfTokens(), beside.sso.bindNamesOfTokens()])
    expect(ended[0] + ended[1]).toBe(1)
    expect([
      ...upgraded.events.ofType('token.invalidated'),
      ...beside.events.ofType('token.invalidated'),
    ]).toEqual([expect.objectContaining({ owner: 'x', reason: 'name_taken' })])
    expect((await upgraded.core.authenticate(b.value.accessToken)).ok).toBe(false)
    expect((await upgraded.core.authenticate(a.value.accessToken)).ok).toBe(true)
    expect((await upgraded.core.authenticate(other.value.accessToken)).ok).toBe(true)
    expect(await upgraded.core.tokens.list(operator, 'x', null)).toMatchObject({ ok: true, value: [{}] })
    expect(await upgraded.signIn('sub-b', { preferred_username: 'x', groups: ['nr-admins'] })).toMatchObject({
      ok: false,
      error: { reason: 'name_taken' },
    })
    expect((await upgraded.signIn('sub-a', { preferred_username: 'x', groups: ['nr-viewers'] })).ok).toBe(
      true,
    )
  })
})

describe('sign-ins shared by the instances of one store', () => {
  const stateOf = (url: string) => new URL(url).searchParams.get('state')

  it('finishes at one instance a sign-in started at another, and trades its code at a third, once', async () => {
    const stores = createMemoryStores()
    const [a, b, c] = [1, 2, 3].map((seed) => world({ stores, seed })) as [World, World, World]
    const started = await a.sso.begin(CALLBACK, '/tokens', '10.0.0.1')
    if (!started.ok) throw new Error(started.error.message)
    const { binding, carried, url } = started.value
    b.fake.signsIn('sub-ann', { preferred_username: 'ann', groups: ['nr-viewers'] })
    const done = await b.sso.complete(binding, carried, `${CALLBACK}?state=${stateOf(url)}`, '10.0.0.1')
    if (!done.ok) throw new Error(done.error.message)
    expect(done.value).toMatchObject({ returnTo: '/tokens', authorization: null })
    // The sign-in was taken: it completes nowhere again.
    c.fake.signsIn('sub-ann', { preferred_username: 'ann', groups: ['nr-viewers'] })
    const again = await c.sso.complete(binding, carried, `${CALLBACK}?state=${stateOf(url)}`, '10.0.0.1')
    expect(again.ok || again.error.reason).toBe('invalid')
    // From another browser at another instance, the code is spent and refused.
    const issued = await c.sso.exchange(binding, done.value.code, 'service-editor', '10.0.0.1', null)
    if (!issued.ok) throw new Error(issued.error.message)
    expect(await a.core.authenticate(issued.value.accessToken)).toMatchObject({
      ok: true,
      value: { username: 'ann', permissions: ['read'] },
    })
    expect((await b.sso.exchange(binding, done.value.code, 'service-editor', '10.0.0.1', null)).ok).toBe(
      false,
    )
  })

  it('trades a resource server’s code at exactly one of two instances asked at once', async () => {
    const stores = createMemoryStores()
    const [a, b] = [1, 2].map((seed) => world({ stores, seed })) as [World, World]
    const authorization = {
      clientId: 'fleet',
      redirectUri: FLEET_REDIRECT,
      codeChallenge: CHALLENGE,
      state: 's',
    }
    const started = await a.sso.begin(CALLBACK, '/', '10.0.0.1', authorization)
    if (!started.ok) throw new Error(started.error.message)
    b.fake.signsIn('sub-bo', { preferred_username: 'bo', groups: ['nr-admins'] })
    const done = await b.sso.complete(
      started.value.binding,
      started.value.carried,
      `${CALLBACK}?state=${stateOf(started.value.url)}`,
      '10.0.0.1',
    )
    if (!done.ok) throw new Error(done.error.message)
    expect(done.value.authorization).toEqual(authorization)
    const redeemAt = (instance: World) =>
      instance.sso.redeem('fleet', done.value.code, FLEET_REDIRECT, VERIFIER, '10.0.0.2')
    const answers = await Promise.all([redeemAt(a), redeemAt(b), redeemAt(a), redeemAt(b)])
    expect(answers.filter((answer) => answer.ok)).toHaveLength(1)
    expect(answers.filter((answer) => !answer.ok)).toEqual(
      Array(3).fill({
        ok: false,
        error: { code: 'invalid_grant', message: 'The code is unknown, used or expired: sign in again' },
      }),
    )
  })

  it('never refuses a start, from one /64 or from many, stores nothing for it, and a person still signs in', async () => {
    const { sso, fake, events, stores, clock } = world()
    const mine = await sso.begin(CALLBACK, '/', '10.0.0.2')
    if (!mine.ok) throw new Error('begin')
    // Past what the old bounds allowed: from one /64, and in all from many.
    for (let i = 0; i <= SIGN_IN_BOUNDS.perAddress; i++)
      expect((await sso.begin(CALLBACK, '/', `2001:db8::${i.toString(16)}`)).ok).toBe(true)
    for (let i = 0; i <= SIGN_IN_BOUNDS.total; i++) {
      const address = `2001:db8:${Math.floor(i / 256).toString(16)}:${(i % 256).toString(16)}::1`
      expect((await sso.begin(CALLBACK, '/', address)).ok).toBe(true)
    }
    expect(events.ofType('sso.refused')).toEqual([])
    expect(await stores.sso.deleteExpiredSignIns(clock.now() + SIGN_IN_MS, 100_000)).toBe(0)
    // A start from before, and one now, both finish.
    fake.signsIn('sub-cy', { preferred_username: 'cy', groups: ['nr-viewers'] })
    const done = await sso.complete(
      mine.value.binding,
      mine.value.carried,
      `${CALLBACK}?state=${stateOf(mine.value.url)}`,
      '10.0.0.2',
    )
    expect(done.ok).toBe(true)
    const now = await sso.begin(CALLBACK, '/', '192.0.2.7')
    if (!now.ok) throw new Error('begin')
    const later = await sso.complete(
      now.value.binding,
      now.value.carried,
      `${CALLBACK}?state=${stateOf(now.value.url)}`,
      '192.0.2.7',
    )
    expect(later.ok).toBe(true)
  })

  it('refuses a start past its 10 minutes', async () => {
    const { sso, fake, clock } = world()
    const started = await sso.begin(CALLBACK, '/', null)
    if (!started.ok) throw new Error('begin')
    fake.signsIn('sub-di', { preferred_username: 'di', groups: ['nr-viewers'] })
    clock.advance(SIGN_IN_MS)
    const late = await sso.complete(
      started.value.binding,
      started.value.carried,
      `${CALLBACK}?state=${stateOf(started.value.url)}`,
      null,
    )
    expect(late).toMatchObject({ ok: false, error: { reason: 'invalid' } })
  })

  it('sweeps one-time codes that expired untraded and spent sign-ins once their time ended; unfinished ones left nothing', async () => {
    const { core, sso, fake, clock } = world()
    for (let i = 0; i < 3; i++) await sso.begin(CALLBACK, '/', null)
    const started = await sso.begin(CALLBACK, '/', null)
    if (!started.ok) throw new Error('begin')
    fake.signsIn('sub-ed', { preferred_username: 'ed', groups: ['nr-viewers'] })
    await sso.complete(
      started.value.binding,
      started.value.carried,
      `${CALLBACK}?state=${stateOf(started.value.url)}`,
      null,
    )
    expect(await core.sweep()).toMatchObject({ signIns: 0 })
    clock.advance(ONE_TIME_CODE_MS)
    expect(await core.sweep()).toMatchObject({ signIns: 1 })
    clock.advance(SIGN_IN_MS)
    expect(await core.sweep()).toMatchObject({ signIns: 1 })
  })
})

type World = ReturnType<typeof world>
