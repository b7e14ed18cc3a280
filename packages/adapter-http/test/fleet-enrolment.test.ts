import { describe, expect, it } from 'vitest'
import { fleetWorld, report } from './fleet-world.js'
import { basicHeader, fleetBasic, type World } from './helpers.js'
import { createResponseValidator } from './openapi-validate.js'

type Credential = { instance: string; resourceServer: string; clientId: string; clientSecret: string }

/** POST /fleet/enrolments as `token`'s holder; the response. */
const createEnrolment = (world: World, token: string, body: Record<string, unknown> = {}) =>
  world.send('POST', '/fleet/enrolments', { resourceServer: 'fleet', ...body }, token)

/** POST /fleet/enrol with this body; the response. */
const enrol = (world: World, body: Record<string, unknown>) => world.send('POST', '/fleet/enrol', body)

/** A new enrolment token of the admin, then an enrolment with it: the credential. */
async function enrolled(world: World, instance: string, options: Record<string, unknown> = {}) {
  const admin = await world.login()
  const made = await createEnrolment(world, admin, { instance, ...options })
  expect(made.status).toBe(201)
  const { token } = (await made.json()) as { token: string }
  const res = await enrol(world, { token, nodeRedVersion: '4.1.15' })
  expect(res.status).toBe(201)
  return (await res.json()) as Credential
}

const basicOf = (credential: Credential) => basicHeader(credential.clientId, credential.clientSecret)
const pollAs = (world: World, id: string, authorization: string) =>
  world.request(`/fleet/instances/${id}/desired`, { headers: { authorization } })
const reportAs = (world: World, id: string, authorization: string) =>
  world.request(`/fleet/instances/${id}/report`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify({ sequence: 1, ...report() }),
  })

describe('fleet: enrolment tokens', () => {
  it('an operator with every right makes a token, shown once and listed without it; cancelled, it is gone', async () => {
    const world = await fleetWorld()
    const admin = await world.login()
    const res = await createEnrolment(world, admin, { uses: 3, expiresIn: 600, groups: ['line-3'] })
    expect(res.status).toBe(201)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const made = (await res.json()) as Record<string, unknown>
    expect(made).toMatchObject({
      resourceServer: 'fleet',
      uses: 3,
      left: 3,
      instance: null,
      groups: ['line-3'],
    })
    expect(made.token).toMatch(/^fae_[A-Za-z0-9_-]{43}$/)
    expect(Date.parse(made.expiresAt as string) - world.clock.now()).toBe(600_000)
    const listed = (await (await world.get('/fleet/enrolments', admin)).json()) as Array<
      Record<string, unknown>
    >
    expect(listed).toHaveLength(1)
    expect(listed[0]).not.toHaveProperty('token')
    expect(JSON.stringify(await world.stores.enrolments.enrolments())).not.toContain(made.token as string)
    expect(world.events.ofType('fleet.enrolment_created')).toHaveLength(1)
    expect((await world.send('DELETE', `/fleet/enrolments/${made.id}`, undefined, admin)).status).toBe(204)
    expect((await world.send('DELETE', `/fleet/enrolments/${made.id}`, undefined, admin)).status).toBe(404)
    expect((await enrol(world, { token: made.token })).status).toBe(401)
  })

  it('refuses a caller without every right, and names the field out of bounds', async () => {
    const world = await fleetWorld()
    const editor = await world.login('editor', '')
    expect((await createEnrolment(world, editor)).status).toBe(401)
    const admin = await world.login()
    for (const [body, field] of [
      [{ uses: 0 }, 'uses'],
      [{ uses: 1001 }, 'uses'],
      [{ expiresIn: 59 }, 'expiresIn'],
      [{ expiresIn: 604_801 }, 'expiresIn'],
      [{ uses: 2, instance: 'nr-1' }, 'instance'],
      [{ instance: '../x' }, 'instance'],
      [{ groups: ['bad group'] }, 'groups'],
      [{ resourceServer: 'other' }, 'resourceServer'],
    ] as const) {
      const res = await createEnrolment(world, admin, body)
      expect(res.status).toBe(400)
      const error = (await res.json()) as { code: string; message: string }
      expect(error.code).toBe('invalid_request')
      expect(error.message).toContain(field)
    }
  })
})

describe('fleet: malformed enrolments', () => {
  it('are refused with a clear 400 or 413, never a 500, and spend nothing', async () => {
    const world = await fleetWorld()
    const admin = await world.login()
    const { token } = (await (await createEnrolment(world, admin)).json()) as { token: string }
    const post = (body: string, type = 'application/json') =>
      world.request('/fleet/enrol', { method: 'POST', headers: { 'content-type': type }, body })
    const cases: Array<[string, string, number, string]> = [
      ['{', 'application/json', 400, 'invalid_request'],
      ['token=x', 'application/x-www-form-urlencoded', 400, 'invalid_request'],
      ['[]', 'application/json', 400, 'invalid_request'],
      [JSON.stringify({ token: 5 }), 'application/json', 400, 'invalid_request'],
      [JSON.stringify({ token, instance: '../etc' }), 'application/json', 400, 'invalid_request'],
      [JSON.stringify({ token, extra: 1 }), 'application/json', 400, 'invalid_request'],
      [JSON.stringify({ token: 'x'.repeat(5000) }), 'application/json', 413, 'payload_too_large'],
      [JSON.stringify({ token: `fae_${'\u0000'}` }), 'application/json', 401, 'invalid_enrolment'],
    ]
    for (const [body, type, status, code] of cases) {
      const res = await post(body, type)
      expect([body.slice(0, 40), res.status]).toEqual([body.slice(0, 40), status])
      expect(await res.json()).toMatchObject({ code })
    }
    const listed = (await (await world.get('/fleet/enrolments', admin)).json()) as Array<{ left: number }>
    expect(listed.map((entry) => entry.left)).toEqual([1])
  })

  it('many refused enrolments from one address are throttled, saying so', async () => {
    const world = await fleetWorld()
    let last: Response | null = null
    for (let i = 0; i < 12; i++) last = await enrol(world, { token: `fae_guess-${i}` })
    expect(last?.status).toBe(429)
    expect(Number(last?.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(await last?.json()).toMatchObject({
      error: 'temporarily_unavailable',
      error_description: expect.stringContaining('Too many refused enrolments from this address'),
    })
  })
})

describe('fleet: an instance enrols and acts as itself alone', () => {
  it('enrols once with a one-use token, takes the id the token names, and polls and reports with its credential', async () => {
    const world = await fleetWorld()
    const admin = await world.login()
    const { token } = (await (await createEnrolment(world, admin, { instance: 'nr-1' })).json()) as {
      token: string
    }
    expect((await enrol(world, { token, instance: 'nr-9' })).status).toBe(400)
    const res = await enrol(world, { token })
    expect(res.status).toBe(201)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const credential = (await res.json()) as Credential
    expect(credential).toMatchObject({ instance: 'nr-1', resourceServer: 'fleet', clientId: 'fleet/nr-1' })
    expect(credential.clientSecret).toMatch(/^fai_/)
    // Listed at once, not connected until it polls.
    const before = (await (await world.get('/fleet/instances', admin)).json()) as Array<
      Record<string, unknown>
    >
    expect(before).toEqual([expect.objectContaining({ id: 'nr-1', connected: false, revoked: false })])
    const again = await enrol(world, { token })
    expect(again.status).toBe(401)
    expect(await again.json()).toMatchObject({ code: 'invalid_enrolment' })
    expect((await pollAs(world, 'nr-1', basicOf(credential))).status).toBe(200)
    expect((await reportAs(world, 'nr-1', basicOf(credential))).status).toBe(204)
    const listed = (await (await world.get('/fleet/instances', admin)).json()) as Array<
      Record<string, unknown>
    >
    expect(listed[0]).toMatchObject({
      id: 'nr-1',
      revoked: false,
      enrolment: { by: 'admin', rotatedAt: null },
    })
  })

  it('an expired token is refused as an unknown one; an id enrolled and not revoked is a conflict', async () => {
    const world = await fleetWorld()
    const admin = await world.login()
    const made = (await (await createEnrolment(world, admin, { uses: 5, expiresIn: 60 })).json()) as {
      token: string
    }
    const first = (await (await enrol(world, { token: made.token, instance: 'nr-1' })).json()) as Credential
    expect(first.instance).toBe('nr-1')
    const copy = await enrol(world, { token: made.token, instance: 'nr-1' })
    expect(copy.status).toBe(409)
    expect(await copy.json()).toMatchObject({ code: 'instance_conflict' })
    const generated = (await (await enrol(world, { token: made.token })).json()) as Credential
    expect(generated.instance).toMatch(/^nr-[0-9a-f]{8}$/)
    world.clock.advance(60_000)
    expect((await enrol(world, { token: made.token, instance: 'nr-2' })).status).toBe(401)
    const reasons = world.events.ofType('fleet.enrol_refused').map((event) => event.reason)
    expect(reasons).toEqual(['instance_conflict', 'expired'])
  })

  it("an instance's credential acting as another instance is refused and audited, its trail events too", async () => {
    const world = await fleetWorld()
    const one = await enrolled(world, 'nr-1')
    const two = await enrolled(world, 'nr-2')
    const mismatch = await pollAs(world, 'nr-1', basicOf(two))
    expect(mismatch.status).toBe(403)
    expect(await mismatch.json()).toMatchObject({ code: 'instance_mismatch' })
    expect((await reportAs(world, 'nr-1', basicOf(two))).status).toBe(403)
    expect(world.events.ofType('fleet.instance_mismatch')).toHaveLength(2)
    // The shared secret may no longer act as an enrolled instance.
    expect((await pollAs(world, 'nr-1', fleetBasic())).status).toBe(403)
    const posted = await world.request('/audit/events', {
      method: 'POST',
      headers: { authorization: basicOf(two), 'content-type': 'application/json' },
      body: JSON.stringify({
        events: [{ time: 1, instance: 'nr-1', actor: 'bob', event: 'flows.set', address: null, details: {} }],
      }),
    })
    expect(posted.status).toBe(403)
    expect(await posted.json()).toEqual({
      code: 'instance_mismatch',
      message: "This credential is not instance nr-1's",
    })
    expect(world.events.ofType('fleet.instance_mismatch').at(-1)).toMatchObject({
      instance: 'nr-2',
      requested: 'nr-1',
      clientId: 'fleet/nr-2',
    })
    const admin = await world.login()
    const asTwo = await (await world.get('/audit?instance=fleet/nr-2&event=flows.', admin)).json()
    const asOne = await (await world.get('/audit?instance=fleet/nr-1&event=flows.', admin)).json()
    expect(JSON.stringify(asTwo)).not.toContain('flows.set')
    expect(JSON.stringify(asOne)).not.toContain('flows.set')
    // Its own events are kept, under its id.
    const own = await world.request('/audit/events', {
      method: 'POST',
      headers: { authorization: basicOf(two), 'content-type': 'application/json' },
      body: JSON.stringify({
        events: [{ time: 1, instance: 'nr-2', actor: 'bob', event: 'flows.set', address: null, details: {} }],
      }),
    })
    expect(own.status).toBe(200)
    const kept = await (await world.get('/audit?instance=fleet/nr-2&event=flows.', admin)).json()
    expect(JSON.stringify(kept)).toContain('flows.set')
    expect((await pollAs(world, 'nr-1', basicOf(one))).status).toBe(200)
  })

  it("an editor's token issued through one instance is inactive at another", async () => {
    const world = await fleetWorld()
    const one = await enrolled(world, 'nr-1')
    const two = await enrolled(world, 'nr-2')
    const res = await world.request('/auth/token', {
      method: 'POST',
      headers: { Authorization: basicOf(one), 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'password',
        scope: '*',
        username: 'admin',
        password: 'pw',
      }).toString(),
    })
    expect(res.status).toBe(200)
    const { access_token: token } = (await res.json()) as { access_token: string }
    expect(await (await world.introspect(token, basicOf(one))).json()).toMatchObject({
      active: true,
      aud: 'fleet/nr-1',
    })
    expect(await (await world.introspect(token, basicOf(two))).json()).toEqual({ active: false })
    expect(await (await world.introspect(token, fleetBasic())).json()).toEqual({ active: false })
    // A token for the whole resource server (a session of the shared secret, an API token for it)
    // is live at each of its instances: the sessions of before enrolment go on.
    const shared = await world.loginAsFleet()
    expect(await (await world.introspect(shared, basicOf(two))).json()).toMatchObject({
      active: true,
      aud: 'fleet',
    })
  })

  it('revoking one instance refuses its credential at once and ends its sessions; the others keep working', async () => {
    const world = await fleetWorld()
    const admin = await world.login()
    const one = await enrolled(world, 'nr-1')
    const three = await enrolled(world, 'nr-3')
    expect((await pollAs(world, 'nr-3', basicOf(three))).status).toBe(200)
    expect((await world.send('POST', '/fleet/instances/nr-3/revoke', undefined, admin)).status).toBe(204)
    expect((await world.send('POST', '/fleet/instances/nr-9/revoke', undefined, admin)).status).toBe(404)
    const refused = await pollAs(world, 'nr-3', basicOf(three))
    expect(refused.status).toBe(401)
    expect(await refused.json()).toMatchObject({ error: 'invalid_client' })
    expect((await world.introspect('anything', basicOf(three))).status).toBe(401)
    expect((await pollAs(world, 'nr-1', basicOf(one))).status).toBe(200)
    const listed = (await (await world.get('/fleet/instances', admin)).json()) as Array<
      Record<string, unknown>
    >
    expect(listed.find((view) => view.id === 'nr-3')).toMatchObject({ revoked: true, connected: false })
    expect(world.events.ofType('fleet.instance_revoked')).toMatchObject([
      { instance: 'nr-3', username: 'admin' },
    ])
    // Enrolling again after a revocation is allowed.
    const back = await enrolled(world, 'nr-3')
    expect((await pollAs(world, 'nr-3', basicOf(back))).status).toBe(200)
  })

  it('rotation: asked, the poll says so; the old secret works until the new one is used, then stops', async () => {
    const world = await fleetWorld()
    const admin = await world.login()
    const one = await enrolled(world, 'nr-1')
    const first = await pollAs(world, 'nr-1', basicOf(one))
    const etag = first.headers.get('etag') as string
    expect(await first.json()).not.toHaveProperty('rotate')
    expect((await world.send('POST', '/fleet/instances/nr-1/rotate', undefined, admin)).status).toBe(204)
    const asked = await world.request('/fleet/instances/nr-1/desired', {
      headers: { authorization: basicOf(one), 'if-none-match': etag, prefer: 'wait=10' },
    })
    expect(asked.status).toBe(200)
    expect(await asked.json()).toMatchObject({ rotate: true })
    const renewed = await world.request('/fleet/instances/nr-1/credential', {
      method: 'POST',
      headers: { authorization: basicOf(one) },
    })
    expect(renewed.status).toBe(200)
    const fresh = (await renewed.json()) as { clientId: string; clientSecret: string }
    expect(fresh.clientId).toBe('fleet/nr-1')
    const next = basicHeader(fresh.clientId, fresh.clientSecret)
    expect((await pollAs(world, 'nr-1', basicOf(one))).status).toBe(200)
    expect((await pollAs(world, 'nr-1', next)).status).toBe(200)
    expect((await pollAs(world, 'nr-1', basicOf(one))).status).toBe(401)
    const listed = (await (await world.get('/fleet/instances', admin)).json()) as Array<{
      enrolment: { rotatedAt: string }
    }>
    expect(listed[0]?.enrolment.rotatedAt).not.toBeNull()
  })

  it('a resource server not marked for the fleet may not join it', async () => {
    const world = await fleetWorld()
    // `world` marks `fleet`; a plain resource server's shared secret is refused by every fleet route.
    const other = await (await import('./helpers.js')).createWorld({
      fleet: { answerWaitMs: 0 },
      resourceServers: [{ id: 'plain', secret: 'plain-secret' }],
    })
    const res = await pollAs(other, 'nr-1', basicHeader('plain', 'plain-secret'))
    expect(res.status).toBe(401)
    expect(await res.json()).toMatchObject({ error: 'invalid_client' })
    expect((await pollAs(world, 'nr-1', fleetBasic())).status).toBe(200)
  })
})

describe('fleet: the identity routes in the API document', () => {
  it('lists them, and every answer of theirs conforms to it', async () => {
    const world = await fleetWorld()
    const served = (await (await world.request('/openapi.json')).json()) as { paths: Record<string, object> }
    expect(Object.keys(served.paths)).toEqual(
      expect.arrayContaining([
        '/fleet/enrolments',
        '/fleet/enrolments/{enrolment}',
        '/fleet/enrol',
        '/fleet/instances/{id}/credential',
        '/fleet/instances/{id}/rotate',
        '/fleet/instances/{id}/revoke',
      ]),
    )
    const validator = createResponseValidator(served)
    const admin = await world.login()
    const problems: string[] = []
    const check = async (method: string, path: string, init: RequestInit = {}) => {
      const res = await world.request(path, { method, ...init })
      const result = await validator.check(method, `http://localhost${path}`, res)
      problems.push(...result.problems.map((problem) => `${result.operation} ${result.status}: ${problem}`))
      return result.status
    }
    const bearer = { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }
    const json = { 'content-type': 'application/json' }
    const made = await world.send('POST', '/fleet/enrolments', { resourceServer: 'fleet', uses: 2 }, admin)
    const { id, token } = (await made.json()) as { id: string; token: string }
    const credential = (await (await enrol(world, { token, instance: 'nr-1' })).json()) as Credential
    const basic = { authorization: basicOf(credential) }
    const statuses = [
      await check('POST', '/fleet/enrolments', {
        headers: bearer,
        body: JSON.stringify({ resourceServer: 'fleet' }),
      }),
      await check('POST', '/fleet/enrolments', {
        headers: bearer,
        body: JSON.stringify({ resourceServer: 'fleet', uses: 0 }),
      }),
      await check('POST', '/fleet/enrolments', { headers: json, body: '{}' }),
      await check('GET', '/fleet/enrolments', { headers: bearer }),
      await check('POST', '/fleet/enrol', {
        headers: json,
        body: JSON.stringify({ token, instance: 'nr-2' }),
      }),
      await check('POST', '/fleet/enrol', {
        headers: json,
        body: JSON.stringify({ token, instance: 'nr-2' }),
      }),
      await check('POST', '/fleet/enrol', { headers: json, body: JSON.stringify({ token: 5 }) }),
      await check('POST', '/fleet/instances/nr-1/rotate', { headers: bearer }),
      await check('GET', '/fleet/instances/nr-1/desired', { headers: basic }),
      await check('GET', '/fleet/instances/nr-2/desired', { headers: basic }),
      await check('POST', '/fleet/instances/nr-1/credential', { headers: basic }),
      await check('GET', '/fleet/instances', { headers: bearer }),
      await check('POST', '/fleet/instances/nr-1/revoke', { headers: bearer }),
      await check('POST', '/fleet/instances/nr-1/credential', { headers: basic }),
      await check('DELETE', `/fleet/enrolments/${id}`, { headers: bearer }),
      await check('DELETE', `/fleet/enrolments/${id}`, { headers: bearer }),
    ]
    expect(statuses).toEqual([201, 400, 401, 200, 201, 401, 400, 204, 200, 403, 200, 200, 204, 401, 204, 404])
    expect(problems).toEqual([])
  })
})
