// Rollouts over the API, every answer checked against the served OpenAPI document: made to a
// group (rights at the group), named in the instances' polls, fetched and reported by them,
// followed, rolled back; modes, variables; refusals in the API's error shape.
import { describe, expect, it } from 'vitest'
import { instance, report } from './fleet-world.js'
import { createWorld, expectChallenge, fleetBasic, type World } from './helpers.js'
import { answersChecked } from './openapi-validate.js'

const FLOWS = [
  { id: 't1', type: 'tab', label: 'Line 1' },
  { id: 'n1', type: 'inject', z: 't1', wires: [] },
]

const world = () =>
  createWorld({
    fleet: { answerWaitMs: 0 },
    access: { groups: { line: ['press-*'], weld: ['weld-*'] } },
    users: [
      { username: 'lena', permissions: [], grants: [{ role: 'deployer', on: 'line' }] },
      { username: 'walt', permissions: [], grants: [{ role: 'deployer', on: 'weld' }] },
      { username: 'nobody', permissions: ['nodes.read'] },
    ],
  })

const asInstance = (w: World, method: string, url: string, body?: unknown) =>
  w.request(url, {
    method,
    headers: { authorization: fleetBasic(), 'content-type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  })

describe('rollouts over the API', () => {
  it('rolls a snapshot out to a group, named in its instances’ polls, and follows their reports to the end', async () => {
    const w = await world()
    const checked = await answersChecked(w)
    const admin = await w.login()
    for (const id of ['press-1', 'press-2', 'weld-1']) await instance(w, id).send(report())
    const made = await w.post('/fleet/snapshots', { name: 'line', flows: FLOWS }, admin)
    const snapshot = ((await made.json()) as { id: string }).id

    const url = '/fleet/groups/line/rollouts'
    const started = await checked(
      'POST',
      url,
      await w.post(url, { snapshot, strategy: { kind: 'staged', first: 1 } }, admin),
    )
    expect(started.status).toBe(201)
    const rollout = (await started.json()) as { id: string }
    expect(rollout).toMatchObject({
      group: 'line',
      snapshot,
      kind: 'rollout',
      strategy: { kind: 'staged', first: 1 },
      instances: ['press-1', 'press-2'],
      released: false,
      state: 'pending',
      createdBy: 'admin',
    })
    expect(w.events.ofType('fleet.rollout_started')).toEqual([
      expect.objectContaining({ rollout: rollout.id, group: 'line', strategy: 'staged:1', instances: 2 }),
    ])

    const poll = await checked('GET', '/fleet/instances/press-1/desired', await instance(w, 'press-1').poll())
    expect(((await poll.json()) as { flows: unknown }).flows).toEqual({
      rollout: rollout.id,
      snapshot,
      mode: 'report',
      variables: '0',
    })
    const second = (await (await instance(w, 'press-2').poll()).json()) as Record<string, unknown>
    expect(second).not.toHaveProperty('flows')

    const targetUrl = '/fleet/instances/press-1/flows/target'
    const target = await checked('GET', targetUrl, await asInstance(w, 'GET', targetUrl))
    expect(await target.json()).toEqual({
      rollout: rollout.id,
      snapshot,
      mode: 'report',
      variables: '0',
      flows: FLOWS,
      modules: [],
      env: [],
    })
    const reportUrl = '/fleet/instances/press-1/flows/report'
    const said = await checked(
      'POST',
      reportUrl,
      await asInstance(w, 'POST', reportUrl, { rollout: rollout.id, outcome: 'succeeded', rev: 'r1' }),
    )
    expect(said.status).toBe(204)
    // The first stage succeeded: press-2 gets it now.
    const now = (await (await instance(w, 'press-2').poll()).json()) as { flows?: { rollout: string } }
    expect(now.flows?.rollout).toBe(rollout.id)
    await asInstance(w, 'POST', '/fleet/instances/press-2/flows/report', {
      rollout: rollout.id,
      outcome: 'succeeded',
      rev: 'r2',
      missingCredentials: ['n1'],
    })
    const viewUrl = `/fleet/rollouts/${rollout.id}`
    const view = await checked('GET', viewUrl, await w.get(viewUrl, admin))
    expect(await view.json()).toMatchObject({
      state: 'succeeded',
      released: true,
      waiting: [],
      outcomes: [
        { instance: 'press-1', outcome: 'succeeded', rev: 'r1', message: null, missingCredentials: [] },
        { instance: 'press-2', outcome: 'succeeded', rev: 'r2', message: null, missingCredentials: ['n1'] },
      ],
    })
    const listed = await checked('GET', '/fleet/rollouts', await w.get('/fleet/rollouts', admin))
    expect(((await listed.json()) as Array<{ id: string }>).map((each) => each.id)).toEqual([rollout.id])

    // Drift, the group's view, its mode and a rollback.
    await asInstance(w, 'POST', reportUrl, { rev: 'r9', by: 'bob' })
    const groupUrl = '/fleet/groups/line/flows'
    const group = await checked('GET', groupUrl, await w.get(groupUrl, admin))
    expect(await group.json()).toMatchObject({
      group: 'line',
      mode: 'report',
      target: { id: rollout.id },
      previous: null,
      instances: [
        {
          instance: 'press-1',
          rollout: rollout.id,
          deployedRev: 'r1',
          rev: 'r9',
          drift: { rev: 'r9', by: 'bob' },
        },
        { instance: 'press-2', rollout: rollout.id, deployedRev: 'r2', rev: 'r2', drift: null },
      ],
    })
    const modeUrl = '/fleet/groups/line/flows/mode'
    const mode = await checked('PUT', modeUrl, await w.put(modeUrl, { mode: 'enforce' }, admin))
    expect(await mode.json()).toEqual({ mode: 'enforce' })
    const backUrl = '/fleet/groups/line/rollback'
    const refused = await checked('POST', backUrl, await w.post(backUrl, {}, admin))
    expect(refused.status).toBe(409)
    expect(await refused.json()).toMatchObject({ code: 'no_previous_target' })
  })

  it('tells an instance put in a group over the API its group’s flows at its next poll', async () => {
    const w = await world()
    const admin = await w.login()
    const odd = instance(w, 'odd-1')
    await odd.send(report())
    const made = await w.post('/fleet/snapshots', { name: 'line', flows: FLOWS }, admin)
    const snapshot = ((await made.json()) as { id: string }).id
    const rollout = (await (await w.post('/fleet/groups/line/rollouts', { snapshot }, admin)).json()) as {
      id: string
    }
    const before = await odd.poll()
    const version = ((await before.json()) as { version: string; flows?: unknown }).version
    expect((await odd.poll({ 'if-none-match': `"${version}"`, prefer: 'wait=0' })).status).toBe(304)
    expect((await w.put('/fleet/groups/line/instances/odd-1', {}, admin)).status).toBe(204)
    const after = await odd.poll({ 'if-none-match': `"${version}"`, prefer: 'wait=0' })
    expect(after.status).toBe(200)
    expect(((await after.json()) as { flows?: { rollout: string } }).flows?.rollout).toBe(rollout.id)
  })

  it('sets, lists and removes variables; a secret needs a key', async () => {
    const w = await world()
    const checked = await answersChecked(w)
    const admin = await w.login()
    const url = '/fleet/groups/line/variables/GREETING'
    const set = await checked('PUT', url, await w.put(url, { value: 'hello' }, admin))
    expect(await set.json()).toMatchObject({ name: 'GREETING', value: 'hello', secret: false, by: 'admin' })
    const secret = await checked(
      'PUT',
      '/fleet/groups/line/variables/KEY',
      await w.put('/fleet/groups/line/variables/KEY', { value: 'k', secret: true }, admin),
    )
    expect(secret.status).toBe(409)
    expect(await secret.json()).toMatchObject({ code: 'sealing_not_configured' })
    const own = '/fleet/instances/press-1/variables/SPEED'
    expect((await checked('PUT', own, await w.put(own, { value: '7' }, admin))).status).toBe(200)
    const listUrl = '/fleet/groups/line/variables'
    const listed = await checked('GET', listUrl, await w.get(listUrl, admin))
    expect(((await listed.json()) as Array<{ name: string }>).map((v) => v.name)).toEqual(['GREETING'])
    const bad = await checked(
      'PUT',
      '/fleet/groups/line/variables/1X',
      await w.put('/fleet/groups/line/variables/1X', { value: 'x' }, admin),
    )
    expect(bad.status).toBe(400)
    const gone = await checked(
      'DELETE',
      url,
      await w.request(url, { method: 'DELETE', headers: { authorization: `Bearer ${admin}` } }),
    )
    expect(gone.status).toBe(204)
    const again = await w.request(url, { method: 'DELETE', headers: { authorization: `Bearer ${admin}` } })
    expect(again.status).toBe(404)
    expect(await again.json()).toMatchObject({ code: 'variable_not_found' })
  })

  it('needs flows.write on every instance of the group: a grant on another group is refused, and recorded', async () => {
    const w = await world()
    const admin = await w.login()
    const made = await w.post('/fleet/snapshots', { name: 'line', flows: FLOWS }, admin)
    const snapshot = ((await made.json()) as { id: string }).id
    const walt = await w.login('walt', '')
    const refused = await w.post('/fleet/groups/line/rollouts', { snapshot }, walt)
    expectChallenge(refused, 'insufficient_scope')
    expect(w.events.ofType('permission.denied').at(-1)).toMatchObject({
      permission: 'flows.write',
      username: 'walt',
    })
    const lena = await w.login('lena', '')
    expect((await w.post('/fleet/groups/line/rollouts', { snapshot }, lena)).status).toBe(201)
    expect((await w.put('/fleet/groups/line/flows/mode', { mode: 'enforce' }, walt)).status).toBe(401)
    expect((await w.get('/fleet/groups/line/flows', walt)).status).toBe(401)
    expect((await w.post('/fleet/groups/nope/rollouts', { snapshot }, admin)).status).toBe(404)
    // Reading: each sees the rollouts of the groups they may read, and the snapshots to roll out.
    await w.post('/fleet/groups/weld/rollouts', { snapshot }, walt)
    const ofLena = (await (await w.get('/fleet/rollouts', lena)).json()) as Array<{
      id: string
      group: string
    }>
    expect(ofLena.map((each) => each.group)).toEqual(['line'])
    const ofAdmin = (await (await w.get('/fleet/rollouts', admin)).json()) as Array<{ group: string }>
    expect(ofAdmin.map((each) => each.group)).toEqual(['weld', 'line'])
    const lines = ofLena[0] as { id: string }
    expect((await w.get(`/fleet/rollouts/${lines.id}`, lena)).status).toBe(200)
    expect((await w.get(`/fleet/rollouts/${lines.id}`, walt)).status).toBe(401)
    expect((await w.get('/fleet/snapshots', walt)).status).toBe(200)
    const nobody = await w.login('nobody', '')
    expectChallenge(await w.get('/fleet/rollouts', nobody), 'insufficient_scope')
    expectChallenge(await w.get('/fleet/snapshots', nobody), 'insufficient_scope')
    const badStrategy = await w.post(
      '/fleet/groups/line/rollouts',
      { snapshot, strategy: { kind: 'staged' } },
      admin,
    )
    expect(badStrategy.status).toBe(400)
    expect(await badStrategy.json()).toMatchObject({ code: 'invalid_request' })
  })
})
