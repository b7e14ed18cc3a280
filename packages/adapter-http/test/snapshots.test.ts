// Snapshots of flows over the API: uploaded (flows.write on flowadmin, audited), listed,
// downloaded as the file an upload takes, compared; refusals in the API's error shape.
import { createMemoryStores } from '@flowadmin/adapter-memory'
import { describe, expect, it } from 'vitest'
import { createWorld, expectChallenge } from './helpers.js'
import { answersChecked } from './openapi-validate.js'

const tab = { id: 't1', type: 'tab', label: 'Line 1' }
const inject = { id: 'n1', type: 'inject', z: 't1', name: 'tick', wires: [['n2']] }
const debug = { id: 'n2', type: 'debug', z: 't1', wires: [] }
const button = { id: 'u1', type: 'ui_button', z: 't1', wires: [] }
const FLOWS = [tab, inject, debug]

const world = (maxBytes?: number) =>
  createWorld({
    fleet: { answerWaitMs: 0, snapshots: { maxBytes } },
    users: [
      { username: 'deployer', permissions: ['read', 'flows.write'] },
      { username: 'viewer', permissions: ['flows.read'] },
    ],
  })

describe('snapshots of flows over the API', () => {
  it('makes versions of a name, lists them, gives back each file as an upload takes it, and compares two', async () => {
    const w = await world()
    const checked = await answersChecked(w)
    const deployer = await w.login('deployer', '')
    const first = await checked(
      'POST',
      '/fleet/snapshots',
      await w.post('/fleet/snapshots', { name: 'line-1', flows: [...FLOWS, button] }, deployer),
    )
    expect(first.status).toBe(201)
    const made = (await first.json()) as Record<string, unknown>
    expect(made).toEqual({
      id: expect.any(String),
      name: 'line-1',
      version: 1,
      modules: [],
      nodes: 4,
      bytes: expect.any(Number),
      createdBy: 'deployer',
      createdAt: new Date(w.clock.now()).toISOString(),
      unknownTypes: ['ui_button'],
    })
    expect(w.events.ofType('fleet.snapshot_created')).toEqual([
      {
        type: 'fleet.snapshot_created',
        at: w.clock.now(),
        snapshot: made.id,
        name: 'line-1',
        version: 1,
        nodes: 4,
        instance: null,
        username: 'deployer',
        clientId: 'service-admin',
        address: expect.any(String),
      },
    ])

    // The download: the file an upload takes, named by name and version.
    const viewer = await w.login('viewer', '')
    const download = await checked(
      'GET',
      `/fleet/snapshots/${made.id}`,
      await w.get(`/fleet/snapshots/${made.id}`, viewer),
    )
    expect(download.status).toBe(200)
    expect(download.headers.get('Content-Type')).toBe('application/json')
    expect(download.headers.get('Content-Disposition')).toBe('attachment; filename="line-1-v1.json"')
    const file = await download.text()
    expect(new TextEncoder().encode(file).byteLength).toBe(made.bytes)
    expect(file.split('\n')).toContain(`    ${JSON.stringify(inject)},`)
    expect(JSON.parse(file)).toEqual({ name: 'line-1', modules: [], flows: [...FLOWS, button] })

    // The file, changed as in git, uploaded again: version 2 of the same name.
    const edited = JSON.parse(file) as { flows: Array<Record<string, unknown>>; modules: unknown[] }
    edited.flows = edited.flows
      .filter((node) => node.id !== 'n2')
      .map((node) => (node.id === 'n1' ? { ...node, name: 'tock' } : node))
    edited.modules = [{ name: 'node-red-dashboard', version: '3.6.5' }]
    const second = await w.send('POST', '/fleet/snapshots', edited, deployer)
    expect(second.status).toBe(201)
    const next = (await second.json()) as Record<string, unknown>
    expect(next).toMatchObject({ name: 'line-1', version: 2, nodes: 3, modules: edited.modules })

    const listed = await checked('GET', '/fleet/snapshots', await w.get('/fleet/snapshots', viewer))
    expect(await listed.json()).toEqual([
      (({ unknownTypes: _, ...meta }) => meta)(made),
      (({ unknownTypes: _, ...meta }) => meta)(next),
    ])

    const url = `/fleet/snapshots/${made.id}/diff?against=${next.id}`
    const diff = await checked('GET', url, await w.get(url, viewer))
    expect(diff.status).toBe(200)
    expect(await diff.json()).toEqual({
      from: made.id,
      to: next.id,
      added: [],
      removed: [{ id: 'n2', type: 'debug', z: 't1' }],
      changed: [{ id: 'n1', type: 'inject', z: 't1', name: 'tock', keys: ['name'] }],
    })
  })

  it('names the modules the fleet knows to provide the flows’ types', async () => {
    const w = await world()
    await w.stores.modules.upsert({
      name: 'node-red-dashboard',
      version: '3.6.5',
      sets: [{ name: 'ui', types: ['ui_button', 'ui_base'] }],
    })
    const res = await w.post('/fleet/snapshots', { name: 'ui', flows: [tab, button] }, await w.login())
    expect(await res.json()).toMatchObject({
      modules: [{ name: 'node-red-dashboard', version: '3.6.5' }],
      unknownTypes: [],
    })
  })

  it('refuses bad flows, naming what is wrong, and keeps nothing', async () => {
    const w = await world()
    const checked = await answersChecked(w)
    const admin = await w.login()
    const cases: Array<[unknown, string]> = [
      [{ flows: FLOWS }, 'Missing required field: name'],
      [{ name: 7, flows: FLOWS }, 'Invalid field: name must be a string'],
      [
        { name: 'line 1', flows: FLOWS },
        'name: 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit',
      ],
      [{ name: 'x' }, 'Missing required field: flows'],
      [{ name: 'x', flows: { t1: tab } }, 'flows: must be an array of nodes (Node-RED’s flow JSON)'],
      [
        { name: 'x', flows: [tab, { id: 'n1', z: 't1' }] },
        'flows[1] (id "n1"): type must be a non-empty string',
      ],
      [{ name: 'x', flows: [inject] }, 'flows[0] (id "n1"): z names "t1", no tab or subflow of these flows'],
      [{ name: 'x', flows: [], modules: [{ name: 'x' }] }, 'modules[0]: version must be 1 to 64 characters'],
    ]
    for (const [body, message] of cases) {
      const res = await checked('POST', '/fleet/snapshots', await w.post('/fleet/snapshots', body, admin))
      expect(res.status, message).toBe(400)
      expect(await res.json()).toEqual({ code: 'invalid_request', message })
    }
    const text = await w.send('POST', '/fleet/snapshots', '[', admin)
    expect(await text.json()).toEqual({ code: 'invalid_request', message: 'Malformed JSON body' })
    expect(await (await w.get('/fleet/snapshots', admin)).json()).toEqual([])
    expect(w.events.ofType('fleet.snapshot_created')).toEqual([])
  })

  it('refuses with 413 a snapshot whose file passes fleet.snapshots.maxBytes, and a body past four times it', async () => {
    const w = await world(1000)
    const checked = await answersChecked(w)
    const admin = await w.login()
    const big = { name: 'big', flows: [{ id: 'c1', type: 'comment', info: 'x'.repeat(1000) }] }
    const res = await checked('POST', '/fleet/snapshots', await w.post('/fleet/snapshots', big, admin))
    expect(res.status).toBe(413)
    expect(await res.json()).toEqual({
      code: 'payload_too_large',
      message: expect.stringMatching(
        /^The snapshot's file would be \d+ bytes, more than fleet\.snapshots\.maxBytes \(1000\)$/,
      ),
    })
    // Indented, the body is larger than the file it makes: that is allowed, up to four times the bound.
    const roomy = JSON.stringify({ name: 'roomy', flows: FLOWS }).replaceAll(',', `,\n${' '.repeat(150)}`)
    expect(roomy.length).toBeGreaterThan(1000)
    expect(roomy.length).toBeLessThan(4000)
    expect((await w.send('POST', '/fleet/snapshots', roomy, admin)).status).toBe(201)
    const huge = await w.send(
      'POST',
      '/fleet/snapshots',
      { name: 'huge', flows: [], pad: 'x'.repeat(4000) },
      admin,
    )
    expect(huge.status).toBe(413)
    expect(await huge.json()).toEqual({
      code: 'payload_too_large',
      message: 'Request body larger than 4000 bytes',
    })
    expect(
      (await (await w.get('/fleet/snapshots', admin)).json()).map((each: { name: string }) => each.name),
    ).toEqual(['roomy'])
  })

  it('answers 404 for a snapshot it does not have, and 400 for a diff against nothing', async () => {
    const w = await world()
    const checked = await answersChecked(w)
    const admin = await w.login()
    const made = (await (await w.post('/fleet/snapshots', { name: 'a', flows: FLOWS }, admin)).json()) as {
      id: string
    }
    for (const url of [
      '/fleet/snapshots/nope',
      `/fleet/snapshots/nope/diff?against=${made.id}`,
      `/fleet/snapshots/${made.id}/diff?against=nope`,
    ]) {
      const res = await checked('GET', url, await w.get(url, admin))
      expect(res.status, url).toBe(404)
      expect(await res.json()).toEqual({ code: 'snapshot_not_found', message: 'No snapshot nope' })
    }
    const url = `/fleet/snapshots/${made.id}/diff`
    const missing = await checked('GET', url, await w.get(url, admin))
    expect(missing.status).toBe(400)
    expect(await missing.json()).toEqual({
      code: 'invalid_request',
      message: 'Missing required parameter: against',
    })
  })

  it('answers 404 for an id no snapshot could have, without asking the store (PostgreSQL text holds no NUL)', async () => {
    const stores = createMemoryStores()
    const find = stores.snapshots.find
    // As PostgreSQL does: a NUL in a text parameter is an error, not a row.
    stores.snapshots.find = (id) => (id.includes('\u0000') ? Promise.reject(new Error('22021')) : find(id))
    const w = await createWorld({ fleet: { answerWaitMs: 0 }, stores })
    const admin = await w.login()
    const made = (await (await w.post('/fleet/snapshots', { name: 'a', flows: FLOWS }, admin)).json()) as {
      id: string
    }
    for (const [url, id] of [
      ['/fleet/snapshots/%00', '\u0000'],
      [`/fleet/snapshots/${made.id}/diff?against=%00`, '\u0000'],
      [`/fleet/snapshots/a%00b/diff?against=${made.id}`, 'a\u0000b'],
      [`/fleet/snapshots/${'x'.repeat(300)}`, 'x'.repeat(300)],
    ] as const) {
      const res = await w.get(url, admin)
      expect(res.status, url).toBe(404)
      expect(await res.json()).toEqual({ code: 'snapshot_not_found', message: `No snapshot ${id}` })
    }
  })

  it('needs flows.write on flowadmin to make one and flows.read to read them; refusals are audited', async () => {
    const w = await world()
    const admin = await w.login()
    const made = (await (await w.post('/fleet/snapshots', { name: 'a', flows: FLOWS }, admin)).json()) as {
      id: string
    }
    const viewer = await w.login('viewer', '')
    await expectChallenge(
      await w.post('/fleet/snapshots', { name: 'b', flows: FLOWS }, viewer),
      'insufficient_scope',
    )
    const editor = await w.login('editor', '')
    for (const url of [
      '/fleet/snapshots',
      `/fleet/snapshots/${made.id}`,
      `/fleet/snapshots/${made.id}/diff?against=${made.id}`,
    ]) {
      await expectChallenge(await w.get(url, editor), 'insufficient_scope')
      await expectChallenge(await w.get(url))
    }
    // `read` covers every `<resource>.read`, as in Node-RED.
    expect((await w.get('/fleet/snapshots', await w.login('reader', ''))).status).toBe(200)
    expect(w.events.ofType('permission.denied').map((event) => [event.permission, event.username])).toEqual([
      ['flows.write', 'viewer'],
      ['flows.read', 'editor'],
      ['flows.read', 'editor'],
      ['flows.read', 'editor'],
    ])
    expect(
      (await (await w.get('/fleet/snapshots', admin)).json()).map((each: { name: string }) => each.name),
    ).toEqual(['a'])
  })
})
