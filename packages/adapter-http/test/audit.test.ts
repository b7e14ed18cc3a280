import { describe, expect, test } from 'vitest'
import { MAX_REPORT_BYTES } from '../src/routes/audit.js'
import { exportFormatOf } from '../src/routes/audit-format.js'
import { MAX_REPORTED_EVENTS } from '../src/routes/audit-schemas.js'
import {
  basicHeader,
  createWorld as createWorldAt,
  expectChallenge,
  fleetBasic,
  type World,
} from './helpers.js'

const T0 = Date.UTC(2026, 10, 27, 6, 0, 0)
/** flowadmin's clock in these tests: after every time reported. */
const NOW = T0 + 3_600_000

async function createWorld(options?: Parameters<typeof createWorldAt>[0]): Promise<World> {
  const world = await createWorldAt(options)
  world.clock.set(NOW)
  return world
}

const reported = (overrides: Record<string, unknown> = {}) => ({
  time: T0,
  instance: 'line-1',
  actor: 'alice',
  event: 'flows.set',
  address: '10.0.0.7',
  details: { type: 'full' },
  ...overrides,
})

function report(world: World, events: unknown, authorization: string | null = fleetBasic()) {
  return world.request('/audit/events', {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      ...(authorization === null ? {} : { Authorization: authorization }),
    },
    body: typeof events === 'string' ? events : JSON.stringify({ events }),
  })
}

async function trail(world: World, query = '', token?: string) {
  const res = await world.get(`/audit${query}`, token ?? (await world.login()))
  expect(res.status).toBe(200)
  return (await res.json()) as { events: Array<Record<string, unknown>>; next: string | null }
}

async function expectInvalid(res: Response, message: string | RegExp) {
  expect(res.status).toBe(400)
  const body = (await res.json()) as { code: string; message: string }
  expect(body.code).toBe('invalid_request')
  expect(body.message).toMatch(message)
}

describe('POST /audit/events: an instance reports', () => {
  test('keeps the events under the resource server its credentials prove, secrets dropped', async () => {
    const world = await createWorld()
    const res = await report(world, [
      reported(),
      reported({
        time: T0 + 1000,
        actor: 'mallory',
        event: 'auth.login.fail.credentials',
        details: { username: 'mallory', password: 'guess', nested: { access_token: 'abc', kept: 1 } },
      }),
    ])
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ accepted: 2 })
    expect((await trail(world)).events).toEqual([
      {
        time: new Date(T0 + 1000).toISOString(),
        received: new Date(NOW).toISOString(),
        time_suspect: false,
        instance: 'fleet/line-1',
        actor: 'mallory',
        event: 'auth.login.fail.credentials',
        outcome: 'failure',
        address: '10.0.0.7',
        address_reported: true,
        details: { username: 'mallory', nested: { kept: 1 } },
      },
      {
        time: new Date(T0).toISOString(),
        received: new Date(NOW).toISOString(),
        time_suspect: false,
        instance: 'fleet/line-1',
        actor: 'alice',
        event: 'flows.set',
        outcome: 'success',
        address: '10.0.0.7',
        address_reported: true,
        details: { type: 'full' },
      },
    ])
  })

  test('an instance cannot write as another instance’s server, or as flowadmin', async () => {
    const world = await createWorld({ resourceServers: [{ id: 'edge', secret: 'edge-secret' }] })
    // Naming a server, or any key beyond an event's own, is refused and keeps nothing.
    await expectInvalid(await report(world, [reported({ server: 'edge' })]), /nothing else/)
    await expectInvalid(await report(world, [reported(), reported({ source: 'flowadmin' })]), /nothing else/)
    // Calling itself flowadmin makes it an instance of its own server named so, nothing more.
    expect((await report(world, [reported({ instance: 'flowadmin' })])).status).toBe(200)
    // Another server's id with this server's secret is no credential at all.
    const forged = await report(world, [reported()], basicHeader('edge', 'fleet-secret'))
    expect(forged.status).toBe(401)
    expect(await forged.json()).toMatchObject({ error: 'invalid_client' })
    expect((await report(world, [reported()], null)).status).toBe(401)

    expect((await trail(world, '?instance=flowadmin')).events).toEqual([])
    expect((await trail(world, '?instance=edge')).events).toEqual([])
    const all = await trail(world)
    expect(all.events.map((event) => event.instance)).toEqual(['fleet/flowadmin'])
  })

  test('refuses what is not a report, naming the field, and keeps nothing of it', async () => {
    const world = await createWorld()
    await expectInvalid(await report(world, 'not json'), /JSON/)
    await expectInvalid(await report(world, '{"events": {}}'), /events must be an array/)
    await expectInvalid(await report(world, [reported({ time: '2026-01-01' })]), /time must be a number/)
    await expectInvalid(await report(world, [reported({ instance: '' })]), /instance must not be empty/)
    await expectInvalid(
      await report(world, [reported({ instance: 'line/1' })]),
      /^events\[\]\.instance must not contain "\/"/,
    )
    await expectInvalid(
      await report(world, [reported({ actor: 'a\u0000b' })]),
      /actor must not contain control/,
    )
    await expectInvalid(await report(world, [reported({ event: 'flows set' })]), /event must be 1 to 128/)
    await expectInvalid(await report(world, [reported({ details: [] })]), /details must be an object/)
    const tooMany = Array.from({ length: MAX_REPORTED_EVENTS + 1 }, () => reported())
    await expectInvalid(await report(world, tooMany), new RegExp(`at most ${MAX_REPORTED_EVENTS}`))
    const huge = await report(world, [reported({ details: { text: 'x'.repeat(MAX_REPORT_BYTES) } })])
    expect(huge.status).toBe(413)
    expect(await huge.json()).toMatchObject({ code: 'payload_too_large' })
    expect((await trail(world)).events).toEqual([])
  })

  test('checks the credentials before reading the body: a wrong secret is 401 whatever it sent', async () => {
    const world = await createWorld()
    const wrong = basicHeader('fleet', 'wrong-secret')
    for (const body of ['not json', JSON.stringify({ events: [{ text: 'x'.repeat(MAX_REPORT_BYTES) }] })]) {
      const res = await report(world, body, wrong)
      expect(res.status).toBe(401)
      expect(await res.json()).toMatchObject({ error: 'invalid_client' })
    }
  })

  test('keeps the time an event claims beside the time it was received, suspect outside 24 hours before to 5 minutes after', async () => {
    const world = await createWorld()
    const HOUR = 3_600_000
    const claims = [
      ['1970', 0, true],
      ['a day and a moment ago', NOW - 24 * HOUR - 1, true],
      ['a day ago', NOW - 24 * HOUR, false],
      ['5 minutes ahead', NOW + 5 * 60_000, false],
      ['a moment more', NOW + 5 * 60_000 + 1, true],
      ['2100', Date.UTC(2100, 0, 1), true],
    ] as const
    const res = await report(
      world,
      claims.map(([name, time]) => reported({ time, details: { name } })),
    )
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ accepted: claims.length })
    world.clock.set(NOW + HOUR)
    const events = (await trail(world)).events.reverse()
    expect(
      events.map(({ time, received, time_suspect, details }) => [details, time, received, time_suspect]),
    ).toEqual(
      claims.map(([name, time, suspect]) => [
        { name },
        new Date(time).toISOString(),
        new Date(NOW).toISOString(),
        suspect,
      ]),
    )
    // Searched by either time: what was received then, and what claims to have happened then.
    expect((await trail(world, '?received_since=2026-11-27T07:00:00Z')).events).toHaveLength(claims.length)
    expect((await trail(world, '?received_until=2026-11-27T07:00:00Z')).events).toEqual([])
    expect((await trail(world, '?until=1970-01-02')).events.map((event) => event.details)).toEqual([
      { name: '1970' },
    ])
    expect((await trail(world, '?since=2099-01-01')).events.map((event) => event.details)).toEqual([
      { name: '2100' },
    ])
  })

  test('shows the last received first, whatever time an instance reports', async () => {
    const world = await createWorld()
    expect((await report(world, [reported({ time: NOW, event: 'first' })])).status).toBe(200)
    expect((await report(world, [reported({ time: 0, event: 'late' })])).status).toBe(200)
    const events = (await trail(world, '?instance=fleet')).events.map((event) => event.event)
    expect(events).toEqual(['late', 'first'])
    const page = await trail(world, '?instance=fleet&limit=1')
    expect((await trail(world, `?instance=fleet&cursor=${page.next}`)).events.map((e) => e.event)).toEqual([
      'first',
    ])
  })
})

describe('GET /audit', () => {
  async function seeded() {
    const world = await createWorld()
    const events = Array.from({ length: 30 }, (_, i) =>
      reported({
        time: T0 + i * 60_000,
        instance: i % 2 === 0 ? 'line-1' : 'line-2',
        actor: i % 3 === 0 ? 'alice' : 'bob',
        event: i % 5 === 0 ? 'nodes.install' : 'flows.set',
        details: { i, ...(i % 7 === 0 && { error: 'not_found' }) },
      }),
    )
    expect((await report(world, events)).status).toBe(200)
    return world
  }

  test('needs audit.read: `read` covers it, a token with other rights does not', async () => {
    const world = await seeded()
    expect((await trail(world, '', await world.login('reader', 'read'))).events).toHaveLength(30)
    await expectChallenge(await world.get('/audit', await world.login('editor', '')), 'insufficient_scope')
    await expectChallenge(await world.get('/audit'))
  })

  test('filters by instance, actor, event prefix, outcome, since and until', async () => {
    const world = await seeded()
    const token = await world.login()
    const indexes = async (query: string) =>
      (await trail(world, query, token)).events.map((event) => (event.details as { i: number }).i)
    expect(await indexes('?instance=fleet/line-2&event=nodes.')).toEqual([25, 15, 5])
    expect(await indexes('?actor=alice&outcome=failure')).toEqual([21, 0])
    expect(
      await indexes('?instance=fleet&since=2026-11-27T06:27:00Z&until=2026-11-27T07:29:00%2B01:00'),
    ).toEqual([28, 27])
    expect(await indexes('?until=2026-11-27')).toEqual([])
    expect(await indexes('?instance=flowadmin')).toEqual([])
  })

  test('answers pages newest first with a cursor to the next', async () => {
    const world = await seeded()
    const token = await world.login()
    const seen: number[] = []
    let query = '?limit=7'
    for (let pages = 0; pages < 10; pages++) {
      const page = await trail(world, query, token)
      seen.push(...page.events.map((event) => (event.details as { i: number }).i))
      if (page.next === null) break
      query = `?limit=7&cursor=${encodeURIComponent(page.next)}`
    }
    expect(seen).toEqual(Array.from({ length: 30 }, (_, i) => 29 - i))
  })

  test('says which parameter is wrong', async () => {
    const world = await seeded()
    const token = await world.login()
    const get = (query: string) => world.get(`/audit${query}`, token)
    await expectInvalid(await get('?since=yesterday'), /^since must be an ISO 8601 time/)
    await expectInvalid(await get('?until=2026-11-27T06:00:00'), /^until must be an ISO 8601 time/)
    await expectInvalid(await get('?since=2026-02-31T00:00:00Z'), /^since is not a valid date/)
    await expectInvalid(await get('?outcome=maybe'), /^outcome must be success or failure/)
    await expectInvalid(await get('?limit=0'), /^limit must be a whole number from 1 to 1000/)
    await expectInvalid(await get('?limit=1001'), /^limit must be a whole number from 1 to 1000/)
    await expectInvalid(await get('?cursor=abc'), /^cursor is not one this API gave/)
    await expectInvalid(await get('?actor=a%00b'), /^actor must not contain control characters/)
    await expectInvalid(await get('?event=flows%00'), /^event must not contain control characters/)
    await expectInvalid(await get('?instance=fleet/a%0Ab'), /^instance must not contain control characters/)
    await expectInvalid(await get(`?actor=${'a'.repeat(257)}`), /^actor must be at most 256 characters/)
  })

  test('streams every match as CSV or NDJSON, past one page of the store', async () => {
    const world = await createWorld()
    for (let batch = 0; batch < 5; batch++) {
      const events = Array.from({ length: 500 }, (_, i) =>
        reported({
          time: T0 + batch * 500 + i,
          actor: i === 0 ? '=HYPERLINK("x")' : 'alice',
          details: { n: batch * 500 + i },
        }),
      )
      expect((await report(world, events)).status).toBe(200)
    }
    const token = await world.login()
    const csv = await world.request('/audit?actor=alice', {
      headers: { Authorization: `Bearer ${token}`, Accept: 'text/csv' },
    })
    expect(csv.status).toBe(200)
    expect(csv.headers.get('Content-Type')).toBe('text/csv; charset=utf-8')
    const lines = (await csv.text()).split('\r\n')
    expect(lines[0]).toBe(
      'time,instance,actor,event,outcome,address,address_reported,details,received,time_suspect',
    )
    expect(lines.at(-1)).toBe('')
    expect(lines).toHaveLength(1 + 2495 + 1)
    expect(lines[1]).toBe(
      `${new Date(T0 + 2499).toISOString()},fleet/line-1,alice,flows.set,success,10.0.0.7,true,"{""n"":2499}",${new Date(NOW).toISOString()},false`,
    )

    const ndjson = await world.request('/audit', {
      headers: { Authorization: `Bearer ${token}`, Accept: 'application/x-ndjson' },
    })
    expect(ndjson.headers.get('Content-Type')).toBe('application/x-ndjson')
    const events = (await ndjson.text())
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { actor: string; details: { n: number } })
    expect(events).toHaveLength(2500)
    expect(events.map((event) => event.details.n)).toEqual(Array.from({ length: 2500 }, (_, i) => 2499 - i))
    // A cell that a spreadsheet would run is written as text.
    const all = await world.request('/audit?since=2026-01-01', {
      headers: { Authorization: `Bearer ${token}`, Accept: 'text/csv' },
    })
    expect((await all.text()).split('\r\n').filter((line) => line.includes('HYPERLINK'))).toEqual(
      expect.arrayContaining([expect.stringContaining(`,"'=HYPERLINK(""x"")",`)]),
    )
  })

  test('picks the format from Accept by quality, JSON when none is ours', () => {
    expect(exportFormatOf(undefined)).toBe('json')
    expect(exportFormatOf('text/html, */*')).toBe('json')
    expect(exportFormatOf('application/json;q=0.5, text/csv')).toBe('csv')
    expect(exportFormatOf('text/csv;q=0, application/x-ndjson')).toBe('ndjson')
  })
})
