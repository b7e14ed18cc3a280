// Who may do what, where, with real stock Node-RED 4.1 processes behind the built flowadmin: three
// enrolled instances in two groups (press-1 and press-2 in line-1, weld-1 in line-2), each with the
// @flowadmin/node-red helper on its own credential (set up in node-red-access.ts). alice is deployer
// on line-1 and viewer on line-2: her deploy succeeds on line-1's instances (204, Node-RED's v1
// answer) and gets Node-RED's own refusal on line-2's (401: its answer to a live token without the
// permission), where she reads; carl, viewer on line-2 alone, is refused on line-1's. People of the
// identity provider get the grants their groups map to, the same way. flowadmin's trail and fleet
// list show each caller what they may read; an instance cannot put itself in a group; every grant
// change and refusal because of scope is in the trail; a grant removed from the settings (SIGHUP)
// counts at the instance's next check.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually } from './fleet-setup.js'
import {
  type AccessFleet,
  basicOf,
  deploy,
  introspect,
  loginAt,
  loginFormAt,
  PASSWORD,
  readFlows,
  signInWithProvider,
  startAccessFleet,
} from './node-red-access.js'
import { logInAs } from './password-grant.js'

let fleet: AccessFleet

beforeAll(async () => {
  fleet = await startAccessFleet()
})
afterAll(async () => {
  await fleet?.stop()
})

/** A call to flowadmin's API with a bearer token or other authorization: the response. */
const call = (method: string, route: string, authorization: string, body?: unknown) =>
  fetch(`${fleet.flowadmin.url}${route}`, {
    method,
    headers: { authorization, 'content-type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  })
const asAdmin = (method: string, route: string, body?: unknown) =>
  call(method, route, `Bearer ${fleet.adminToken}`, body)

/** A token of `username` for flowadmin's own API (the console's login; their grants wait where they hold). */
async function flowadminToken(username: string): Promise<string> {
  const res = await logInAs(fleet.flowadmin.url, username, PASSWORD, '')
  expect(res.status).toBe(200)
  return ((await res.json()) as { access_token: string }).access_token
}

/**
 * Waits until every event flowadmin wrote so far is in its trail (it writes them in batches, in
 * order): a login of carl's, made now, is there.
 */
async function trailWritten(): Promise<void> {
  const since = new Date().toISOString()
  await flowadminToken('carl')
  await eventually(
    () => trailAs(fleet.adminToken, `event=login.succeeded&actor=carl&received_since=${since}`),
    (events) => events.length > 0,
  )
}

interface Event {
  instance: string
  actor: string | null
  event: string
  outcome: string
  details: Record<string, unknown>
}

/** GET /audit?<query> as `token`: the events, or the status when refused. */
async function trailAs(token: string, query = 'limit=500'): Promise<Event[]> {
  const res = await fetch(`${fleet.flowadmin.url}/audit?${query}`, {
    headers: { authorization: `Bearer ${token}` },
  })
  expect(res.status).toBe(200)
  return ((await res.json()) as { events: Event[] }).events
}

/** GET /fleet/instances as `token`: the ids listed, sorted. */
async function instancesAs(token: string): Promise<string[]> {
  const res = await fetch(`${fleet.flowadmin.url}/fleet/instances`, {
    headers: { authorization: `Bearer ${token}` },
  })
  expect(res.status).toBe(200)
  return ((await res.json()) as Array<{ id: string }>).map((instance) => instance.id).sort()
}

describe('grants on groups of instances, enforced by stock Node-RED', () => {
  it("alice deploys on both of line-1's instances and gets Node-RED's refusal on line-2's, where she reads", async () => {
    const { 'press-1': press1, 'press-2': press2, 'weld-1': weld } = fleet.instances
    expect(await deploy(press1.run, await loginAt(press1.run, 'alice'))).toBe(204)
    expect(await deploy(press2.run, await loginAt(press2.run, 'alice'))).toBe(204)
    const atWeld = await loginAt(weld.run, 'alice')
    expect(await readFlows(weld.run, atWeld)).toBe(200)
    expect(await deploy(weld.run, atWeld)).toBe(401)
    // Her token is live there: what she may not do is deploy.
    expect(await readFlows(weld.run, atWeld)).toBe(200)
  })

  it("carl, viewer on line-2 alone, reads line-2's instance and is not let in on line-1's", async () => {
    const { 'press-1': press1, 'weld-1': weld } = fleet.instances
    expect(await readFlows(weld.run, await loginAt(weld.run, 'carl'))).toBe(200)
    const res = await loginFormAt(press1.run, 'carl')
    // Node-RED refuses the login (its 403), its token being inactive there; had it issued one,
    // the token would be refused at its first use.
    const outcome =
      res.status === 200
        ? `read ${await readFlows(press1.run, ((await res.json()) as { access_token: string }).access_token)}`
        : `login ${res.status}`
    expect(['login 403', 'read 401']).toContain(outcome)
  })
})

describe("an identity provider's groups mapped to roles on groups of instances", () => {
  it("a person of line-1-operators and line-2-viewers deploys on line-1's instances and only reads on line-2's", async () => {
    const { 'press-1': press1, 'press-2': press2, 'weld-1': weld } = fleet.instances
    for (const instance of [press1, press2]) {
      const token = await signInWithProvider(fleet, instance, 'olga-sub')
      expect(await introspect(fleet.flowadmin, instance.basic, token)).toMatchObject({
        active: true,
        username: 'olga',
        scope: 'read flows.write inject.write debug.write library.write',
      })
      expect(await deploy(instance.run, token)).toBe(204)
    }
    const atWeld = await signInWithProvider(fleet, weld, 'olga-sub')
    expect(await introspect(fleet.flowadmin, weld.basic, atWeld)).toMatchObject({
      active: true,
      username: 'olga',
      scope: 'read',
    })
    expect(await readFlows(weld.run, atWeld)).toBe(200)
    expect(await deploy(weld.run, atWeld)).toBe(401)
  })

  it('a person of line-1-operators alone deploys on line-1 and is not active where the map gives nothing', async () => {
    const { 'press-2': press2, 'weld-1': weld } = fleet.instances
    expect(await deploy(press2.run, await signInWithProvider(fleet, press2, 'otto-sub'))).toBe(204)
    // flowadmin signs otto in at weld-1 (his groups give him rights somewhere), and answers weld-1
    // about his token as about an unknown one: Node-RED lets him read nothing there.
    const atWeld = await signInWithProvider(fleet, weld, 'otto-sub')
    expect(await introspect(fleet.flowadmin, weld.basic, atWeld)).toEqual({ active: false })
    expect(await readFlows(weld.run, atWeld)).toBe(401)
  })
})

describe("flowadmin's trail and fleet list show each caller what they may read", () => {
  it("alice's trail holds Node-RED's events of the instances she reads, and none of flowadmin's own", async () => {
    // Node-RED's audit events, sent by each instance's audit logger: her deploys on line-1's,
    // her reads and refused deploy on line-2's.
    const fleetEvents = await eventually(
      () => trailAs(fleet.adminToken, 'instance=fleet&limit=500'),
      (events) =>
        ['fleet/press-1', 'fleet/press-2'].every((at) =>
          events.some((one) => one.instance === at && one.event === 'flows.set' && one.actor === 'alice'),
        ) && events.some((one) => one.instance === 'fleet/weld-1' && one.actor === 'alice'),
    )
    const deploys = fleetEvents.filter((event) => event.event === 'flows.set' && event.actor === 'alice')
    // The whole trail holds flowadmin's own events too (sign-ins, enrolments).
    expect((await trailAs(fleet.adminToken)).some((event) => event.instance === 'flowadmin')).toBe(true)
    const hers = await trailAs(await flowadminToken('alice'))
    expect(new Set(hers.map((event) => event.instance))).toEqual(
      new Set(['fleet/press-1', 'fleet/press-2', 'fleet/weld-1']),
    )
    expect(hers.filter((event) => event.event === 'flows.set' && event.actor === 'alice')).toHaveLength(
      deploys.length,
    )
  })

  it("carl's trail and fleet list hold line-2's instance alone", async () => {
    const carl = await flowadminToken('carl')
    // weld-1's events (alice's and his own reads there) reach the trail.
    const his = await eventually(
      () => trailAs(carl),
      (events) => events.length > 0,
    )
    expect(new Set(his.map((event) => event.instance))).toEqual(new Set(['fleet/weld-1']))
    expect(await instancesAs(carl)).toEqual(['weld-1'])
    expect(await instancesAs(await flowadminToken('alice'))).toEqual(['press-1', 'press-2', 'weld-1'])
  })
})

describe('an instance is in the groups flowadmin gives it, and no other', () => {
  it("weld-1's own credential cannot put it in line-1, nor report as a line-1 id; its answers stay line-2's", async () => {
    const weld = fleet.instances['weld-1']
    const put = await call('PUT', '/fleet/groups/line-1/instances/weld-1', weld.basic)
    expect(put.status).toBe(401)
    const report = await call('POST', '/fleet/instances/press-9/report', weld.basic, {
      sequence: 1,
      nodeRedVersion: '4.1.0',
      modules: [],
      typesInUse: [],
      applied: null,
      failures: [],
    })
    expect(report.status).toBe(403)
    expect(await report.json()).toMatchObject({ code: 'instance_mismatch' })
    const groups = (await (await asAdmin('GET', '/fleet/groups')).json()) as Array<{
      name: string
      assigned: unknown[]
    }>
    expect(groups.map(({ name, assigned }) => [name, assigned])).toEqual([
      ['line-1', []],
      ['line-2', []],
    ])
    const alice = await loginAt(weld.run, 'alice')
    expect(await introspect(fleet.flowadmin, weld.basic, alice)).toMatchObject({
      active: true,
      scope: 'read',
    })
    expect(await deploy(weld.run, alice)).toBe(401)
  })

  it("an enrolment token's groups put the instance in none; an operator's assignment does, audited", async () => {
    const nr9 = await fleet.enrol({ instance: 'nr-9', groups: ['line-1'] })
    const basic = basicOf(nr9.clientId, nr9.clientSecret)
    // alice's login through nr-9 (as its editor's login form would ask flowadmin).
    const login = await fetch(`${fleet.flowadmin.url}/auth/token`, {
      method: 'POST',
      headers: { authorization: basic },
      body: new URLSearchParams({ grant_type: 'password', username: 'alice', password: PASSWORD, scope: '' }),
    })
    expect(login.status).toBe(200)
    const { access_token: alice } = (await login.json()) as { access_token: string }
    expect(await introspect(fleet.flowadmin, basic, alice)).toEqual({ active: false })
    expect(await instancesAs(await flowadminToken('alice'))).not.toContain('nr-9')

    expect((await asAdmin('PUT', '/fleet/groups/line-1/instances/nr-9')).status).toBe(204)
    await trailWritten()
    expect(await introspect(fleet.flowadmin, basic, alice)).toMatchObject({
      active: true,
      username: 'alice',
      scope: 'read flows.write inject.write debug.write library.write',
    })
    expect(await trailAs(fleet.adminToken, 'event=access.group_assigned')).toEqual([
      expect.objectContaining({
        instance: 'flowadmin',
        actor: 'admin',
        details: expect.objectContaining({ group: 'line-1', instance: 'nr-9' }),
      }),
    ])
    expect((await asAdmin('DELETE', '/fleet/groups/line-1/instances/nr-9')).status).toBe(204)
    expect(await introspect(fleet.flowadmin, basic, alice)).toEqual({ active: false })
  })
})

describe('who may do what, in the trail', () => {
  it('a token refused at an instance for want of a grant there is written once, however often it is asked about', async () => {
    const since = new Date().toISOString()
    const weld = fleet.instances['weld-1']
    const otto = await signInWithProvider(fleet, weld, 'otto-sub')
    for (let ask = 0; ask < 3; ask++) expect(await readFlows(weld.run, otto)).toBe(401)
    expect(await introspect(fleet.flowadmin, weld.basic, otto)).toEqual({ active: false })
    await trailWritten()
    const refused = await trailAs(fleet.adminToken, `event=access.refused&received_since=${since}`)
    expect(refused).toEqual([
      expect.objectContaining({
        instance: 'flowadmin',
        actor: 'otto',
        outcome: 'failure',
        details: expect.objectContaining({
          client: weld.clientId,
          resourceServer: 'fleet',
          instance: 'weld-1',
        }),
      }),
    ])
  })

  it('a flowadmin route refused for want of the right on flowadmin is written with who asked', async () => {
    const since = new Date().toISOString()
    const res = await call('GET', '/fleet/groups', `Bearer ${await flowadminToken('carl')}`)
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toContain('insufficient_scope')
    await trailWritten()
    expect(await trailAs(fleet.adminToken, `event=permission.denied&received_since=${since}`)).toEqual([
      expect.objectContaining({
        actor: 'carl',
        outcome: 'failure',
        details: expect.objectContaining({ permission: 'read' }),
      }),
    ])
  })

  it('a grant removed from the settings (SIGHUP) counts at the next check, and the reload names it in the trail', async () => {
    const press = fleet.instances['press-1']
    const token = await loginAt(press.run, 'alice')
    expect(await deploy(press.run, token)).toBe(204)
    await fleet.writeFlowadminSettings([
      { role: 'viewer', on: 'line-1' },
      { role: 'viewer', on: 'line-2' },
    ])
    fleet.flowadmin.run.child.kill('SIGHUP')
    expect(
      await eventually(
        () => deploy(press.run, token),
        (status) => status !== 204,
      ),
    ).toBe(401)
    // The same token still reads there: its grant is gone, not the token.
    expect(await readFlows(press.run, token)).toBe(200)
    await trailWritten()
    expect(await trailAs(fleet.adminToken, 'event=access.reloaded')).toEqual([
      expect.objectContaining({
        instance: 'flowadmin',
        actor: null,
        outcome: 'success',
        details: {
          roles: [],
          groups: [],
          grants: [{ username: 'alice', added: ['role:viewer@line-1'], removed: ['role:deployer@line-1'] }],
        },
      }),
    ])
  })
})
