// POST /auth/introspect answers the token's rights at the instance that asks, known from the
// instance's own credential: the grants whose scope holds it, or `{"active": false}` without any.
import { describe, expect, it } from 'vitest'
import { basicHeader, createWorld, fleetBasic, type World } from './helpers.js'

type Credential = { instance: string; clientId: string; clientSecret: string }

const DEPLOYER = 'debug.write flows.write inject.write library.write read'

async function world(): Promise<World> {
  return createWorld({
    fleet: { answerWaitMs: 0 },
    access: { groups: { 'line-1': ['press-*'], 'line-2': ['weld-*'] } },
    users: [
      {
        username: 'alice',
        grants: [
          { role: 'deployer', on: 'line-1' },
          { role: 'viewer', on: 'everywhere' },
        ],
      },
      { username: 'carl', grants: [{ role: 'viewer', on: 'line-2' }] },
    ],
  })
}

/** An enrolment token of the admin's, spent by `instance`: its own credential. */
async function enrolled(world: World, instance: string, groups: string[] = []): Promise<Credential> {
  const admin = await world.login()
  const made = await world.send(
    'POST',
    '/fleet/enrolments',
    { resourceServer: 'fleet', instance, groups },
    admin,
  )
  expect(made.status).toBe(201)
  const { token } = (await made.json()) as { token: string }
  const res = await world.send('POST', '/fleet/enrol', { token, nodeRedVersion: '4.1.15' })
  expect(res.status).toBe(201)
  return (await res.json()) as Credential
}

const basicOf = (credential: Credential) => basicHeader(credential.clientId, credential.clientSecret)

/** `username`'s session through the instance's editor login (its own credential, an empty scope). */
async function editorSession(world: World, credential: Credential, username: string): Promise<string> {
  const res = await world.request('/auth/token', {
    method: 'POST',
    headers: { Authorization: basicOf(credential), 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'password', scope: '', username, password: 'pw' }).toString(),
  })
  expect(res.status).toBe(200)
  return ((await res.json()) as { access_token: string }).access_token
}

/** What the introspection tells `authorization` of `token`: the scope's words sorted, or inactive. */
async function scopeAt(world: World, token: string, authorization: string): Promise<string> {
  const res = await world.introspect(token, authorization)
  expect(res.status).toBe(200)
  const body = (await res.json()) as { active: boolean; scope?: string }
  if (!body.active) {
    expect(body).toEqual({ active: false })
    return 'inactive'
  }
  return (body.scope ?? '').split(' ').sort().join(' ')
}

describe('POST /auth/introspect: rights at the asking instance', () => {
  it('answers the grants whose scope holds the instance', async () => {
    const w = await world()
    const press = await enrolled(w, 'press-1')
    const weld = await enrolled(w, 'weld-1')
    expect(await scopeAt(w, await editorSession(w, press, 'alice'), basicOf(press))).toBe(DEPLOYER)
    expect(await scopeAt(w, await editorSession(w, weld, 'alice'), basicOf(weld))).toBe('read')
    expect(await scopeAt(w, await editorSession(w, weld, 'admin'), basicOf(weld))).toBe('*')
  })

  it('answers {"active": false} where the person holds no grant', async () => {
    const w = await world()
    const press = await enrolled(w, 'press-1')
    const weld = await enrolled(w, 'weld-1')
    expect(await scopeAt(w, await editorSession(w, weld, 'carl'), basicOf(weld))).toBe('read')
    expect(await scopeAt(w, await editorSession(w, press, 'carl'), basicOf(press))).toBe('inactive')
  })

  it('counts only grants everywhere for the resource server asking with its shared secret', async () => {
    const w = await world()
    expect(await scopeAt(w, await w.loginAsFleet('alice', ''), fleetBasic())).toBe('read')
    expect(await scopeAt(w, await w.loginAsFleet('carl', ''), fleetBasic())).toBe('inactive')
  })

  it('follows a grant removed at the next question', async () => {
    const w = await world()
    const press = await enrolled(w, 'press-1')
    const token = await editorSession(w, press, 'alice')
    expect(await scopeAt(w, token, basicOf(press))).toBe(DEPLOYER)
    await w.core.setUsers([
      { username: 'admin', password: w.hasher.hash('pw'), permissions: '*' },
      { username: 'alice', password: w.hasher.hash('pw'), grants: [{ role: 'viewer', on: 'line-1' }] },
    ])
    expect(await scopeAt(w, token, basicOf(press))).toBe('read')
  })

  it('answers an API token carrying a role on a group at that group’s instances alone', async () => {
    const w = await world()
    const press = await enrolled(w, 'press-1')
    const weld = await enrolled(w, 'weld-1')
    const made = await w.post(
      '/auth/tokens',
      { name: 'ci', scope: 'role:deployer@line-1', audience: 'fleet' },
      await w.login(),
    )
    expect(made.status).toBe(201)
    const { token } = (await made.json()) as { token: string }
    expect(await scopeAt(w, token, basicOf(press))).toBe(DEPLOYER)
    expect(await scopeAt(w, token, basicOf(weld))).toBe('inactive')
  })

  it('never puts an instance in a group by what it or its enrolment says: only the rules count', async () => {
    const w = await world()
    const other = await enrolled(w, 'nr-9', ['line-1'])
    expect(await scopeAt(w, await editorSession(w, other, 'alice'), basicOf(other))).toBe('read')
    expect(await scopeAt(w, await editorSession(w, other, 'carl'), basicOf(other))).toBe('inactive')
  })
})
