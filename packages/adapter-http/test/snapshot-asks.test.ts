// A snapshot of the flows an instance runs: an operator asks, the instance's poll says so, the
// instance sends its flows, kept as the asker's snapshot; once.
import { describe, expect, it } from 'vitest'
import { instance, report } from './fleet-world.js'
import { ADDRESS, createWorld, expectChallenge, fleetBasic, type World } from './helpers.js'
import { createResponseValidator } from './openapi-validate.js'

const FLOWS = [
  { id: 't1', type: 'tab', label: 'Line 1' },
  { id: 'n1', type: 'inject', z: 't1', wires: [['n2']] },
  { id: 'n2', type: 'debug', z: 't1', wires: [] },
]

const world = () =>
  createWorld({
    fleet: { answerWaitMs: 0 },
    users: [
      { username: 'viewer', permissions: ['flows.read'] },
      { username: 'writer', permissions: ['flows.write'] },
    ],
  })

const send = (w: World, id: string, body: unknown) =>
  w.request(`/fleet/instances/${id}/flows`, {
    method: 'POST',
    headers: { authorization: fleetBasic(), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

describe('a snapshot of the flows an instance runs', () => {
  it('is asked of the instance in its poll, sent by it, and kept as the asker’s; once', async () => {
    const w = await world()
    const validator = createResponseValidator(await (await w.request('/openapi.json')).json())
    const checked = async (method: string, url: string, res: Response) => {
      const result = await validator.check(method, `http://localhost${url}`, res.clone())
      expect(result.problems, `${method} ${url}`).toEqual([])
      return res
    }
    const admin = await w.login()
    const press = instance(w, 'press-1')
    expect((await press.send(report())).status).toBe(204)
    const first = await press.poll()
    const version = ((await first.json()) as { version: string }).version
    const unchanged = { 'if-none-match': `"${version}"`, prefer: 'wait=0' }
    expect((await press.poll(unchanged)).status).toBe(304)

    const unknown = await w.post('/fleet/instances/press-9/snapshots', { name: 'line-1' }, admin)
    expect(unknown.status).toBe(404)
    const askUrl = '/fleet/instances/press-1/snapshots'
    const asked = await checked('POST', askUrl, await w.post(askUrl, { name: 'line-1' }, admin))
    expect(asked.status).toBe(202)
    expect(await asked.json()).toEqual({
      instance: 'press-1',
      name: 'line-1',
      askedBy: 'admin',
      askedAt: new Date(w.clock.now()).toISOString(),
    })

    // The version is unchanged, yet the poll ends with a 200 that carries the ask.
    const polled = await checked('GET', '/fleet/instances/press-1/desired', await press.poll(unchanged))
    expect(polled.status).toBe(200)
    expect(await polled.json()).toMatchObject({ version, snapshot: { name: 'line-1' } })

    const other = await send(w, 'press-1', { name: 'line-2', flows: FLOWS })
    expect(other.status).toBe(409)
    expect(await other.json()).toEqual({
      code: 'snapshot_not_asked',
      message: 'Nobody asked instance press-1 for its flows as line-2, or they were sent already',
    })
    const sent = await checked(
      'POST',
      '/fleet/instances/press-1/flows',
      await send(w, 'press-1', { name: 'line-1', flows: FLOWS }),
    )
    expect(sent.status).toBe(201)
    const made = (await sent.json()) as { id: string }
    expect(made).toMatchObject({ name: 'line-1', version: 1, nodes: 3, createdBy: 'admin', unknownTypes: [] })
    expect(JSON.parse(await (await w.get(`/fleet/snapshots/${made.id}`, admin)).text())).toEqual({
      name: 'line-1',
      modules: [],
      flows: FLOWS,
    })
    // The asker made it, from no address of theirs; the instance sent it, from its own.
    expect(w.events.ofType('fleet.snapshot_created')).toMatchObject([
      {
        name: 'line-1',
        instance: 'press-1',
        username: 'admin',
        clientId: null,
        address: null,
        sender: { client: 'fleet', address: ADDRESS },
      },
    ])

    // Spent: the poll is a 304 again, and the same flows sent again are refused.
    expect((await press.poll(unchanged)).status).toBe(304)
    expect((await send(w, 'press-1', { name: 'line-1', flows: FLOWS })).status).toBe(409)
  })

  it('spends the ask on flows too large to read, and says why in the trail; the poll no longer carries it', async () => {
    const w = await createWorld({ fleet: { answerWaitMs: 0, snapshots: { maxBytes: 1000 } } })
    const admin = await w.login()
    const press = instance(w, 'press-1')
    await press.send(report())
    const version = ((await (await press.poll()).json()) as { version: string }).version
    const unchanged = { 'if-none-match': `"${version}"`, prefer: 'wait=0' }
    await w.post('/fleet/instances/press-1/snapshots', { name: 'line-1' }, admin)
    expect((await press.poll(unchanged)).status).toBe(200)
    const flows = [{ id: 'c1', type: 'comment', info: 'x'.repeat(4000) }]
    const big = await send(w, 'press-1', { name: 'line-1', flows })
    expect(big.status).toBe(413)
    expect(await big.json()).toMatchObject({ code: 'payload_too_large' })
    expect((await press.poll(unchanged)).status).toBe(304)
    expect(w.events.ofType('fleet.snapshot_refused')).toEqual([
      {
        type: 'fleet.snapshot_refused',
        at: w.clock.now(),
        instance: 'press-1',
        name: 'line-1',
        message: 'the flows sent were more than 4000 bytes, the most a body may have',
        sender: { client: 'fleet', address: ADDRESS },
        username: 'admin',
        clientId: null,
        address: null,
      },
    ])
    // Sent again, it is no longer asked for, and nothing more is written.
    expect((await send(w, 'press-1', { name: 'line-1', flows })).status).toBe(413)
    expect(w.events.ofType('fleet.snapshot_refused')).toHaveLength(1)
  })

  it('spends the ask on flows it refuses; needs flows.write and flows.read on flowadmin to ask', async () => {
    const w = await world()
    const admin = await w.login()
    const press = instance(w, 'press-1')
    await press.send(report())
    await w.post('/fleet/instances/press-1/snapshots', { name: 'line-1' }, admin)
    const bad = await send(w, 'press-1', { name: 'line-1', flows: [{ id: 'n1', type: 'inject', z: 't9' }] })
    expect(bad.status).toBe(400)
    expect(await bad.json()).toEqual({
      code: 'invalid_request',
      message: 'flows[0] (id "n1"): z names "t9", no tab or subflow of these flows',
    })
    expect(w.events.ofType('fleet.snapshot_refused')).toMatchObject([
      { instance: 'press-1', name: 'line-1', username: 'admin' },
    ])
    expect((await send(w, 'press-1', { name: 'line-1', flows: [] })).status).toBe(409)

    const malformed = await w.post('/fleet/instances/press-1/snapshots', { name: 'line 1' }, admin)
    expect(malformed.status).toBe(400)
    const viewer = await w.login('viewer', '')
    await expectChallenge(
      await w.post('/fleet/instances/press-1/snapshots', { name: 'x' }, viewer),
      'insufficient_scope',
    )
    await expectChallenge(
      await w.post('/fleet/instances/press-1/snapshots', { name: 'x' }, await w.login('reader', '')),
      'insufficient_scope',
    )
    await expectChallenge(
      await w.post('/fleet/instances/press-1/snapshots', { name: 'x' }, await w.login('writer', '')),
      'insufficient_scope',
    )
    // One refusal a request, naming the first permission missing.
    expect(w.events.ofType('permission.denied').map((event) => [event.username, event.permission])).toEqual([
      ['viewer', 'flows.write'],
      ['reader', 'flows.write'],
      ['writer', 'flows.read'],
    ])
    // Without the fleet's credentials, an instance's route answers as the OAuth endpoints do.
    const anonymous = await w.request('/fleet/instances/press-1/flows', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'line-1', flows: [] }),
    })
    expect(anonymous.status).toBe(401)
    expect(await w.stores.snapshots.asked('press-1')).toBeNull()
  })
})
