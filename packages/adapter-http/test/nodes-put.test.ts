import { describe, expect, test } from 'vitest'
import {
  createWorld,
  expectChallenge,
  expectNotFound,
  PLAIN,
  plainModule,
  SCOPED,
  SCOPED_PATHS,
  scopedModule,
  setView,
} from './helpers.js'

describe('PUT /nodes/:module', () => {
  test('disable then enable a plain module: 200 with the Node Module object', async () => {
    const world = await createWorld()
    const token = await world.login()
    const disabled = await world.put(`/nodes/${PLAIN.name}`, { enabled: false }, token)
    expect(disabled.status).toBe(200)
    expect(disabled.headers.get('Content-Type')).toMatch(/^application\/json/)
    // Exactly these fields: no filesystem path, nothing else.
    expect(await disabled.json()).toStrictEqual(plainModule(false))
    const enabled = await world.put(`/nodes/${PLAIN.name}`, { enabled: true }, token)
    expect(await enabled.json()).toStrictEqual(plainModule(true))
  })

  for (const path of SCOPED_PATHS) {
    test(`scoped module as ${path}: every node set changes`, async () => {
      const world = await createWorld()
      const token = await world.login()
      const res = await world.put(path, { enabled: false }, token)
      expect(res.status).toBe(200)
      expect(await res.json()).toStrictEqual(scopedModule(false))
      expect(await world.moduleState(SCOPED.name)).toEqual([
        ['alpha', false],
        ['beta', false],
        ['gamma', false],
      ])
    })
  }

  test('the change is recorded with the actor', async () => {
    const world = await createWorld()
    const token = await world.login('admin', '*', 'service-editor')
    await world.put(SCOPED_PATHS[1] as string, { enabled: false }, token)
    expect(world.events.ofType('module.disabled')).toEqual([
      expect.objectContaining({
        module: SCOPED.name,
        sets: ['@acme/flow-kit/alpha', '@acme/flow-kit/beta', '@acme/flow-kit/gamma'],
        username: 'admin',
        clientId: 'service-editor',
        address: '203.0.113.7',
      }),
    ])
  })

  test('idempotent: setting the current state is 200 and changes nothing', async () => {
    const world = await createWorld()
    const token = await world.login()
    const again = await world.put(`/nodes/${PLAIN.name}`, { enabled: true }, token)
    expect(again.status).toBe(200)
    expect(await again.json()).toStrictEqual(plainModule(true))
    await world.put(`/nodes/${PLAIN.name}`, { enabled: false }, token)
    const twice = await world.put(`/nodes/${PLAIN.name}`, { enabled: false }, token)
    expect(await twice.json()).toStrictEqual(plainModule(false))
    expect(world.events.ofType('module.enabled')).toHaveLength(0)
    expect(world.events.ofType('module.disabled')).toHaveLength(1)
  })

  test('extra fields beside enabled are ignored', async () => {
    const world = await createWorld()
    const res = await world.put(`/nodes/${PLAIN.name}`, { enabled: false, note: 'x' }, await world.login())
    expect(res.status).toBe(200)
  })

  test('type in use: 400 naming the types, and nothing changes (all or nothing)', async () => {
    const world = await createWorld({ typesInUse: ['alpha-out', 'beta'] })
    const token = await world.login()
    const res = await world.put(SCOPED_PATHS[0] as string, { enabled: false }, token)
    expect(res.status).toBe(400)
    expect(res.headers.get('Content-Type')).toMatch(/^application\/json/)
    expect(await res.json()).toStrictEqual({
      code: 'type_in_use',
      message: 'Type in use: alpha-out, beta',
      types: ['alpha-out', 'beta'],
    })
    expect(await world.moduleState(SCOPED.name)).toEqual([
      ['alpha', true],
      ['beta', true],
      ['gamma', true],
    ])
    expect(world.events.ofType('module.disabled')).toEqual([])
    // Enabling is never blocked, and a set whose types are not in use may go.
    expect((await world.put(`${SCOPED_PATHS[0]}/gamma`, { enabled: false }, token)).status).toBe(200)
  })

  test('flows that cannot be read: 503 flows_unavailable, and nothing changes', async () => {
    const world = await createWorld()
    const token = await world.login()
    world.typeUsage.unreadable = true
    const res = await world.put(SCOPED_PATHS[0] as string, { enabled: false }, token)
    expect(res.status).toBe(503)
    expect(await res.json()).toStrictEqual({
      code: 'flows_unavailable',
      message: 'The deployed flows cannot be read, so no module can be disabled until they can',
    })
    expect(await world.moduleState(SCOPED.name)).toEqual([
      ['alpha', true],
      ['beta', true],
      ['gamma', true],
    ])
  })

  test('enabled is persisted: a restarted app over the same store reports it', async () => {
    const first = await createWorld()
    await first.put(SCOPED_PATHS[2] as string, { enabled: false }, await first.login())
    const second = await createWorld({ stores: first.stores })
    const res = await second.get(SCOPED_PATHS[0] as string, await second.login())
    const body = (await res.json()) as { nodes: Array<{ enabled: boolean; loaded: boolean }> }
    // Disabled at start: not loaded. Enabling loads it.
    expect(body.nodes.map((set) => [set.enabled, set.loaded])).toEqual([
      [false, false],
      [false, false],
      [false, false],
    ])
    const enabled = await second.put(SCOPED_PATHS[0] as string, { enabled: true }, await second.login())
    expect(await enabled.json()).toStrictEqual(scopedModule(true))
  })

  test('a node set that failed to load reports loaded:false and err', async () => {
    const world = await createWorld({ loaderFailures: { '@acme/flow-kit/gamma': 'gamma.js: SyntaxError' } })
    const res = await world.put(SCOPED_PATHS[0] as string, { enabled: false }, await world.login())
    const body = (await res.json()) as { nodes: unknown[] }
    expect(body.nodes[2]).toStrictEqual({
      ...setView(SCOPED.name, 'gamma', ['gamma'], false),
      loaded: false,
      err: 'gamma.js: SyntaxError',
    })
  })
})

describe('PUT /nodes/:module: 400 invalid_request for a bad body, module unchanged', () => {
  const cases: Array<[string, string, string, RegExp]> = [
    ['missing enabled', '{}', 'application/json', /enabled/],
    ['enabled "false"', '{"enabled":"false"}', 'application/json', /boolean/],
    ['enabled "true"', '{"enabled":"true"}', 'application/json', /boolean/],
    ['enabled 1', '{"enabled":1}', 'application/json', /boolean/],
    ['enabled 0', '{"enabled":0}', 'application/json', /boolean/],
    ['enabled null', '{"enabled":null}', 'application/json', /boolean/],
    ['enabled []', '{"enabled":[]}', 'application/json', /boolean/],
    ['array body', '[{"enabled":false}]', 'application/json', /object/],
    ['JSON null', 'null', 'application/json', /object/],
    ['JSON number', '1', 'application/json', /object/],
    ['malformed JSON', '{"enabled":', 'application/json', /JSON/],
    ['empty body', '', 'application/json', /JSON/],
    ['form body', 'enabled=false', 'application/x-www-form-urlencoded', /application\/json/],
    ['text body', '{"enabled":false}', 'text/plain', /application\/json/],
  ]
  for (const [name, body, contentType, message] of cases) {
    test(name, async () => {
      const world = await createWorld()
      const res = await world.put(`/nodes/${PLAIN.name}`, body, await world.login(), contentType)
      expect(res.status).toBe(400)
      expect(res.headers.get('Content-Type')).toMatch(/^application\/json/)
      const answer = (await res.json()) as { code: string; message: string }
      expect(Object.keys(answer).sort()).toEqual(['code', 'message'])
      expect(answer.code).toBe('invalid_request')
      expect(answer.message).toMatch(message)
      expect(await world.moduleState(PLAIN.name)).toEqual([['random', true]])
    })
  }

  test('no content type at all', async () => {
    const world = await createWorld()
    const token = await world.login()
    const res = await world.request(`/nodes/${PLAIN.name}`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${token}` },
    })
    expect(res.status).toBe(400)
    expect(((await res.json()) as { code: string }).code).toBe('invalid_request')
  })

  test('application/json with a charset is fine', async () => {
    const world = await createWorld()
    const token = await world.login()
    const res = await world.put(
      `/nodes/${PLAIN.name}`,
      '{"enabled":false}',
      token,
      'application/json; charset=utf-8',
    )
    expect(res.status).toBe(200)
  })

  test('the body is checked before the module is looked up', async () => {
    const world = await createWorld()
    const res = await world.put('/nodes/no-such-module', '{}', await world.login())
    expect(res.status).toBe(400)
  })
})

describe('PUT /nodes/:module: 401 and 404', () => {
  test('401 comes first: no token, bad body, unknown module', async () => {
    const world = await createWorld()
    await expectChallenge(await world.put('/nodes/no-such-module', '{"enabled":'))
    await expectChallenge(
      await world.put('/nodes/no-such-module', { enabled: false }, 'garbage'),
      'invalid_token',
    )
    const read = await world.login('admin', 'read')
    await expectChallenge(await world.put('/nodes/no-such-module', '{}', read), 'insufficient_scope')
    await expectChallenge(
      await world.put(`/nodes/${PLAIN.name}`, { enabled: false }, read),
      'insufficient_scope',
    )
    expect(await world.moduleState(PLAIN.name)).toEqual([['random', true]])
  })

  for (const path of [
    '/nodes/no-such-module',
    '/nodes/@nope/nothing',
    '/nodes/%40nope%2Fnothing',
    '/nodes/Node-Red-Node-Random',
    '/nodes/@acme%252Fflow-kit',
    '/nodes/@acme',
    '/nodes/node-red-node-random/no-such-set',
    '/nodes/@acme/flow-kit/no-such-set',
    '/nodes/',
    '/nodes/node-red-node-random/',
    '/nodes/node-red-node-random/random/extra',
    '/nodes/@acme/flow-kit/alpha/extra',
    '/nodes//random',
    '/nodes/%E0%A4%A',
  ]) {
    test(`PUT ${path}: 404, empty body`, async () => {
      const world = await createWorld()
      await expectNotFound(await world.put(path, { enabled: false }, await world.login()))
    })
  }
})

describe('node sets: PUT /nodes/:module/:set', () => {
  for (const path of [
    '/nodes/@acme/flow-kit/beta',
    '/nodes/%40acme%2Fflow-kit/beta',
    '/nodes/@acme%2fflow-kit%2Fbeta',
  ]) {
    test(`${path}: only that set changes; the answer is the node set object`, async () => {
      const world = await createWorld()
      const token = await world.login()
      const res = await world.put(path, { enabled: false }, token)
      expect(res.status).toBe(200)
      expect(await res.json()).toStrictEqual(setView(SCOPED.name, 'beta', ['beta'], false))
      expect(await world.moduleState(SCOPED.name)).toEqual([
        ['alpha', true],
        ['beta', false],
        ['gamma', true],
      ])
    })
  }

  test('plain module set; same rules: validation, type in use, scope', async () => {
    const world = await createWorld({ typesInUse: ['random'] })
    const token = await world.login()
    const path = `/nodes/${PLAIN.name}/random`
    expect((await world.put(path, { enabled: 'no' }, token)).status).toBe(400)
    const inUse = await world.put(path, { enabled: false }, token)
    expect(await inUse.json()).toStrictEqual({
      code: 'type_in_use',
      message: 'Type in use: random',
      types: ['random'],
    })
    await expectChallenge(
      await world.put(path, { enabled: false }, await world.login('reader', 'read')),
      'insufficient_scope',
    )
    expect(await (await world.put(path, { enabled: true }, token)).json()).toStrictEqual(
      setView(PLAIN.name, 'random', ['random']),
    )
  })
})
