import type { InstanceReport } from '@flowadmin/core'
import { describe, expect, it } from 'vitest'
import { fleetWorld, instance, leased, PLAIN, report, SCOPED } from './fleet-world.js'
import { createWorld, fleetBasic } from './helpers.js'
import { createResponseValidator } from './openapi-validate.js'

const BY_HAND = {
  name: 'by-hand',
  version: '1.0.0',
  sets: [
    { name: 'h', types: ['h'], enabled: true, loaded: true },
    { name: 'i', types: ['i'], enabled: false, loaded: false },
  ],
}

/** SCOPED as an instance has it, set `beta` as given. */
const scopedWith = (beta: boolean) =>
  report().modules.map((module) =>
    module.name === SCOPED.name
      ? { ...module, sets: module.sets.map((set) => (set.name === 'beta' ? { ...set, enabled: beta } : set)) }
      : module,
  )

describe('fleet mode: the module routes and GET /fleet/instances', () => {
  it('lists instances with their drift and each module with every instance’s own state', async () => {
    const world = await fleetWorld({ holdSeconds: 15 })
    const token = await world.login()
    const [one, two] = [instance(world, 'edge-1'), instance(world, 'edge-2')]
    await one.poll()
    await two.poll()
    expect((await one.send(report())).status).toBe(204)
    const withHand = report({ typesInUse: [], modules: [...report().modules, BY_HAND] })
    expect((await two.send(withHand)).status).toBe(204)
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
    const body = (await beta.json()) as { enabled: boolean; decided: boolean; instances: unknown[] }
    expect([body.enabled, body.decided]).toEqual([false, true])
    expect(body.instances).toEqual([
      expect.objectContaining({ id: 'edge-1', drift: { module: SCOPED.name, reason: 'pending' } }),
      expect.objectContaining({ id: 'edge-2', drift: { module: SCOPED.name, reason: 'pending' } }),
    ])
    // edge-1's Node-RED refuses it; edge-2 applies it.
    const applied = String(await world.stores.fleet.revision())
    await one.send(
      report({
        applied,
        failures: [{ module: SCOPED.name, action: 'disable', message: 'Type in use: beta' }],
      }),
    )
    await two.send({ ...withHand, applied, modules: [...scopedWith(false), BY_HAND] })
    await leased(world, 'edge-1')
    await leased(world, 'edge-2')
    const listed = await world.get('/fleet/instances', token)
    expect(listed.status).toBe(200)
    expect(await listed.json()).toEqual([
      expect.objectContaining({
        id: 'edge-1',
        resourceServer: 'fleet',
        nodeRedVersion: '4.1.2',
        connected: true,
        applied,
        drift: [{ module: SCOPED.name, reason: 'refused', message: 'Type in use: beta' }],
      }),
      expect.objectContaining({ id: 'edge-2', drift: [{ module: 'by-hand', reason: 'installed_by_hand' }] }),
    ])
    // The module only edge-2 has is listed, undecided, as edge-2 shows it; it is not desired.
    const sets = (await (await world.get('/nodes', token)).json()) as Array<{
      id: string
      enabled: boolean
      decided: boolean
    }>
    expect(sets.filter((set) => set.id.startsWith('by-hand/'))).toEqual([
      expect.objectContaining({ id: 'by-hand/h', enabled: true, decided: false }),
      expect.objectContaining({ id: 'by-hand/i', enabled: false, decided: false }),
    ])
    const desired = (await (await one.poll()).json()) as { modules: Array<{ name: string }> }
    expect(desired.modules.map((module) => module.name)).not.toContain('by-hand')
    // Out of touch for longer than the hold and 10 s: not connected any more.
    world.clock.advance(25_001)
    const later = (await (await world.get('/fleet/instances', token)).json()) as Array<{ connected: boolean }>
    expect(later.map((one) => one.connected)).toEqual([false, false])
  })

  it('decides a module no operator decided at the first change asked, as one event', async () => {
    const world = await fleetWorld()
    const token = await world.login()
    await instance(world, 'edge-1').send(report({ typesInUse: [], modules: [BY_HAND] }))
    const module = (await (await world.get('/nodes/by-hand', token)).json()) as { decided: boolean }
    expect(module.decided).toBe(false)
    const decided = await world.put('/nodes/by-hand/h', { enabled: false }, token)
    expect(decided.status).toBe(200)
    expect(await decided.json()).toMatchObject({ id: 'by-hand/h', enabled: false, decided: true })
    expect(world.events.ofType('module.adopted')).toEqual([
      expect.objectContaining({
        module: 'by-hand',
        sets: [
          { set: 'by-hand/h', enabled: false },
          { set: 'by-hand/i', enabled: false },
        ],
        username: 'admin',
      }),
    ])
    const desired = (await (await instance(world, 'edge-1').poll()).json()) as {
      modules: Array<{ name: string; sets: unknown[] }>
    }
    expect(desired.modules.find((one) => one.name === 'by-hand')?.sets).toEqual([
      { name: 'h', enabled: false },
      { name: 'i', enabled: false },
    ])
  })

  it('an install of another version of a module records that version for every instance', async () => {
    const world = await fleetWorld()
    const token = await world.login()
    world.installer.publish({ ...PLAIN, version: '0.5.0' })
    const upgraded = await world.post('/nodes', { module: PLAIN.name, version: '0.5.0' }, token)
    expect(upgraded.status).toBe(200)
    expect(await upgraded.json()).toMatchObject({ name: PLAIN.name, version: '0.5.0' })
    const desired = (await (await instance(world, 'edge-1').poll()).json()) as { installs: unknown[] }
    expect(desired.installs).toEqual([{ module: PLAIN.name, version: '0.5.0' }])
  })

  it('a change’s answer waits for the connected instances’ outcomes, and shows them', async () => {
    const world = await fleetWorld({ answerWaitMs: 30_000 })
    const token = await world.login()
    const edge = instance(world, 'edge-1')
    expect((await edge.send(report({ typesInUse: [] }))).status).toBe(204)
    await edge.poll()
    await leased(world, 'edge-1')
    let answered = false
    const change = Promise.resolve(world.put(`/nodes/${PLAIN.name}`, { enabled: false }, token)).then(
      (res) => {
        answered = true
        return res
      },
    )
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(answered).toBe(false)
    // The instance applies it and reports: the answer comes at once, with its state.
    const applied = report({ typesInUse: [] }).modules.map((module) =>
      module.name === PLAIN.name
        ? { ...module, sets: module.sets.map((set) => ({ ...set, enabled: false })) }
        : module,
    )
    const reported = Date.now()
    const version = String(await world.stores.fleet.revision())
    expect((await edge.send(report({ typesInUse: [], modules: applied, applied: version }))).status).toBe(204)
    const res = await change
    expect(Date.now() - reported).toBeLessThan(500)
    expect(res.status).toBe(200)
    expect(((await res.json()) as { instances: unknown[] }).instances).toEqual([
      { id: 'edge-1', connected: true, version: PLAIN.version, enabled: { random: false } },
    ])
  })

  it('a retired instance is forgotten: its types no longer refuse a disable', async () => {
    const world = await fleetWorld()
    const token = await world.login()
    expect((await instance(world, 'edge-1').send(report())).status).toBe(204)
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
    const bearer = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
    const told: InstanceReport & { sequence: number } = {
      ...report({ modules: [...scopedWith(false), BY_HAND], applying: false }),
      sequence: 1,
      changes: [{ module: SCOPED.name, action: 'disable', by: 'alice', at: 1 }],
      reverted: [],
    }
    const statuses = [
      await check('POST', '/fleet/instances/edge-1/report', { headers: basic, body: JSON.stringify(told) }),
      await check('POST', '/fleet/instances/edge-1/report', { headers: basic, body: '[]' }),
      await check('POST', '/fleet/instances/edge-1/report', {
        headers: basic,
        body: JSON.stringify({ pad: 'y'.repeat(1_100_000) }),
      }),
      await check('GET', '/fleet/instances/edge-1/desired', { headers: basic }),
      await check('GET', '/fleet/instances/edge-1/desired'),
      await check('GET', '/fleet/instances', { headers: { authorization: `Bearer ${token}` } }),
      await check('GET', '/nodes', { headers: { authorization: `Bearer ${token}` } }),
      await check('GET', '/nodes/by-hand', { headers: { authorization: `Bearer ${token}` } }),
      await check('PUT', `/nodes/${SCOPED.name}`, {
        headers: bearer,
        body: JSON.stringify({ enabled: false }),
      }),
      await check('PUT', `/nodes/${SCOPED.name}/beta`, {
        headers: bearer,
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
    statuses.push(await check('DELETE', '/fleet/instances/edge-1/lease', { headers: basic }))
    // An install by a session begun more than 10 minutes ago: sign in again.
    world.clock.advance(10 * 60_000 + 1)
    statuses.push(
      await check('POST', '/nodes', { headers: bearer, body: JSON.stringify({ module: PLAIN.name }) }),
    )
    expect(statuses).toEqual([204, 400, 413, 200, 401, 200, 200, 200, 400, 200, 304, 204, 403])
    expect(problems).toEqual([])
  })
})
