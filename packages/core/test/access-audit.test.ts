// Access in the trail: a reload that changes roles, groups or grants is one event naming what
// changed; a live token refused at an instance for want of a grant there is an event, once per
// token and asking instance in REFUSAL_QUIET_MS, so an editor asking again and again writes one.
import { type AccessSettings, accessChanges, REFUSAL_QUIET_MS } from '@flowadmin/core'
import { WORLD_ADDRESS as ADDRESS } from '@flowadmin/testkit'
import { describe, expect, it } from 'vitest'
import { createAccessAudit, MAX_REMEMBERED } from '../src/access/audit.js'
import { world } from './access-world.js'

const before: AccessSettings = {
  roles: { operator: { permissions: ['read', 'inject.write'] } },
  groups: { 'line-1': ['press-*'], 'line-2': ['weld-*'] },
  users: [
    { username: 'admin', permissions: '*' },
    { username: 'alice', grants: [{ role: 'deployer', on: 'line-1' }] },
    { username: 'carl', grants: [{ role: 'viewer', on: 'line-2' }] },
  ],
}

describe('what a reload changed of who may do what', () => {
  it('is nothing when the roles, groups and grants are the same, whatever their order', () => {
    const same: AccessSettings = {
      groups: { 'line-2': ['weld-*'], 'line-1': ['press-*'] },
      roles: { operator: { permissions: ['read', 'inject.write'] } },
      users: [...before.users].reverse(),
    }
    expect(accessChanges(before, same)).toEqual({ roles: [], groups: [], grants: [] })
  })

  it('names the roles and groups added, removed or changed, and each user’s words added and removed', () => {
    const after: AccessSettings = {
      roles: { operator: { permissions: ['read'] }, auditor: { permissions: ['audit.read'] } },
      groups: { 'line-1': ['press-*', 'nr-7'], test: [] },
      users: [
        { username: 'admin', permissions: '*' },
        { username: 'alice', grants: [{ role: 'viewer', on: 'everywhere' }] },
        { username: 'dora', permissions: 'read' },
      ],
    }
    expect(accessChanges(before, after)).toEqual({
      roles: ['auditor', 'operator'],
      groups: ['line-1', 'line-2', 'test'],
      grants: [
        { username: 'alice', added: ['role:viewer'], removed: ['role:deployer@line-1'] },
        { username: 'carl', added: [], removed: ['role:viewer@line-2'] },
        { username: 'dora', added: ['read'], removed: [] },
      ],
    })
  })

  it('is written as one access.reloaded event without an actor, and a reload that changed nothing writes none', () => {
    const { core, events } = world()
    expect(core.accessReloaded(before, { ...before, users: [...before.users] })).toBe(false)
    const after = { ...before, users: before.users.filter((user) => user.username !== 'carl') }
    expect(core.accessReloaded(before, after)).toBe(true)
    expect(events.ofType('access.reloaded')).toEqual([
      {
        type: 'access.reloaded',
        at: expect.any(Number),
        roles: [],
        groups: [],
        grants: [{ username: 'carl', added: [], removed: ['role:viewer@line-2'] }],
        username: null,
        clientId: null,
        address: null,
      },
    ])
  })
})

describe('a live token refused at an instance where its person holds no grant', () => {
  it('is written once per token and asking instance in the quiet time, then again', async () => {
    const { clock, events, enrol, editorLogin, rightsAt } = world()
    const [press, weld] = [await enrol('press-2'), await enrol('weld-2')]
    const carl = await editorLogin('carl')
    expect(await rightsAt(weld, carl)).toEqual(['read'])
    for (let ask = 0; ask < 5; ask++) expect(await rightsAt(press, carl)).toBe('inactive')
    expect(events.ofType('access.refused')).toEqual([
      {
        type: 'access.refused',
        at: expect.any(Number),
        resourceServer: 'fleet',
        instance: 'press-2',
        username: 'carl',
        clientId: 'fleet/press-2',
        address: ADDRESS,
      },
    ])
    clock.advance(REFUSAL_QUIET_MS - 1)
    expect(await rightsAt(press, carl)).toBe('inactive')
    expect(events.ofType('access.refused')).toHaveLength(1)
    clock.advance(1)
    expect(await rightsAt(press, carl)).toBe('inactive')
    expect(events.ofType('access.refused')).toHaveLength(2)
    // Another of carl's tokens is another line; the answers that are active write nothing.
    expect(await rightsAt(press, await editorLogin('carl'))).toBe('inactive')
    expect(events.ofType('access.refused').map((event) => event.username)).toEqual(['carl', 'carl', 'carl'])
  })

  it('is written for the resource server asking with its shared secret, where only grants everywhere count', async () => {
    const { events, editorLogin, rightsAt, shared } = world()
    expect(await rightsAt(shared, await editorLogin('carl'))).toBe('inactive')
    expect(events.ofType('access.refused')).toEqual([
      expect.objectContaining({
        instance: null,
        clientId: 'fleet',
        resourceServer: 'fleet',
        username: 'carl',
      }),
    ])
  })

  it('is not written for a token that is not live, nor for one that is live there', async () => {
    const { events, enrol, editorLogin, rightsAt } = world()
    const press = await enrol('press-1')
    expect(await rightsAt(press, 'not-a-token-of-anyone')).toBe('inactive')
    expect(await rightsAt(press, await editorLogin('alice'))).not.toBe('inactive')
    expect(events.ofType('access.refused')).toEqual([])
  })
})

describe('the refusals remembered, at most MAX_REMEMBERED (token, client) pairs', () => {
  it('forgets the longest unwritten pair first, and keeps the others quiet', () => {
    const emitted: unknown[] = []
    let now = 0
    const audit = createAccessAudit({
      events: { emit: (event) => emitted.push(event) },
      clock: { now: () => now },
    })
    const refusal = (tokenId: string) => ({
      tokenId,
      username: 'carl',
      clientId: 'fleet/press-2',
      resourceServer: 'fleet',
      instance: 'press-2',
      address: ADDRESS,
    })
    for (let pair = 0; pair < MAX_REMEMBERED; pair++) {
      now++
      expect(audit.refused(refusal(`t${pair}`))).toBe(true)
    }
    now++
    expect(audit.refused(refusal('one-more'))).toBe(true)
    // The second pair is still remembered: quiet. The first was forgotten: written again.
    expect(audit.refused(refusal('t1'))).toBe(false)
    expect(audit.refused(refusal('t0'))).toBe(true)
    expect(audit.refused(refusal('t2'))).toBe(false)
    expect(emitted).toHaveLength(MAX_REMEMBERED + 2)
  })
})
