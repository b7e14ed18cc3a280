import type { InstanceReport } from '@flowadmin/core'
import { describe, expect, it } from 'vitest'
import { fleetWorld, instance, leased, PLAIN, report } from './fleet-world.js'
import { basicHeader, fleetBasic } from './helpers.js'

describe('fleet mode: the instances’ routes', () => {
  it('an instance polls the desired state with an ETag (the revision) and the hold; a poll with that ETag and no wait is 304', async () => {
    const world = await fleetWorld({ holdSeconds: 20 })
    const edge = instance(world, 'edge-1')
    const first = await edge.poll()
    expect(first.status).toBe(200)
    // The headers every never-stored JSON answer of the API carries.
    expect(
      Object.fromEntries(
        ['cache-control', 'pragma', 'x-content-type-options', 'content-type'].map((name) => [
          name,
          first.headers.get(name),
        ]),
      ),
    ).toEqual({
      'cache-control': 'no-store',
      pragma: 'no-cache',
      'x-content-type-options': 'nosniff',
      'content-type': 'application/json',
    })
    const state = (await first.json()) as { version: string; hold: number; modules: Array<{ name: string }> }
    expect(state.version).toBe(String(await world.stores.fleet.revision()))
    expect(first.headers.get('etag')).toBe(`"${state.version}"`)
    expect(state.hold).toBe(20)
    expect(state.modules.map((module) => module.name)).toEqual(['@acme/flow-kit', PLAIN.name])
    const again = await edge.poll({ 'if-none-match': `"${state.version}"` })
    expect(again.status).toBe(304)
    expect([
      again.headers.get('etag'),
      again.headers.get('cache-control'),
      again.headers.get('pragma'),
    ]).toEqual([`"${state.version}"`, 'no-store', 'no-cache'])
  })

  it('a held poll is answered as soon as the desired state changes, not by a report', async () => {
    const world = await fleetWorld()
    const token = await world.login()
    const edge = instance(world, 'edge-1')
    const etag = (await edge.poll()).headers.get('etag') as string
    let answered = false
    const held = edge.poll({ 'if-none-match': etag, prefer: 'wait=30' }).then((res) => {
      answered = true
      return res
    })
    expect((await edge.send(report())).status).toBe(204)
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(answered).toBe(false)
    expect((await world.put(`/nodes/${PLAIN.name}`, { enabled: false }, token)).status).toBe(200)
    const answer = await held
    expect(answer.status).toBe(200)
    expect(answer.headers.get('etag')).toBe(`"${Number(etag.slice(1, -1)) + 1}"`)
    const state = (await answer.json()) as { modules: Array<{ name: string; sets: unknown[] }> }
    expect(state.modules.find((module) => module.name === PLAIN.name)?.sets).toEqual([
      { name: 'random', enabled: false },
    ])
  })

  it('holds a poll no longer than the hold, whatever wait it asks for', async () => {
    const world = await fleetWorld({ holdSeconds: 1 })
    const edge = instance(world, 'edge-1')
    const etag = (await edge.poll()).headers.get('etag') as string
    const started = Date.now()
    const answer = await edge.poll({ 'if-none-match': etag, prefer: 'wait=30' })
    expect(answer.status).toBe(304)
    expect(Date.now() - started).toBeLessThan(5000)
  })

  it('a poll connects the instance; a poll whose connection closes before its answer disconnects it at once', async () => {
    const world = await fleetWorld({ holdSeconds: 30 })
    const token = await world.login()
    const edge = instance(world, 'edge-1')
    const etag = (await edge.poll()).headers.get('etag') as string
    const gone = new AbortController()
    const held = edge.poll({ 'if-none-match': etag, prefer: 'wait=30' }, gone.signal).catch(() => null)
    await leased(world, 'edge-1')
    const listed = async () =>
      (await (await world.get('/fleet/instances', token)).json()) as Array<{ id: string; connected: boolean }>
    expect(await listed()).toEqual([expect.objectContaining({ id: 'edge-1', connected: true })])
    expect(world.events.ofType('fleet.connected')).toEqual([
      expect.objectContaining({ instance: 'edge-1', resourceServer: 'fleet', clientId: 'fleet' }),
    ])
    const cut = Date.now()
    gone.abort()
    await held
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(await listed()).toEqual([expect.objectContaining({ id: 'edge-1', connected: false })])
    expect(Date.now() - cut).toBeLessThan(1000)
    expect(world.events.ofType('fleet.disconnected')).toEqual([
      expect.objectContaining({ instance: 'edge-1', resourceServer: 'fleet' }),
    ])
  })

  it('an instance that says it leaves is disconnected at once, held poll or not; only its own resource server may say so', async () => {
    const world = await fleetWorld({ holdSeconds: 30 })
    const token = await world.login()
    const edge = instance(world, 'edge-1')
    await edge.poll()
    await leased(world, 'edge-1')
    const leave = (authorization?: string) =>
      world.request('/fleet/instances/edge-1/lease', {
        method: 'DELETE',
        headers: authorization === undefined ? {} : { authorization },
      })
    expect((await leave()).status).toBe(401)
    expect((await leave(basicHeader('fleet', 'not-its-secret'))).status).toBe(401)
    const listed = async () =>
      (await (await world.get('/fleet/instances', token)).json()) as Array<{ id: string; connected: boolean }>
    expect(await listed()).toEqual([expect.objectContaining({ id: 'edge-1', connected: true })])
    const left = await leave(fleetBasic())
    expect(left.status).toBe(204)
    expect(left.headers.get('cache-control')).toBe('no-store')
    expect(await listed()).toEqual([expect.objectContaining({ id: 'edge-1', connected: false })])
    expect(world.events.ofType('fleet.disconnected')).toEqual([
      expect.objectContaining({ instance: 'edge-1', resourceServer: 'fleet' }),
    ])
    // Said twice: no second event.
    expect((await leave(fleetBasic())).status).toBe(204)
    expect(world.events.ofType('fleet.disconnected')).toHaveLength(1)
    // Its next poll connects it again.
    await edge.poll()
    await leased(world, 'edge-1')
    expect(await listed()).toEqual([expect.objectContaining({ id: 'edge-1', connected: true })])
    // One never seen leaves nothing behind.
    const ghost = await world.request('/fleet/instances/ghost/lease', {
      method: 'DELETE',
      headers: { authorization: fleetBasic() },
    })
    expect(ghost.status).toBe(204)
    expect((await listed()).map((one) => one.id)).toEqual(['edge-1'])
    // Another resource server may not speak for it (checked at the core, the world has one server).
    expect(await world.core.fleet?.leave('edge-1', 'another')).toEqual({
      ok: false,
      error: { code: 'instance_conflict', instance: 'edge-1' },
    })
  })

  it('a report is saved when its sequence is greater than the stored one; a stale one is acknowledged and changes nothing', async () => {
    const world = await fleetWorld()
    const edge = instance(world, 'edge-1')
    expect((await edge.send(report({ nodeRedVersion: '4.1.3' }), { sequence: 10 })).status).toBe(204)
    expect((await edge.send(report({ nodeRedVersion: '4.1.1' }), { sequence: 9 })).status).toBe(204)
    expect((await world.stores.fleet.find('edge-1'))?.report?.nodeRedVersion).toBe('4.1.3')
    // An older helper sends none: saved.
    const { sequence: _none, ...old } = { ...report({ nodeRedVersion: '4.0.0' }), sequence: undefined }
    const sent = await world.request('/fleet/instances/edge-1/report', {
      method: 'POST',
      headers: { authorization: fleetBasic(), 'content-type': 'application/json' },
      body: JSON.stringify(old),
    })
    expect(sent.status).toBe(204)
    expect((await world.stores.fleet.find('edge-1'))?.report?.nodeRedVersion).toBe('4.0.0')
  })

  it('takes hand changes, reverts, a module’s pending version and `applying`, and tells them as events', async () => {
    const world = await fleetWorld()
    const edge = instance(world, 'edge-1')
    const [plain, scoped] = report().modules as [
      InstanceReport['modules'][number],
      InstanceReport['modules'][number],
    ]
    const sent = await edge.send(
      report({
        modules: [
          { ...plain, pendingVersion: '0.5.0', sets: [{ ...plain.sets[0], enabled: false } as never] },
          scoped,
        ],
        applying: true,
        changes: [{ module: PLAIN.name, action: 'disable', by: 'alice', at: 1_700_000_000_000 }],
        reverted: [{ module: PLAIN.name, action: 'enable' }],
      }),
    )
    expect(sent.status).toBe(204)
    expect(world.events.ofType('fleet.changed_by_hand')).toEqual([
      expect.objectContaining({ instance: 'edge-1', module: PLAIN.name, action: 'disable', by: 'alice' }),
    ])
    expect(world.events.ofType('fleet.reverted')).toEqual([
      expect.objectContaining({ instance: 'edge-1', module: PLAIN.name, action: 'enable' }),
    ])
    const token = await world.login()
    const [listed] = (await (await world.get('/fleet/instances', token)).json()) as Array<{
      drift: unknown[]
    }>
    expect(listed?.drift).toEqual([
      { module: PLAIN.name, reason: 'changed_by_hand', by: 'alice', at: 1_700_000_000_000 },
    ])
  })

  it('refuses callers without the resource server’s credentials, malformed ids and reports, and another server’s id', async () => {
    const world = await fleetWorld()
    const none = await world.request('/fleet/instances/edge-1/desired')
    expect(none.status).toBe(401)
    expect(none.headers.get('www-authenticate')).toBe('Basic realm="flowadmin"')
    const wrong = await world.request('/fleet/instances/edge-1/desired', {
      headers: { authorization: basicHeader('fleet', 'not the secret') },
    })
    expect(wrong.status).toBe(401)
    const badId = await world.request('/fleet/instances/..%2Fx/desired', {
      headers: { authorization: fleetBasic() },
    })
    expect(badId.status).toBe(400)
    expect(await badId.json()).toMatchObject({ code: 'invalid_request' })
    for (const id of ['%25', '%2525', 'a%00b', '-x', 'x'.repeat(129)]) {
      const odd = await world.request(`/fleet/instances/${id}/desired`, {
        headers: { authorization: fleetBasic() },
      })
      expect(odd.status).toBe(400)
    }
    const post = (body: string, contentType = 'application/json') =>
      world.request('/fleet/instances/edge-1/report', {
        method: 'POST',
        headers: { authorization: fleetBasic(), 'content-type': contentType },
        body,
      })
    expect((await post('{')).status).toBe(400)
    const shape = await post(JSON.stringify({ ...report(), modules: 'none' }))
    expect(shape.status).toBe(400)
    expect(((await shape.json()) as { message: string }).message).toContain('modules')
    const large = await post(
      JSON.stringify({ ...report(), typesInUse: ['x'.repeat(200)], pad: 'y'.repeat(1_100_000) }),
    )
    expect(large.status).toBe(413)
    // Out of bounds: a sequence that is no whole number from 0, too many hand changes, an unknown action.
    const change = { module: 'm', action: 'enable', by: null, at: 1 }
    for (const [extra, field] of [
      [{ sequence: -1 }, 'sequence'],
      [{ sequence: 1.5 }, 'sequence'],
      [{ changes: Array(101).fill(change) }, 'changes'],
      [{ reverted: [{ module: 'm', action: 'restart' }] }, 'reverted.0.action'],
      [{ applying: 'yes' }, 'applying'],
    ] as const) {
      const refused = await post(JSON.stringify({ ...report(), ...extra }))
      expect(refused.status).toBe(400)
      expect(((await refused.json()) as { message: string }).message).toContain(`Invalid field ${field}`)
    }
    // Text that cannot be stored or shown as it is: refused, naming the field, nothing recorded.
    const module = report().modules[0] as InstanceReport['modules'][number]
    const odd: Array<[Partial<InstanceReport>, string]> = [
      [{ nodeRedVersion: 'x\u0000y' }, 'nodeRedVersion'],
      [{ nodeRedVersion: 'x\ud800y' }, 'nodeRedVersion'],
      [{ applied: '\udc00' }, 'applied'],
      [{ typesInUse: ['ok', 'line\nforged'] }, 'typesInUse.1'],
      [{ modules: [{ ...module, name: 'a\u0007b' }] }, 'modules.0.name'],
      [
        {
          modules: [
            { ...module, sets: [{ name: 's', types: [], enabled: true, loaded: false, err: 'e\u0000' }] },
          ],
        },
        'modules.0.sets.0.err',
      ],
      [{ failures: [{ module: 'm', action: 'install', message: 'npm \u009b error' }] }, 'failures.0.message'],
      [{ changes: [{ ...change, action: 'enable', by: 'a\nb' }] }, 'changes.0.by'],
    ]
    for (const [overrides, field] of odd) {
      const refused = await post(JSON.stringify(report(overrides)))
      expect(refused.status).toBe(400)
      expect(await refused.json()).toEqual({
        code: 'invalid_request',
        message: `Invalid field ${field}: must be well-formed text without control characters`,
      })
    }
    expect(await world.core.fleet?.instances()).toEqual([])
    // Text beyond the basic plane, written as a surrogate pair, is well-formed.
    expect((await post(JSON.stringify(report({ nodeRedVersion: '4.1.2 \ud83d\ude80' })))).status).toBe(204)
    expect((await post(JSON.stringify(report()))).status).toBe(204)
    // The id is fleet's now; no other resource server may use it. (The world has one server, so
    // the conflict is checked at the core with another name.)
    const conflict = await world.core.fleet?.poll('edge-1', 'another')
    expect(conflict).toEqual({ ok: false, error: { code: 'instance_conflict', instance: 'edge-1' } })
  })
})
