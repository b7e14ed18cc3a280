// flowadmin's own lists follow the grants: GET /fleet/instances lists the instances the caller may
// read, GET /audit the events of those instances (and flowadmin's own only with audit.read there).
import { describe, expect, it } from 'vitest'
import { instance, report } from './fleet-world.js'
import { createWorld, expectChallenge, fleetBasic, type World } from './helpers.js'

const T0 = Date.UTC(2026, 10, 27, 6, 0, 0)

async function world(): Promise<World> {
  const w = await createWorld({
    fleet: { answerWaitMs: 0 },
    access: { groups: { 'line-1': ['press-*'], 'line-2': ['weld-*'] } },
    users: [
      { username: 'carl', grants: [{ role: 'viewer', on: 'line-2' }] },
      { username: 'alice', grants: [{ role: 'deployer', on: 'line-1' }] },
      { username: 'dora', grants: [{ role: 'palette-admin', on: 'flowadmin' }] },
    ],
  })
  w.clock.set(T0 + 3_600_000)
  for (const id of ['press-1', 'weld-1', 'nr-9'])
    expect((await instance(w, id).send(report())).status).toBe(204)
  // Each instance reports events: press-1 many, weld-1 two, nr-9 one.
  const events = [
    ...Array.from({ length: 5 }, (_, i) => ({ instance: 'press-1', i })),
    { instance: 'weld-1', i: 5 },
    ...Array.from({ length: 5 }, (_, i) => ({ instance: 'press-1', i: 6 + i })),
    { instance: 'weld-1', i: 11 },
    { instance: 'nr-9', i: 12 },
  ].map(({ instance, i }) => ({
    time: T0 + i,
    instance,
    actor: 'x',
    event: 'flows.set',
    address: null,
    details: { i },
  }))
  const posted = await w.request('/audit/events', {
    method: 'POST',
    headers: { Authorization: fleetBasic(), 'Content-Type': 'application/json' },
    body: JSON.stringify({ events }),
  })
  expect(posted.status).toBe(200)
  return w
}

const ids = async (w: World, token: string) =>
  ((await (await w.get('/fleet/instances', token)).json()) as Array<{ id: string }>).map((view) => view.id)

type Page = {
  events: Array<{ instance: string; event: string; details: { i?: number } }>
  next: string | null
}
const page = async (w: World, token: string, query = '') => {
  const res = await w.get(`/audit${query}`, token)
  expect(res.status, await res.clone().text()).toBe(200)
  return (await res.json()) as Page
}

describe("flowadmin's lists follow the grants", () => {
  it('GET /fleet/instances: the instances the caller may read', async () => {
    const w = await world()
    expect(await ids(w, await w.login())).toEqual(['nr-9', 'press-1', 'weld-1'])
    expect(await ids(w, await w.login('carl', ''))).toEqual(['weld-1'])
    expect(await ids(w, await w.login('alice', ''))).toEqual(['press-1'])
    // nodes.read on flowadmin shows the whole fleet.
    expect(await ids(w, await w.login('dora', ''))).toEqual(['nr-9', 'press-1', 'weld-1'])
  })

  it('GET /audit: the events of the instances the caller may read', async () => {
    const w = await world()
    const all = await page(w, await w.login(), '?limit=100')
    expect(all.events).toHaveLength(13)
    const carl = await page(w, await w.login('carl', ''), '?limit=100')
    expect(carl.events.map((event) => [event.instance, event.details.i])).toEqual([
      ['fleet/weld-1', 11],
      ['fleet/weld-1', 5],
    ])
    expect(carl.next).toBeNull()
  })

  it('GET /audit: pages past what the caller may not read', async () => {
    const w = await world()
    const carl = await w.login('carl', '')
    const first = await page(w, carl, '?limit=1')
    expect(first.events.map((event) => event.details.i)).toEqual([11])
    expect(first.next, JSON.stringify(first)).toMatch(/^\d+$/)
    const second = await page(w, carl, `?limit=1&cursor=${first.next}`)
    expect(second.events.map((event) => event.details.i)).toEqual([5])
    // Nothing of weld-1's is older: the rest (press-1's) was looked past, and no page follows.
    expect(second.next).toBeNull()
  })

  it('GET /audit as NDJSON: the same events', async () => {
    const w = await world()
    const res = await w.request('/audit', {
      headers: { Authorization: `Bearer ${await w.login('alice', '')}`, Accept: 'application/x-ndjson' },
    })
    const lines = (await res.text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { instance: string })
    expect(lines).toHaveLength(10)
    expect(new Set(lines.map((line) => line.instance))).toEqual(new Set(['fleet/press-1']))
  })

  it('refuses, recorded, a caller who may read neither list anywhere', async () => {
    const w = await world()
    const nobody = await w.login('editor', '')
    await expectChallenge(await w.get('/audit', nobody), 'insufficient_scope')
    expect(w.events.ofType('permission.denied')).toMatchObject([
      { permission: 'audit.read', username: 'editor' },
    ])
  })
})
