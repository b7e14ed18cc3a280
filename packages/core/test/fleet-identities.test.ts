// The fleet's identities in the core: enrolment's rules, an instance's id from its credential,
// revocation and rotation.
import { createMemoryStores } from '@flowadmin/adapter-memory'
import { createCoreWithDoubles } from '@flowadmin/testkit'
import { describe, expect, it } from 'vitest'
import { operator } from '../src/auth/principal.js'
import { CREDENTIAL_CACHE_MS } from '../src/fleet/instance-identities.js'
import type { Stores } from '../src/ports/index.js'

const ADDRESS = '192.0.2.10'
const REDIRECT = 'https://nr-1.example/auth/strategy/callback'
/** A PKCE verifier and its S256 challenge (RFC 7636): base64url of its SHA-256. */
const VERIFIER = 'dBjftJeZ4CVP-mJ0ZLX7sAOiWp4mODfZW5qv3qa0Wfs'
const CHALLENGE = 'Bvrc_PnoXB3L91pMsLJ3skzRiiPCoJteVd8702iXfDg'
const admin = { kind: 'user' as const, username: 'admin', clientId: 'service-admin', permissions: ['*'] }

function world(
  options: { maxInstances?: number; sharedAudience?: boolean; stores?: Stores; seed?: number } = {},
) {
  const doubles = createCoreWithDoubles({
    stores: options.stores ?? createMemoryStores(),
    seed: options.seed,
    adminAuth: (hasher) => ({
      users: [{ username: 'admin', password: hasher.hash('pw'), permissions: '*' }],
      resourceServers: [
        {
          id: 'fleet',
          secret: hasher.hash('shared'),
          fleet: true,
          sharedAudience: options.sharedAudience,
          redirectUris: [REDIRECT],
        },
        { id: 'plain', secret: hasher.hash('plain') },
      ],
    }),
    fleet: { answerWaitMs: 0, maxInstances: options.maxInstances },
  })
  const fleet = doubles.core.fleet
  if (fleet === null) throw new Error('fleet mode is off')
  const { identities } = fleet
  const principal = {
    ...admin,
    tokenId: 't',
    tokenKind: 'session' as const,
    audience: 'flowadmin',
    signedInAt: 0,
    signIn: null,
  }
  return {
    ...doubles,
    identities,
    principal,
    /** A token of these fields, made by the admin; fails unless it was made. */
    async token(fields: Record<string, unknown> = {}) {
      const made = await identities.enrolments.create(
        principal,
        { resourceServer: 'fleet', ...fields },
        ADDRESS,
      )
      if (!made.ok) throw new Error(JSON.stringify(made.error))
      return made.value.token
    },
    enrol: (token: string, instance?: string) => identities.enrolments.enrol({ token, instance }, ADDRESS),
    authenticate: (id: string, secret: string) => identities.authenticateClient({ id, secret }, ADDRESS),
  }
}

describe('enrolment tokens', () => {
  it('need every right, a resource server marked for the fleet, bounds kept, and an instance only for one use', async () => {
    const { identities, principal } = world()
    const create = (fields: Record<string, unknown>, who = principal) =>
      identities.enrolments.create(who as never, { resourceServer: 'fleet', ...fields }, ADDRESS)
    expect(await create({}, { ...principal, permissions: ['nodes.read', 'nodes.write'] })).toEqual({
      ok: false,
      error: { code: 'forbidden', permission: '*' },
    })
    for (const [fields, field] of [
      [{ resourceServer: 'plain' }, 'resourceServer'],
      [{ uses: 1.5 }, 'uses'],
      [{ expiresIn: 604_801 }, 'expiresIn'],
      [{ uses: 2, instance: 'nr-1' }, 'instance'],
      [{ groups: ['a', 'a'] }, 'groups'],
    ] as const) {
      const made = await create(fields)
      expect(made.ok ? null : made.error).toMatchObject({ code: 'invalid_request' })
      expect(made.ok ? '' : (made.error as { message: string }).message).toMatch(new RegExp(`^${field}:`))
    }
    const fromCommandLine = await identities.enrolments.create(operator, { resourceServer: 'fleet' }, null)
    expect(fromCommandLine.ok && fromCommandLine.value).toMatchObject({ uses: 1, left: 1, createdBy: null })
  })

  it('a token naming its instance enrols that id; an unnamed one takes the asked id or makes nr-<8 hex>', async () => {
    const w = world()
    const named = await w.enrol(await w.token({ instance: 'nr-1' }))
    expect(named.ok && named.value).toMatchObject({ instance: 'nr-1', clientId: 'fleet/nr-1' })
    const asked = await w.enrol(await w.token(), 'line-3')
    expect(asked.ok && asked.value.instance).toBe('line-3')
    const made = await w.enrol(await w.token())
    expect(made.ok && made.value.instance).toMatch(/^nr-[0-9a-f]{8}$/)
    const mismatch = await w.enrol(await w.token({ instance: 'nr-2' }), 'nr-3')
    expect(mismatch).toEqual({
      ok: false,
      error: { code: 'instance_mismatch', instance: 'nr-3', where: 'enrolment' },
    })
  })

  it('one answer for an unknown, spent, expired or cancelled token; the reason goes to the trail', async () => {
    const w = world()
    const spent = await w.token()
    await w.enrol(spent)
    const expired = await w.token({ expiresIn: 60 })
    const cancelled = await w.token()
    const id = (await w.identities.enrolments.list()).at(-1)?.id as string
    expect(
      await w.identities.enrolments.cancel(id, { username: 'admin', clientId: null, address: null }),
    ).toBe(true)
    w.clock.advance(60_000)
    for (const token of ['fae_unknown', spent, expired, cancelled, 'not-a-token'])
      expect(await w.enrol(token)).toEqual({ ok: false, error: { code: 'invalid_enrolment' } })
    expect(w.events.ofType('fleet.enrol_refused').map((event) => event.reason)).toEqual([
      'unknown',
      'spent',
      'expired',
      'unknown',
      'unknown',
    ])
  })

  it('spent and expired tokens are swept; live ones stay listed', async () => {
    const w = world()
    await w.enrol(await w.token())
    await w.token({ expiresIn: 60 })
    await w.token({ expiresIn: 120 })
    w.clock.advance(60_000)
    expect(await w.core.sweep()).toMatchObject({ enrolments: 2 })
    expect((await w.identities.enrolments.list()).map((view) => view.left)).toEqual([1])
  })

  it('bounds the instances of a resource server; a revoked one makes room', async () => {
    const w = world({ maxInstances: 2 })
    const token = await w.token({ uses: 5 })
    expect((await w.enrol(token, 'a')).ok).toBe(true)
    expect((await w.enrol(token, 'b')).ok).toBe(true)
    expect(await w.enrol(token, 'c')).toEqual({ ok: false, error: { code: 'too_many_instances', limit: 2 } })
    await w.identities.revoke('a', { username: 'admin', clientId: null, address: null })
    expect((await w.enrol(token, 'c')).ok).toBe(true)
  })

  it('is throttled per address after repeated refusals, and only for that address', async () => {
    const w = world()
    let last: unknown = null
    for (let i = 0; i < 12; i++) last = await w.enrol(`fae_guess-${i}`)
    expect(last).toMatchObject({ ok: false, error: { code: 'throttled' } })
    const token = await w.token()
    const elsewhere = await w.identities.enrolments.enrol({ token }, '198.51.100.1')
    expect(elsewhere.ok).toBe(true)
  })
})

describe('an instance’s credential', () => {
  it('proves its id alone: audience its own, or its resource server’s when shared', async () => {
    const w = world()
    const enrolled = await w.enrol(await w.token({ instance: 'nr-1' }))
    if (!enrolled.ok) throw new Error('not enrolled')
    const { clientId, clientSecret } = enrolled.value
    expect(await w.authenticate(clientId, clientSecret)).toEqual({
      ok: true,
      value: { clientId: 'fleet/nr-1', resourceServer: 'fleet', instance: 'nr-1', audience: 'fleet/nr-1' },
    })
    expect(await w.authenticate('fleet/nr-2', clientSecret)).toEqual({
      ok: false,
      error: { code: 'invalid_client' },
    })
    expect(await w.authenticate('plain/nr-1', clientSecret)).toEqual({
      ok: false,
      error: { code: 'invalid_client' },
    })
    const shared = world({ sharedAudience: true })
    const other = await shared.enrol(await shared.token({ instance: 'nr-1' }))
    if (!other.ok) throw new Error('not enrolled')
    const proven = await shared.authenticate(other.value.clientId, other.value.clientSecret)
    expect(proven.ok && proven.value.audience).toBe('fleet')
  })

  it('a revocation refuses it at once and ends the sessions issued through it', async () => {
    const w = world()
    const enrolled = await w.enrol(await w.token({ instance: 'nr-1' }))
    if (!enrolled.ok) throw new Error('not enrolled')
    const client = { id: enrolled.value.clientId, secret: enrolled.value.clientSecret }
    const login = await w.core.loginAsClient(
      client,
      { grantType: 'password', username: 'admin', password: 'pw', scope: '*' },
      ADDRESS,
    )
    if (!login.ok) throw new Error(JSON.stringify(login.error))
    expect(await w.identities.revoke('nr-1', { username: 'admin', clientId: null, address: null })).toBe(
      'fleet',
    )
    expect(await w.authenticate(client.id, client.secret)).toEqual({
      ok: false,
      error: { code: 'invalid_client' },
    })
    expect(w.events.ofType('fleet.instance_revoked')).toMatchObject([{ instance: 'nr-1', sessionsEnded: 1 }])
    expect(await w.identities.revoke('nr-9', { username: 'admin', clientId: null, address: null })).toBeNull()
  })

  it("an editor's sign-in code for the instance is redeemed with its credential alone, for it alone", async () => {
    const w = world()
    const enrolled = await w.enrol(await w.token({ instance: 'nr-1' }))
    if (!enrolled.ok) throw new Error('not enrolled')
    const client = { id: enrolled.value.clientId, secret: enrolled.value.clientSecret }
    expect(w.core.redirectRegistered('fleet/nr-1', REDIRECT)).toBe(true)
    const owner = { username: 'admin', permissions: [], fingerprint: '', method: 'password' as const }
    const authorization = {
      clientId: 'fleet/nr-1',
      redirectUri: REDIRECT,
      codeChallenge: CHALLENGE,
      state: null,
    }
    const handed = await w.core.signIn.handOver(owner, { binding: null, authorization }, ADDRESS)
    if (!handed.ok) throw new Error('no code')
    const request = { clientId: undefined, code: handed.value, redirectUri: REDIRECT, codeVerifier: VERIFIER }
    const shared = await w.core.redeemCode({ id: 'fleet', secret: 'shared' }, request, ADDRESS)
    expect(shared.ok).toBe(false)
    const again = await w.core.signIn.handOver(owner, { binding: null, authorization }, ADDRESS)
    if (!again.ok) throw new Error('no code')
    const issued = await w.core.redeemCode(client, { ...request, code: again.value }, ADDRESS)
    if (!issued.ok) throw new Error(JSON.stringify(issued.error))
    const introspect = (as: { id: string; secret: string }) =>
      w.core.introspect(as, issued.value.accessToken, ADDRESS)
    expect(await introspect(client)).toMatchObject({
      ok: true,
      value: { active: true, audience: 'fleet/nr-1', clientId: 'fleet/nr-1' },
    })
    expect(await introspect({ id: 'fleet', secret: 'shared' })).toEqual({
      ok: true,
      value: { active: false },
    })
  })

  it('a revocation is refused at once here, and within a second at another flowadmin sharing the store', async () => {
    const stores = createMemoryStores()
    const here = world({ stores })
    const there = world({ stores, seed: 8 })
    const enrolled = await here.enrol(await here.token({ instance: 'nr-1' }))
    if (!enrolled.ok) throw new Error('not enrolled')
    const { clientId, clientSecret } = enrolled.value
    expect((await here.authenticate(clientId, clientSecret)).ok).toBe(true)
    expect((await there.authenticate(clientId, clientSecret)).ok).toBe(true)
    await here.identities.revoke('nr-1', { username: 'admin', clientId: null, address: null })
    expect((await here.authenticate(clientId, clientSecret)).ok).toBe(false)
    there.clock.advance(CREDENTIAL_CACHE_MS)
    expect((await there.authenticate(clientId, clientSecret)).ok).toBe(false)
  })

  it('the shared secret, accepted again and again, notes each call; a reload refuses the old one at once', async () => {
    const w = world()
    const lastCall = () =>
      w.core.resourceServers.activity().find((server) => server.id === 'fleet')?.lastCallAt
    expect((await w.authenticate('fleet', 'shared')).ok).toBe(true)
    w.clock.advance(400)
    expect(await w.authenticate('fleet', 'shared')).toMatchObject({
      ok: true,
      value: { resourceServer: 'fleet' },
    })
    expect(lastCall()).toBe(w.clock.now())
    // A wrong secret is no more accepted for the right one having been.
    expect(await w.authenticate('fleet', 'sharex')).toEqual({ ok: false, error: { code: 'invalid_client' } })
    expect(w.events.ofType('client.failed')).toHaveLength(1)
    w.core.resourceServers.set([{ id: 'fleet', secret: w.hasher.hash('renewed'), fleet: true }])
    expect((await w.authenticate('fleet', 'shared')).ok).toBe(false)
    expect((await w.authenticate('fleet', 'renewed')).ok).toBe(true)
  })

  it('rotation: the old secret works until the new one is first used, then stops', async () => {
    const w = world()
    const enrolled = await w.enrol(await w.token({ instance: 'nr-1' }))
    if (!enrolled.ok) throw new Error('not enrolled')
    const old = enrolled.value.clientSecret
    const identity = await w.authenticate('fleet/nr-1', old)
    if (!identity.ok) throw new Error('not proven')
    const renewed = await w.identities.renew(identity.value)
    if (!renewed.ok) throw new Error('not renewed')
    expect((await w.authenticate('fleet/nr-1', old)).ok).toBe(true)
    expect((await w.authenticate('fleet/nr-1', renewed.value.clientSecret)).ok).toBe(true)
    expect((await w.authenticate('fleet/nr-1', old)).ok).toBe(false)
    expect(w.events.ofType('fleet.credential_rotated')).toHaveLength(1)
  })

  it('acts as its own id alone; the shared secret never as an enrolled or revoked instance', async () => {
    const w = world()
    const enrolled = await w.enrol(await w.token({ instance: 'nr-1' }))
    if (!enrolled.ok) throw new Error('not enrolled')
    const own = await w.authenticate(enrolled.value.clientId, enrolled.value.clientSecret)
    const shared = await w.authenticate('fleet', 'shared')
    if (!own.ok || !shared.ok) throw new Error('not proven')
    expect((await w.identities.callerOf(own.value, 'nr-1', ADDRESS)).ok).toBe(true)
    expect((await w.identities.callerOf(own.value, 'nr-2', ADDRESS)).ok).toBe(false)
    expect((await w.identities.callerOf(shared.value, 'nr-1', ADDRESS)).ok).toBe(false)
    expect((await w.identities.callerOf(shared.value, 'old-1', ADDRESS)).ok).toBe(true)
    expect(w.events.ofType('fleet.instance_mismatch').map((event) => event.requested)).toEqual([
      'nr-2',
      'nr-1',
    ])
    // A resource server not marked for the fleet is refused by the fleet's routes.
    expect(await w.identities.authenticateClient({ id: 'plain', secret: 'plain' }, ADDRESS)).toEqual({
      ok: false,
      error: { code: 'invalid_client' },
    })
  })
})
