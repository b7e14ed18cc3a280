// Snapshots of flows in the core: the flow JSON's rules, names, versions per name, the modules a
// snapshot's types need, its bound in bytes, its file and the diff of two.
import { createMemoryStores } from '@flowadmin/adapter-memory'
import { describe, expect, it } from 'vitest'
import { operator, type UserPrincipal } from '../src/auth/principal.js'
import { diffFlows } from '../src/flows/flow-diff.js'
import {
  byteLength,
  checkFlows,
  MAX_NODE_DEPTH,
  moduleTypesOf,
  snapshotFile,
} from '../src/flows/flow-rules.js'
import { ASK_LIFETIME_MS } from '../src/flows/snapshots.js'
import { fleetWorld, KIT, kit, report } from './fleet-fixtures.js'

const ADDRESS = '10.0.0.1'
/** press-1 sending its flows, as its own client, from its address. */
const PRESS = { instance: 'press-1', client: 'fleet/press-1', address: '10.0.0.7' }
const alice: UserPrincipal = {
  kind: 'user',
  username: 'alice',
  clientId: 'node-red-admin',
  permissions: ['flows.write'],
  tokenId: 't1',
  tokenKind: 'api',
  audience: 'flowadmin',
  signedInAt: 0,
  signIn: null,
}

const tab = { id: 't1', type: 'tab', label: 'Line 1' }
const inject = { id: 'n1', type: 'inject', z: 't1', name: 'tick', wires: [['n2']] }
const debug = { id: 'n2', type: 'debug', z: 't1', wires: [] }
const FLOWS = [tab, inject, debug]

describe('checkFlows', () => {
  it('takes Node-RED’s flow JSON: tabs, subflows, their instances, groups and config nodes', () => {
    const flows = [
      tab,
      { id: 's1', type: 'subflow', name: 'Scale', in: [], out: [] },
      { id: 's1n', type: 'function', z: 's1', func: 'return msg' },
      { id: 'i1', type: 'subflow:s1', z: 't1' },
      { id: 'g1', type: 'group', z: 't1', nodes: ['i1'] },
      { id: 'b1', type: 'mqtt-broker', broker: 'localhost' },
      { id: 'c1', type: 'ui_base', z: '' },
    ]
    expect(checkFlows(flows)).toEqual({ ok: true, value: flows })
    expect(checkFlows([])).toEqual({ ok: true, value: [] })
  })

  it.each([
    [{ flows: FLOWS }, 'flows: must be an array of nodes (Node-RED’s flow JSON)'],
    [[tab, 'n1'], 'flows[1]: must be an object'],
    [[tab, null], 'flows[1]: must be an object'],
    [[tab, { type: 'inject' }], 'flows[1]: id must be a non-empty string'],
    [[{ id: 7, type: 'tab' }], 'flows[0]: id must be a non-empty string'],
    [[tab, { id: 'n1', z: 't1' }], 'flows[1] (id "n1"): type must be a non-empty string'],
    [[tab, inject, { ...debug, id: 'n1' }], 'flows[2] (id "n1"): the id of flows[1] too; ids must be unique'],
    [[inject], 'flows[0] (id "n1"): z names "t1", no tab or subflow of these flows'],
    [[tab, { ...inject, z: 7 }], 'flows[1] (id "n1"): z must be a string'],
    [
      [tab, { id: 'i1', type: 'subflow:s9', z: 't1' }],
      'flows[1] (id "i1"): type "subflow:s9" names no subflow of these flows',
    ],
  ])('refuses %j: %s', (flows, message) => {
    expect(checkFlows(flows)).toEqual({ ok: false, error: message })
  })

  it('refuses a node holding credentials, whatever they hold: an instance keeps its own', () => {
    const broker = {
      id: 'b1',
      type: 'mqtt-broker',
      broker: 'localhost',
      credentials: { user: 'u', password: 'p' },
    }
    for (const credentials of [{ user: 'u', password: 'p' }, {}]) {
      expect(checkFlows([tab, { ...broker, credentials }])).toEqual({
        ok: false,
        error:
          'flows[1] (id "b1"): holds credentials; credentials never travel in a snapshot (each instance keeps its own): remove the node\'s "credentials"',
      })
    }
  })

  it(`takes a node nesting ${MAX_NODE_DEPTH} levels, and refuses one nesting deeper, without running out of stack`, () => {
    const nested = (levels: number) => {
      let value: unknown = 'x'
      for (let level = 0; level < levels; level++) value = [value]
      return value
    }
    // The node is the first level, its `payload` the second.
    const fits = { ...inject, payload: nested(MAX_NODE_DEPTH - 1) }
    expect(checkFlows([tab, fits])).toEqual({ ok: true, value: [tab, fits] })
    const refusal = {
      ok: false,
      error: `flows[1] (id "n1"): nests arrays and objects more than ${MAX_NODE_DEPTH} levels deep`,
    }
    expect(checkFlows([tab, { ...inject, payload: nested(MAX_NODE_DEPTH) }])).toEqual(refusal)
    expect(checkFlows([tab, { ...inject, payload: nested(20_000) }])).toEqual(refusal)
  })
})

describe('moduleTypesOf', () => {
  it('names the types a module must provide, once each and sorted: not Node-RED’s own, not a subflow’s', () => {
    const flows = checkFlows([
      tab,
      inject,
      { id: 's1', type: 'subflow' },
      { id: 'i1', type: 'subflow:s1', z: 't1' },
      { id: 'u2', type: 'ui_button', z: 't1' },
      { id: 'u1', type: 'ui_base' },
      { id: 'u3', type: 'ui_button', z: 't1' },
      { id: 'h1', type: 'http request', z: 't1' },
    ])
    if (!flows.ok) throw new Error(flows.error)
    expect(moduleTypesOf(flows.value)).toEqual(['ui_base', 'ui_button'])
  })
})

describe('diffFlows', () => {
  it('names the nodes added, removed and changed by id, with the keys that differ; key order does not count', () => {
    const before = [tab, inject, debug, { id: 'old', type: 'comment', z: 't1', name: 'note' }]
    const after = [
      { label: 'Line 1', type: 'tab', id: 't1' },
      { ...inject, repeat: '5', name: 'tock', wires: [['n2', 'n3']] },
      { wires: [], z: 't1', type: 'debug', id: 'n2' },
      { id: 'n3', type: 'function', z: 't1', func: 'return msg' },
    ]
    expect(diffFlows(before, after)).toEqual({
      added: [{ id: 'n3', type: 'function', z: 't1' }],
      removed: [{ id: 'old', type: 'comment', z: 't1', name: 'note' }],
      changed: [{ id: 'n1', type: 'inject', z: 't1', name: 'tock', keys: ['name', 'repeat', 'wires'] }],
    })
  })

  it('sees a nested object’s keys in another order as the same, and an array’s items in another order as a change', () => {
    const a = { id: 'x', type: 'change', rules: [{ t: 'set', p: 'payload' }], props: { a: 1, b: [1, 2] } }
    const reordered = {
      id: 'x',
      type: 'change',
      rules: [{ p: 'payload', t: 'set' }],
      props: { b: [1, 2], a: 1 },
    }
    expect(diffFlows([a], [reordered])).toEqual({ added: [], removed: [], changed: [] })
    const swapped = { ...a, props: { a: 1, b: [2, 1] } }
    expect(diffFlows([a], [swapped]).changed).toEqual([{ id: 'x', type: 'change', keys: ['props'] }])
    expect(diffFlows([a], [{ ...a, extra: null }]).changed).toEqual([
      { id: 'x', type: 'change', keys: ['extra'] },
    ])
  })
})

describe('snapshotFile', () => {
  it('writes {name, modules, flows} one module and one node a line, keys in their order, which JSON reads back', () => {
    const flows = [{ type: 'tab', id: 't1' }, inject]
    const file = snapshotFile('line-1', [{ name: KIT, version: '1.0.0' }], JSON.stringify(flows))
    expect(file).toBe(
      [
        '{',
        '  "name": "line-1",',
        '  "modules": [',
        `    {"name":"${KIT}","version":"1.0.0"}`,
        '  ],',
        '  "flows": [',
        '    {"type":"tab","id":"t1"},',
        '    {"id":"n1","type":"inject","z":"t1","name":"tick","wires":[["n2"]]}',
        '  ]',
        '}',
        '',
      ].join('\n'),
    )
    expect(JSON.parse(file)).toEqual({ name: 'line-1', modules: [{ name: KIT, version: '1.0.0' }], flows })
    expect(snapshotFile('empty', [], '[]')).toBe(
      '{\n  "name": "empty",\n  "modules": [],\n  "flows": []\n}\n',
    )
  })

  it('counts its bytes in UTF-8', () => {
    for (const text of ['plain', 'Zoë', '温度', 'wave 👋', 'lone \ud800 half']) {
      expect(byteLength(text)).toBe(new TextEncoder().encode(text).byteLength)
    }
  })
})

describe('snapshots', () => {
  it('makes version 1, then 2, of a name, each on its own, with who made it and when; audited', async () => {
    const { fleet, clock, events } = fleetWorld()
    const first = await fleet.snapshots.create(alice, { name: 'line-1', flows: FLOWS }, ADDRESS)
    clock.advance(60_000)
    const second = await fleet.snapshots.create(operator, { name: 'line-1', flows: [tab] }, null)
    const other = await fleet.snapshots.create(alice, { name: 'line-2', flows: [] }, ADDRESS)
    if (!first.ok || !second.ok || !other.ok) throw new Error('refused')
    expect(first.value).toMatchObject({
      name: 'line-1',
      version: 1,
      nodes: 3,
      createdBy: 'alice',
      modules: [],
    })
    expect(second.value).toMatchObject({ name: 'line-1', version: 2, nodes: 1, createdBy: null })
    expect(second.value.createdAt - first.value.createdAt).toBe(60_000)
    expect(other.value.version).toBe(1)
    expect(new Set([first.value.id, second.value.id, other.value.id]).size).toBe(3)
    expect((await fleet.snapshots.list()).map((each) => `${each.name}@${each.version}`)).toEqual([
      'line-1@1',
      'line-1@2',
      'line-2@1',
    ])
    expect(events.ofType('fleet.snapshot_created')).toEqual([
      {
        type: 'fleet.snapshot_created',
        at: first.value.createdAt,
        snapshot: first.value.id,
        name: 'line-1',
        version: 1,
        nodes: 3,
        instance: null,
        username: 'alice',
        clientId: 'node-red-admin',
        address: ADDRESS,
      },
      expect.objectContaining({ name: 'line-1', version: 2, username: null }),
      expect.objectContaining({ name: 'line-2', version: 1, username: 'alice' }),
    ])
  })

  it('gives back the file an upload takes, whose size is the snapshot’s bytes', async () => {
    const { fleet } = fleetWorld()
    const made = await fleet.snapshots.create(alice, { name: 'line-1', flows: FLOWS }, ADDRESS)
    if (!made.ok) throw new Error('refused')
    const read = await fleet.snapshots.file(made.value.id)
    if (!read.ok) throw new Error('not found')
    expect(JSON.parse(read.value.file)).toEqual({ name: 'line-1', modules: [], flows: FLOWS })
    expect(byteLength(read.value.file)).toBe(made.value.bytes)
    const { unknownTypes: _, ...meta } = made.value
    expect(read.value.meta).toEqual(meta)
    expect(await fleet.snapshots.file('nope')).toEqual({
      ok: false,
      error: { code: 'snapshot_not_found', id: 'nope' },
    })
  })

  it('names the modules the fleet knows to provide its types: the decided ones first, then those instances report', async () => {
    const { fleet, send, stores } = fleetWorld()
    await stores.modules.upsert({ name: KIT, version: '2.0.0', sets: [{ name: 'a', types: ['a'] }] })
    await send('press-1', report({ modules: [kit(true, true, '1.0.0')] }))
    await send(
      'press-2',
      report({
        modules: [
          {
            name: 'node-red-dashboard',
            version: '3.6.5',
            sets: [{ name: 'ui', types: ['ui_base', 'ui_button'], enabled: true, loaded: true }],
          },
        ],
      }),
    )
    const flows = [
      tab,
      { id: 'a1', type: 'a', z: 't1' },
      { id: 'b1', type: 'b', z: 't1' },
      { id: 'u1', type: 'ui_button', z: 't1' },
      { id: 'm1', type: 'mystery', z: 't1' },
    ]
    const made = await fleet.snapshots.create(alice, { name: 'line-1', flows }, ADDRESS)
    expect(made).toMatchObject({
      ok: true,
      value: {
        // a is the decided module's (2.0.0); b only an instance's, of the same module: the first to provide a type counts.
        modules: [
          { name: KIT, version: '2.0.0' },
          { name: 'node-red-dashboard', version: '3.6.5' },
        ],
        unknownTypes: ['mystery'],
      },
    })
  })

  it('keeps the modules an upload names, sorted, in place of those the fleet would name', async () => {
    const { fleet, stores } = fleetWorld()
    await stores.modules.upsert({ name: KIT, version: '2.0.0', sets: [{ name: 'a', types: ['a'] }] })
    const modules = [
      { name: 'node-red-dashboard', version: '3.6.5' },
      { name: '@acme/node-red-x', version: '1.0.0-beta.1' },
    ]
    const made = await fleet.snapshots.create(
      alice,
      { name: 'x', flows: [{ id: 'a1', type: 'a' }], modules },
      null,
    )
    expect(made).toMatchObject({ ok: true, value: { modules: [modules[1], modules[0]], unknownTypes: [] } })
  })

  it.each([
    [
      { name: '', flows: [] },
      'name: 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit',
    ],
    [
      { name: '-x', flows: [] },
      'name: 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit',
    ],
    [
      { name: 'a'.repeat(65), flows: [] },
      'name: 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit',
    ],
    [
      { name: 'line/1', flows: [] },
      'name: 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit',
    ],
    [{ name: 'x', flows: [{ id: 'a' }] }, 'flows[0] (id "a"): type must be a non-empty string'],
    [{ name: 'x', flows: [], modules: {} }, 'modules: must be an array of {name, version}'],
    [
      { name: 'x', flows: [], modules: [{ name: 'Bad Name', version: '1' }] },
      "modules[0]: name must be a node module's name",
    ],
    [
      { name: 'x', flows: [], modules: [{ name: 'a', version: '' }] },
      'modules[0]: version must be 1 to 64 characters',
    ],
    [
      {
        name: 'x',
        flows: [],
        modules: [
          { name: 'a', version: '1' },
          { name: 'a', version: '2' },
        ],
      },
      'modules[1]: a is listed twice',
    ],
  ])('refuses %j, keeping nothing: %s', async (upload, message) => {
    const { fleet, events } = fleetWorld()
    expect(await fleet.snapshots.create(alice, upload, ADDRESS)).toEqual({
      ok: false,
      error: { code: 'invalid_request', message },
    })
    expect(await fleet.snapshots.list()).toEqual([])
    expect(events.ofType('fleet.snapshot_created')).toEqual([])
  })

  it('refuses a snapshot whose file would pass the bound, and takes one of exactly the bound', async () => {
    const flows = [{ id: 'c1', type: 'comment', info: 'x'.repeat(200) }]
    const bytes = byteLength(snapshotFile('big', [], JSON.stringify(flows)))
    const { fleet } = fleetWorld({ snapshots: { maxBytes: bytes - 1 } })
    expect(await fleet.snapshots.create(alice, { name: 'big', flows }, ADDRESS)).toEqual({
      ok: false,
      error: { code: 'snapshot_too_large', bytes, limit: bytes - 1 },
    })
    expect(await fleet.snapshots.list()).toEqual([])
    const exact = fleetWorld({ snapshots: { maxBytes: bytes } }).fleet
    expect(await exact.snapshots.create(alice, { name: 'big', flows }, ADDRESS)).toMatchObject({
      ok: true,
      value: { bytes },
    })
  })

  it('compares two snapshots node by node, and says which one it does not know', async () => {
    const { fleet } = fleetWorld()
    const a = await fleet.snapshots.create(alice, { name: 'line-1', flows: FLOWS }, ADDRESS)
    const b = await fleet.snapshots.create(
      alice,
      { name: 'line-1', flows: [tab, { ...inject, name: 'tock' }] },
      ADDRESS,
    )
    if (!a.ok || !b.ok) throw new Error('refused')
    expect(await fleet.snapshots.diff(a.value.id, b.value.id)).toEqual({
      ok: true,
      value: {
        added: [],
        removed: [{ id: 'n2', type: 'debug', z: 't1' }],
        changed: [{ id: 'n1', type: 'inject', z: 't1', name: 'tock', keys: ['name'] }],
      },
    })
    expect(await fleet.snapshots.diff(a.value.id, a.value.id)).toEqual({
      ok: true,
      value: { added: [], removed: [], changed: [] },
    })
    expect(await fleet.snapshots.diff('gone', b.value.id)).toEqual({
      ok: false,
      error: { code: 'snapshot_not_found', id: 'gone' },
    })
    expect(await fleet.snapshots.diff(a.value.id, 'gone')).toEqual({
      ok: false,
      error: { code: 'snapshot_not_found', id: 'gone' },
    })
  })

  it('asks a known instance for its flows, and keeps what it sends as the asker’s snapshot; once', async () => {
    const { fleet, send, events, clock } = fleetWorld()
    await send('press-1', report())
    expect(await fleet.snapshots.ask(alice, 'press-9', 'line-1', ADDRESS)).toEqual({ ok: true, value: null })
    expect(await fleet.snapshots.ask(alice, 'press-1', 'line 1', ADDRESS)).toMatchObject({
      ok: false,
      error: { code: 'invalid_request' },
    })
    const asked = await fleet.snapshots.ask(alice, 'press-1', 'line-1', ADDRESS)
    expect(asked).toEqual({
      ok: true,
      value: { instance: 'press-1', name: 'line-1', by: 'alice', at: clock.now() },
    })
    expect(await fleet.snapshots.asked('press-1')).toEqual(asked.ok ? asked.value : null)
    expect(await fleet.snapshots.fromInstance(PRESS, { name: 'other', flows: FLOWS })).toEqual({
      ok: false,
      error: { code: 'snapshot_not_asked', instance: 'press-1', name: 'other' },
    })
    const made = await fleet.snapshots.fromInstance(PRESS, { name: 'line-1', flows: FLOWS })
    expect(made).toMatchObject({
      ok: true,
      value: { name: 'line-1', version: 1, nodes: 3, createdBy: 'alice' },
    })
    expect(await fleet.snapshots.asked('press-1')).toBeNull()
    expect(await fleet.snapshots.fromInstance(PRESS, { name: 'line-1', flows: FLOWS })).toMatchObject({
      ok: false,
      error: { code: 'snapshot_not_asked' },
    })
    expect(events.ofType('fleet.snapshot_asked')).toEqual([
      {
        type: 'fleet.snapshot_asked',
        at: clock.now(),
        instance: 'press-1',
        name: 'line-1',
        username: 'alice',
        clientId: 'node-red-admin',
        address: ADDRESS,
      },
    ])
    expect(events.ofType('fleet.snapshot_created')).toMatchObject([
      {
        name: 'line-1',
        version: 1,
        instance: 'press-1',
        // The asker acts, from no address of theirs; the instance's address is the sender's.
        sender: { client: 'fleet/press-1', address: '10.0.0.7' },
        username: 'alice',
        clientId: null,
        address: null,
      },
    ])
  })

  it('spends the ask on flows it refuses, and says why in the trail', async () => {
    const { fleet, send, events } = fleetWorld()
    await send('press-1', report())
    await fleet.snapshots.ask(alice, 'press-1', 'line-1', ADDRESS)
    expect(await fleet.snapshots.fromInstance(PRESS, { name: 'line-1', flows: [{ id: 'n1' }] })).toEqual({
      ok: false,
      error: { code: 'invalid_request', message: 'flows[0] (id "n1"): type must be a non-empty string' },
    })
    expect(await fleet.snapshots.asked('press-1')).toBeNull()
    expect(await fleet.snapshots.list()).toEqual([])
    expect(events.ofType('fleet.snapshot_refused')).toMatchObject([
      {
        instance: 'press-1',
        name: 'line-1',
        message: 'flows[0] (id "n1"): type must be a non-empty string',
        sender: { client: 'fleet/press-1', address: '10.0.0.7' },
        username: 'alice',
        address: null,
      },
    ])
  })

  it('leaves the ask in place when the flows cannot be checked or kept, and says so in the trail', async () => {
    const stores = createMemoryStores()
    const { fleet, send, events } = fleetWorld({}, stores)
    await send('press-1', report())
    await fleet.snapshots.ask(alice, 'press-1', 'line-1', ADDRESS)
    const { create } = stores.snapshots
    stores.snapshots.create = () => Promise.reject(new Error('the disk is full'))
    await expect(fleet.snapshots.fromInstance(PRESS, { name: 'line-1', flows: FLOWS })).rejects.toThrow(
      'the disk is full',
    )
    expect(await fleet.snapshots.asked('press-1')).toMatchObject({ name: 'line-1', by: 'alice' })
    expect(events.ofType('fleet.snapshot_refused')).toMatchObject([
      {
        instance: 'press-1',
        name: 'line-1',
        message: 'the store did not keep the snapshot; the ask awaits the flows again',
        sender: { client: 'fleet/press-1', address: '10.0.0.7' },
        username: 'alice',
      },
    ])
    // Checking the flows needs the fleet's modules: a store failing there spends nothing.
    stores.snapshots.create = create
    const { reports } = stores.fleet
    stores.fleet.reports = () => Promise.reject(new Error('the database is away'))
    await expect(fleet.snapshots.fromInstance(PRESS, { name: 'line-1', flows: FLOWS })).rejects.toThrow(
      'the database is away',
    )
    expect(await fleet.snapshots.asked('press-1')).toMatchObject({ name: 'line-1' })
    stores.fleet.reports = reports
    expect(await fleet.snapshots.fromInstance(PRESS, { name: 'line-1', flows: FLOWS })).toMatchObject({
      ok: true,
      value: { name: 'line-1', version: 1, createdBy: 'alice' },
    })
    expect(await fleet.snapshots.asked('press-1')).toBeNull()
  })

  it(`drops an ask not answered within ${ASK_LIFETIME_MS / 60_000} minutes: polls no longer carry it`, async () => {
    const { fleet, send, clock } = fleetWorld()
    await send('press-1', report())
    await fleet.snapshots.ask(alice, 'press-1', 'line-1', ADDRESS)
    clock.advance(ASK_LIFETIME_MS - 1)
    expect(await fleet.snapshots.asked('press-1')).toMatchObject({ name: 'line-1' })
    clock.advance(1)
    expect(await fleet.snapshots.asked('press-1')).toBeNull()
    expect(await fleet.snapshots.fromInstance(PRESS, { name: 'line-1', flows: FLOWS })).toEqual({
      ok: false,
      error: { code: 'snapshot_not_asked', instance: 'press-1', name: 'line-1' },
    })
  })

  it('spends the ask on flows too large to read, and says why in the trail', async () => {
    const { fleet, send, events } = fleetWorld()
    await send('press-1', report())
    await fleet.snapshots.tooLarge(PRESS, 1000)
    expect(events.ofType('fleet.snapshot_refused')).toEqual([])
    await fleet.snapshots.ask(alice, 'press-1', 'line-1', ADDRESS)
    await fleet.snapshots.tooLarge(PRESS, 1000)
    expect(await fleet.snapshots.asked('press-1')).toBeNull()
    expect(events.ofType('fleet.snapshot_refused')).toMatchObject([
      {
        instance: 'press-1',
        name: 'line-1',
        message: 'the flows sent were more than 1000 bytes, the most a body may have',
        sender: { client: 'fleet/press-1', address: '10.0.0.7' },
        username: 'alice',
      },
    ])
  })
})
