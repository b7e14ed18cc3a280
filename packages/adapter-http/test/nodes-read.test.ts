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

describe('GET /nodes, /nodes/:module, /nodes/:module/:set', () => {
  test('GET /nodes: every node set of every module, one flat array sorted by id', async () => {
    const world = await createWorld()
    const res = await world.get('/nodes', await world.login('reader', 'read'))
    expect(res.status).toBe(200)
    expect(await res.json()).toStrictEqual([...scopedModule(true).nodes, ...plainModule(true).nodes])
  })

  test('GET /nodes sorts by id, not by module then discovery order', async () => {
    const world = await createWorld()
    // Sets listed b before a; module `a-b` sorts after `a`, but `a-b/…` before `a/…` (`-` < `/`).
    await world.core.modules.sync([
      { name: 'a', version: '1.0.0', sets: [{ name: 'z', types: ['az'] }] },
      {
        name: 'a-b',
        version: '1.0.0',
        sets: [
          { name: 'y', types: ['y'] },
          { name: 'x', types: ['x'] },
        ],
      },
    ])
    const res = await world.get('/nodes', await world.login('reader', 'read'))
    const ids = ((await res.json()) as Array<{ id: string }>).map((set) => set.id)
    // The modules of the world stay: discovery never forgets a module.
    expect(ids).toEqual([
      '@acme/flow-kit/alpha',
      '@acme/flow-kit/beta',
      '@acme/flow-kit/gamma',
      'a-b/x',
      'a-b/y',
      'a/z',
      'node-red-node-random/random',
    ])
  })

  for (const path of SCOPED_PATHS) {
    test(`GET ${path}: the Node Module object`, async () => {
      const world = await createWorld()
      const res = await world.get(path, await world.login('reader', 'read'))
      expect(res.status).toBe(200)
      expect(await res.json()).toStrictEqual(scopedModule(true))
    })
    test(`GET ${path}/gamma: one node set`, async () => {
      const world = await createWorld()
      const res = await world.get(`${path}/gamma`, await world.login('reader', 'read'))
      expect(await res.json()).toStrictEqual(setView(SCOPED.name, 'gamma', ['gamma']))
    })
  }

  test('GET a plain module and its set', async () => {
    const world = await createWorld()
    const token = await world.login('reader', 'read')
    expect(await (await world.get(`/nodes/${PLAIN.name}`, token)).json()).toStrictEqual(plainModule(true))
    expect(await (await world.get(`/nodes/${PLAIN.name}/random`, token)).json()).toStrictEqual(
      setView(PLAIN.name, 'random', ['random']),
    )
  })

  test('unknown module or set: 404 empty', async () => {
    const world = await createWorld()
    const token = await world.login('reader', 'read')
    for (const path of [
      '/nodes/no-such-module',
      '/nodes/@acme/flow-kit/nope',
      '/nodes/node-red-node-random/x/y',
    ]) {
      await expectNotFound(await world.get(path, token))
    }
  })

  test('nodes.read is needed, checked before the lookup', async () => {
    const world = await createWorld()
    for (const path of [
      '/nodes',
      `/nodes/${PLAIN.name}`,
      '/nodes/no-such-module',
      `/nodes/${PLAIN.name}/random`,
    ]) {
      await expectChallenge(await world.get(path))
    }
    const settingsOnly = await createWorld({ defaultPermissions: 'settings.read' })
    await expectChallenge(await settingsOnly.get('/nodes'))
  })

  test('HEAD behaves like GET without a body', async () => {
    const world = await createWorld()
    const token = await world.login()
    for (const path of ['/nodes', SCOPED_PATHS[1] as string, `/nodes/${PLAIN.name}/random`]) {
      const res = await world.request(path, { method: 'HEAD', headers: { Authorization: `Bearer ${token}` } })
      expect(res.status, path).toBe(200)
      expect(await res.text()).toBe('')
    }
    const missing = await world.request('/nodes/nope', {
      method: 'HEAD',
      headers: { Authorization: `Bearer ${token}` },
    })
    expect(missing.status).toBe(404)
  })
})
