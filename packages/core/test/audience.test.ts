import { createMemoryStores } from '@flowadmin/adapter-memory'
import { FLOWADMIN_AUDIENCE, operator, type TokenRecord } from '@flowadmin/core'
import { WORLD_ADDRESS as ADDRESS, type CoreWorldOptions, createCoreWorld } from '@flowadmin/testkit'
import { describe, expect, it } from 'vitest'

function world(options: Partial<CoreWorldOptions> = {}) {
  const base = createCoreWorld({
    stores: createMemoryStores(),
    seed: 5,
    adminAuth: (hasher) => ({
      resourceServers: [
        { id: 'fleet', secret: hasher.hash('fleet-secret') },
        { id: 'lab', secret: hasher.hash('lab-secret') },
      ],
    }),
    ...options,
  })
  const fleet = { id: 'fleet', secret: 'fleet-secret' }
  const lab = { id: 'lab', secret: 'lab-secret' }
  const loginThrough = async (client: { id: string; secret: string }, username = 'admin') => {
    const issued = await base.core.loginAsClient(
      client,
      { grantType: 'password', username, password: 'pw', scope: '*' },
      ADDRESS,
    )
    if (!issued.ok) throw new Error(issued.error.code)
    return issued.value.accessToken
  }
  return { ...base, fleet, lab, loginThrough }
}

const refused = { ok: false, error: { code: 'unauthenticated', reason: 'invalid' } }
const inactive = { ok: true, value: { active: false } }

describe('token audiences', () => {
  it("a password login for the console is flowadmin's: accepted by its API, inactive to every resource server", async () => {
    const { core, fleet, login } = world()
    const token = await login('admin')
    expect(await core.authenticate(token, ADDRESS)).toMatchObject({
      ok: true,
      value: { username: 'admin', audience: FLOWADMIN_AUDIENCE },
    })
    expect(await core.introspect(fleet, token, ADDRESS)).toEqual(inactive)
  })

  it("a resource server's login is that server's alone: active to it, unknown to flowadmin's API and to another server", async () => {
    const { core, stores, clock, fleet, lab, loginThrough } = world()
    const token = await loginThrough(fleet)
    expect(await core.introspect(fleet, token, ADDRESS)).toMatchObject({
      ok: true,
      value: { active: true, username: 'admin', clientId: 'fleet', audience: 'fleet' },
    })
    expect(await core.introspect(lab, token, ADDRESS)).toEqual(inactive)
    const loggedInAt = clock.now()
    clock.advance(5 * 60_000)
    expect(await core.authenticate(token, '10.9.9.9')).toEqual(refused)
    expect(await core.authorize(token, 'read', '10.9.9.9')).toEqual(refused)
    // Refused, it is not a use either: its record is as the login left it.
    expect(await stores.tokens.list(null)).toMatchObject([
      { audience: 'fleet', lastUsedAt: loggedInAt, lastAddress: ADDRESS },
    ])
  })

  it('a token of any audience may end itself, and a resource server’s token nothing else', async () => {
    const { core, fleet, login, loginThrough } = world()
    const console = await login('admin')
    const editor = await loginThrough(fleet)
    const other = await loginThrough(fleet)
    const caller = await core.authenticate(editor, ADDRESS, { anyAudience: true })
    if (!caller.ok) throw new Error('not authenticated')
    expect(caller.value).toMatchObject({ kind: 'user', username: 'admin', audience: 'fleet' })
    // The same user's console token and another editor session stay, even with `*`.
    await core.revoke(caller.value, console, ADDRESS)
    await core.revoke(caller.value, other, ADDRESS)
    expect((await core.authenticate(console, ADDRESS)).ok).toBe(true)
    expect(await core.introspect(fleet, other, ADDRESS)).toMatchObject({ ok: true, value: { active: true } })
    await core.revoke(caller.value, editor, ADDRESS)
    expect(await core.introspect(fleet, editor, ADDRESS)).toEqual(inactive)
    // flowadmin's own token ends a resource server's token of its user as before.
    const admin = await core.authenticate(console, ADDRESS)
    if (!admin.ok) throw new Error('not authenticated')
    await core.revoke(admin.value, other, ADDRESS)
    expect(await core.introspect(fleet, other, ADDRESS)).toEqual(inactive)
  })

  it('an API token names its audience: flowadmin by default, a configured resource server, or a clear refusal', async () => {
    const { core, fleet, lab } = world()
    const plain = await core.tokens.create(operator, { name: 'ci', user: 'admin' }, null)
    const forFleet = await core.tokens.create(
      operator,
      { name: 'probe', user: 'admin', audience: 'fleet' },
      null,
    )
    if (!plain.ok || !forFleet.ok) throw new Error('not created')
    expect(plain.value.view.audience).toBe(FLOWADMIN_AUDIENCE)
    expect(forFleet.value.view.audience).toBe('fleet')
    expect((await core.authenticate(plain.value.token, ADDRESS)).ok).toBe(true)
    expect(await core.authenticate(forFleet.value.token, ADDRESS)).toEqual(refused)
    expect(await core.introspect(fleet, forFleet.value.token, ADDRESS)).toMatchObject({
      ok: true,
      value: { active: true, kind: 'api', audience: 'fleet' },
    })
    expect(await core.introspect(lab, forFleet.value.token, ADDRESS)).toEqual(inactive)
    expect(
      await core.tokens.create(operator, { name: 'x', user: 'admin', audience: 'nowhere' }, null),
    ).toEqual({
      ok: false,
      error: {
        code: 'invalid_request',
        message: 'Unknown audience: nowhere (flowadmin, or the id of a configured resource server)',
      },
    })
    const listed = await core.tokens.list(operator, '*', null)
    expect(listed.ok && listed.value.map((view) => [view.name, view.audience])).toEqual([
      ['ci', 'flowadmin'],
      ['probe', 'fleet'],
    ])
  })

  it('a token saved before audiences gets its client’s: a resource server’s id, or flowadmin; settled for good at start', async () => {
    const { core, stores, clock, hasher, fleet, login, loginThrough } = world()
    // Tokens as an earlier version saved them: the same records, without an audience.
    const tokens = { console: await login('admin'), editor: await loginThrough(fleet) }
    for (const record of await stores.tokens.list(null))
      await stores.tokens.save({ ...record, audience: null })
    expect((await core.authenticate(tokens.console, ADDRESS)).ok).toBe(true)
    expect(await core.authenticate(tokens.editor, ADDRESS)).toEqual(refused)
    expect(await core.introspect(fleet, tokens.editor, ADDRESS)).toMatchObject({
      ok: true,
      value: { active: true },
    })
    const listed = await core.tokens.list(operator, '*', null)
    expect(listed.ok && listed.value.map((view) => [view.clientId, view.audience])).toEqual([
      ['service-admin', 'flowadmin'],
      ['fleet', 'fleet'],
    ])

    expect(await core.tokens.settleAudiences()).toBe(2)
    expect(await core.tokens.settleAudiences()).toBe(0)
    expect((await stores.tokens.list(null)).map((record: TokenRecord) => record.audience)).toEqual([
      'flowadmin',
      'fleet',
    ])
    // Settled, the editor's token stays the fleet's even once the fleet is no longer configured.
    core.resourceServers.set([{ id: 'lab', secret: hasher.hash('lab-secret') }])
    clock.advance(1_000)
    expect(await core.authenticate(tokens.editor, ADDRESS)).toEqual(refused)
  })

  it('refuses a resource server called flowadmin, at start and at a reload', () => {
    const { core, hasher } = world()
    expect(() => core.resourceServers.set([{ id: 'flowadmin', secret: hasher.hash('x') }])).toThrow(
      /may not be called flowadmin/,
    )
    expect(() =>
      world({
        adminAuth: (hasher) => ({
          users: [],
          resourceServers: [{ id: 'flowadmin', secret: hasher.hash('x') }],
        }),
      }),
    ).toThrow(/may not be called flowadmin/)
  })
})
