import type { InstanceReport } from '@flowadmin/core'
import { describe, expect, it } from 'vitest'
import { basicHeader, createWorld, fleetBasic, PLAIN, SCOPED } from './helpers.js'
import { createResponseValidator } from './openapi-validate.js'

/** A report of PLAIN (enabled) and SCOPED (beta disabled); its flows use `alpha-in`. */
const report = (overrides: Partial<InstanceReport> = {}): InstanceReport => ({
  nodeRedVersion: '4.1.2',
  modules: [
    {
      name: PLAIN.name,
      version: PLAIN.version,
      sets: [{ name: 'random', types: ['random'], enabled: true, loaded: true }],
    },
    {
      name: SCOPED.name,
      version: SCOPED.version,
      sets: [
        { name: 'alpha', types: ['alpha-in', 'alpha-out'], enabled: true, loaded: true },
        { name: 'beta', types: ['beta'], enabled: true, loaded: true },
        { name: 'gamma', types: ['gamma'], enabled: true, loaded: true },
      ],
    },
  ],
  typesInUse: ['alpha-in'],
  applied: null,
  failures: [],
  ...overrides,
})

/** Fleet mode; a change's answer waits for no instance unless told. */
const fleetWorld = (answerWaitMs = 0) => createWorld({ fleet: { answerWaitMs } })

describe('fleet mode: the instances’ routes', () => {
  it('an instance polls the desired state with an ETag, and a poll with that ETag and no wait is 304', async () => {
    const world = await fleetWorld()
    const first = await world.request('/fleet/instances/edge-1/desired', {
      headers: { authorization: fleetBasic() },
    })
    expect(first.status).toBe(200)
    expect(first.headers.get('cache-control')).toBe('no-store')
    const state = (await first.json()) as { version: string; modules: Array<{ name: string }> }
    expect(first.headers.get('etag')).toBe(`"${state.version}"`)
    expect(state.modules.map((module) => module.name)).toEqual([SCOPED.name, PLAIN.name])
    const again = await world.request('/fleet/instances/edge-1/desired', {
      headers: { authorization: fleetBasic(), 'if-none-match': `"${state.version}"` },
    })
    expect(again.status).toBe(304)
  })

  it('a held poll is answered as soon as the desired state changes', async () => {
    const world = await fleetWorld()
    const token = await world.login()
    const first = await world.request('/fleet/instances/edge-1/desired', {
      headers: { authorization: fleetBasic() },
    })
    const etag = first.headers.get('etag') as string
    const held = world.request('/fleet/instances/edge-1/desired', {
      headers: { authorization: fleetBasic(), 'if-none-match': etag, prefer: 'wait=30' },
    })
    expect((await world.put(`/nodes/${PLAIN.name}`, { enabled: false }, token)).status).toBe(200)
    const answer = await held
    expect(answer.status).toBe(200)
    expect(answer.headers.get('etag')).not.toBe(etag)
    const state = (await answer.json()) as { modules: Array<{ name: string; sets: unknown[] }> }
    expect(state.modules.find((module) => module.name === PLAIN.name)?.sets).toEqual([
      { name: 'random', enabled: false },
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

describe('fleet mode: the module routes and GET /fleet/instances', () => {
  it('lists instances with their drift and each module with every instance’s own state', async () => {
    const world = await fleetWorld()
    const token = await world.login()
    const send = (id: string, body: InstanceReport) =>
      world.request(`/fleet/instances/${id}/report`, {
        method: 'POST',
        headers: { authorization: fleetBasic(), 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    expect((await send('edge-1', report())).status).toBe(204)
    const withHand = report({
      typesInUse: [],
      modules: [
        ...report().modules,
        {
          name: 'by-hand',
          version: '1.0.0',
          sets: [{ name: 'h', types: ['h'], enabled: true, loaded: true }],
        },
      ],
    })
    expect((await send('edge-2', withHand)).status).toBe(204)
    // A disable of a type edge-1's flows use is refused, naming it; nothing changes.
    const refused = await world.put(`/nodes/${SCOPED.name}`, { enabled: false }, token)
    expect(refused.status).toBe(400)
    expect(await refused.json()).toEqual({
      code: 'type_in_use',
      message: 'Type in use: alpha-in (on edge-1)',
      types: ['alpha-in'],
      instances: ['edge-1'],
    })
    // A set no one uses: the answer carries each instance's state, both pending.
    const beta = await world.put(`/nodes/${SCOPED.name}/beta`, { enabled: false }, token)
    expect(beta.status).toBe(200)
    const body = (await beta.json()) as { enabled: boolean; instances: unknown[] }
    expect(body.enabled).toBe(false)
    expect(body.instances).toEqual([
      expect.objectContaining({ id: 'edge-1', drift: { module: SCOPED.name, reason: 'pending' } }),
      expect.objectContaining({ id: 'edge-2', drift: { module: SCOPED.name, reason: 'pending' } }),
    ])
    // edge-1's Node-RED refuses it; edge-2 applies it.
    const applied = report().modules.map((module) =>
      module.name === SCOPED.name
        ? {
            ...module,
            sets: module.sets.map((set) => (set.name === 'beta' ? { ...set, enabled: false } : set)),
          }
        : module,
    )
    await send(
      'edge-1',
      report({ failures: [{ module: SCOPED.name, action: 'disable', message: 'Type in use: beta' }] }),
    )
    await send('edge-2', {
      ...withHand,
      modules: [...applied, withHand.modules[2] as InstanceReport['modules'][number]],
    })
    const listed = await world.get('/fleet/instances', token)
    expect(listed.status).toBe(200)
    expect(await listed.json()).toEqual([
      expect.objectContaining({
        id: 'edge-1',
        resourceServer: 'fleet',
        nodeRedVersion: '4.1.2',
        connected: true,
        drift: [{ module: SCOPED.name, reason: 'refused', message: 'Type in use: beta' }],
      }),
      expect.objectContaining({ id: 'edge-2', drift: [{ module: 'by-hand', reason: 'installed_by_hand' }] }),
    ])
    // The module joined the desired state as edge-2 has it.
    const sets = (await (await world.get('/nodes', token)).json()) as Array<{ id: string }>
    expect(sets.map((set) => set.id)).toContain('by-hand/h')
    // Out of touch for longer than 40 s: not connected any more.
    world.clock.advance(41_000)
    const later = (await (await world.get('/fleet/instances', token)).json()) as Array<{ connected: boolean }>
    expect(later.map((instance) => instance.connected)).toEqual([false, false])
  })

  it('a change’s answer waits for the connected instances’ outcomes, and shows them', async () => {
    const world = await fleetWorld(30_000)
    const token = await world.login()
    const send = (body: InstanceReport) =>
      world.request('/fleet/instances/edge-1/report', {
        method: 'POST',
        headers: { authorization: fleetBasic(), 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    expect((await send(report({ typesInUse: [] }))).status).toBe(204)
    let answered = false
    const change = Promise.resolve(world.put(`/nodes/${PLAIN.name}`, { enabled: false }, token)).then(
      (res) => {
        answered = true
        return res
      },
    )
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(answered).toBe(false)
    // The instance applies it and reports: the answer comes, with its state.
    const applied = report({ typesInUse: [] }).modules.map((module) =>
      module.name === PLAIN.name
        ? { ...module, sets: module.sets.map((set) => ({ ...set, enabled: false })) }
        : module,
    )
    expect((await send(report({ typesInUse: [], modules: applied }))).status).toBe(204)
    const res = await change
    expect(res.status).toBe(200)
    expect(((await res.json()) as { instances: unknown[] }).instances).toEqual([
      { id: 'edge-1', connected: true, version: PLAIN.version, enabled: { random: false } },
    ])
  })

  it('a retired instance is forgotten: its types no longer refuse a disable', async () => {
    const world = await fleetWorld()
    const token = await world.login()
    const sent = await world.request('/fleet/instances/edge-1/report', {
      method: 'POST',
      headers: { authorization: fleetBasic(), 'content-type': 'application/json' },
      body: JSON.stringify(report()),
    })
    expect(sent.status).toBe(204)
    expect((await world.put(`/nodes/${SCOPED.name}`, { enabled: false }, token)).status).toBe(400)
    expect((await world.delete('/fleet/instances/edge-1')).status).toBe(401)
    // A token for a resource server (not for flowadmin) is refused as unknown.
    const foreign = await world.delete('/fleet/instances/edge-1', await world.loginAsFleet())
    expect([foreign.status, foreign.headers.get('WWW-Authenticate')]).toEqual([
      401,
      'Bearer realm="flowadmin", error="invalid_token"',
    ])
    const removed = await world.delete('/fleet/instances/edge-1', token)
    expect(removed.status).toBe(204)
    expect(await removed.text()).toBe('')
    expect(await (await world.get('/fleet/instances', token)).json()).toEqual([])
    expect(world.events.ofType('fleet.instance_removed')).toEqual([
      expect.objectContaining({ instance: 'edge-1', resourceServer: 'fleet', username: 'admin' }),
    ])
    const after = await world.put(`/nodes/${SCOPED.name}`, { enabled: false }, token)
    expect(await after.json()).toMatchObject({ name: SCOPED.name })
    expect(after.status).toBe(200)
    const again = await world.delete('/fleet/instances/edge-1', token)
    expect(again.status).toBe(404)
    expect(await again.text()).toBe('')
  })

  it('needs nodes.read, and is not there without fleet mode', async () => {
    const world = await fleetWorld()
    expect((await world.get('/fleet/instances')).status).toBe(401)
    const off = await createWorld()
    expect((await off.get('/fleet/instances', await off.login())).status).toBe(404)
  })
})

describe('fleet mode in the OpenAPI document', () => {
  it('lists the fleet routes, and every answer of theirs and of the module routes conforms to it', async () => {
    const world = await fleetWorld()
    const served = (await (await world.request('/openapi.json')).json()) as { paths: Record<string, object> }
    expect(Object.keys(served.paths)).toEqual(
      expect.arrayContaining([
        '/fleet/instances',
        '/fleet/instances/{id}/desired',
        '/fleet/instances/{id}/report',
      ]),
    )
    const validator = createResponseValidator(served)
    const token = await world.login()
    const problems: string[] = []
    const check = async (method: string, path: string, init: RequestInit = {}) => {
      const res = await world.request(path, { method, ...init })
      const result = await validator.check(method, `http://localhost${path}`, res)
      problems.push(...result.problems.map((problem) => `${result.operation} ${result.status}: ${problem}`))
      return result.status
    }
    const basic = { authorization: fleetBasic(), 'content-type': 'application/json' }
    const statuses = [
      await check('POST', '/fleet/instances/edge-1/report', {
        headers: basic,
        body: JSON.stringify(report()),
      }),
      await check('POST', '/fleet/instances/edge-1/report', { headers: basic, body: '[]' }),
      await check('POST', '/fleet/instances/edge-1/report', {
        headers: basic,
        body: JSON.stringify({ pad: 'y'.repeat(1_100_000) }),
      }),
      await check('GET', '/fleet/instances/edge-1/desired', { headers: basic }),
      await check('GET', '/fleet/instances/edge-1/desired'),
      await check('GET', '/fleet/instances', { headers: { authorization: `Bearer ${token}` } }),
      await check('GET', '/nodes', { headers: { authorization: `Bearer ${token}` } }),
      await check('PUT', `/nodes/${SCOPED.name}`, {
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ enabled: false }),
      }),
      await check('PUT', `/nodes/${SCOPED.name}/beta`, {
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ enabled: false }),
      }),
    ]
    const etag = (await world.request('/fleet/instances/edge-1/desired', { headers: basic })).headers.get(
      'etag',
    )
    statuses.push(
      await check('GET', '/fleet/instances/edge-1/desired', {
        headers: { ...basic, 'if-none-match': etag as string },
      }),
    )
    expect(statuses).toEqual([204, 400, 413, 200, 401, 200, 200, 400, 200, 304])
    expect(problems).toEqual([])
  })
})
