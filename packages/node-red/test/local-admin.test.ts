// How the fleet agent applies a desired state through its own Node-RED's admin API: against a
// stub of that API that records each call and answers as Node-RED does.
import { createServer, type Server } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'

const require = createRequire(import.meta.url)
const { createLocalAdmin } = require('../lib/local-admin.js') as {
  createLocalAdmin(nodeRed: object, token: string): object
}
interface Applier {
  want(desired: object): void
  handChange(module: string): void
  state(): { applied: string | null; failures: Array<Record<string, string>> }
  idle(): Promise<void>
}
const { createApplier } = require('../lib/fleet-apply.js') as {
  createApplier(parts: object): Applier
}

/** An applier over a local admin API, with a watcher that holds nothing. */
function applierOver(local: object) {
  const reverted: unknown[] = []
  const applier = createApplier({
    local,
    watcher: { hold: () => {}, settle: async () => {}, onceAnswered: () => {} },
    changed: () => {},
    reverted: (entries: unknown[]) => reverted.push(...entries),
    log: () => {},
  })
  return { applier, reverted }
}

/** Applies `desired` (a new version each time) and waits for the run: what Node-RED refused, or null when it did not answer. */
async function applyWith(applier: Applier, desired: object) {
  applier.want(desired)
  await applier.idle()
  const { applied, failures } = applier.state()
  return applied === null ? null : failures
}

/** Node-RED's node sets: `@acme/kit` with two sets, `hand` with one. */
let sets: Array<Record<string, unknown>>
const calls: string[] = []
let server: Server
let port: number

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = ''
    req.on('data', (chunk) => {
      body += chunk
    })
    req.on('end', () => {
      calls.push(`${req.method} ${req.url}${body ? ` ${body}` : ''} ${req.headers.authorization}`)
      const json = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' })
        res.end(JSON.stringify(value))
      }
      if (req.method === 'GET' && req.url === '/admin/nodes') return json(200, sets)
      if (req.method === 'PUT' && req.url === '/admin/nodes/@acme/kit') {
        return json(400, { code: 'type_in_use', message: 'Cannot disable node set while it is in use: a' })
      }
      if (req.method === 'PUT') return json(200, {})
      if (req.method === 'POST' && req.url === '/admin/nodes') {
        return json(400, { code: 'unexpected_error', message: 'Install failed\nnpm ERR! 404' })
      }
      if (req.method === 'DELETE') {
        res.writeHead(204)
        return res.end()
      }
      json(404, {})
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as AddressInfo).port
})
afterAll(() => new Promise((resolve) => server.close(resolve)))
beforeEach(() => {
  calls.length = 0
  sets = [
    {
      id: 'node-red/inject',
      name: 'inject',
      types: ['inject'],
      enabled: true,
      module: 'node-red',
      version: '4.1.2',
    },
    { id: '@acme/kit/a', name: 'a', types: ['a'], enabled: true, module: '@acme/kit', version: '1.0.0' },
    { id: '@acme/kit/b', name: 'b', types: ['b'], enabled: true, module: '@acme/kit', version: '1.0.0' },
    { id: 'hand/h', name: 'h', types: ['h'], enabled: true, module: 'hand', version: '1.0.0' },
  ]
})

const local = () => createLocalAdmin({ uiHost: '0.0.0.0', serverPort: port, httpAdminRoot: '/admin/' }, 'T')
const apply = (desired: object) => applyWith(applierOver(local()).applier, desired)
let versions = 0
const desiredOf = (overrides: object) => ({
  version: `v${++versions}`,
  prune: false,
  modules: [],
  installs: [],
  removals: [],
  ...overrides,
})

describe('applying the desired state', () => {
  it('a whole module at once when every set has one flag; Node-RED’s refusal is kept with its message', async () => {
    const failures = await apply(
      desiredOf({
        modules: [
          {
            name: '@acme/kit',
            sets: [
              { name: 'a', enabled: false },
              { name: 'b', enabled: false },
            ],
          },
        ],
      }),
    )
    expect(failures).toEqual([
      { module: '@acme/kit', action: 'disable', message: 'Cannot disable node set while it is in use: a' },
    ])
    expect(calls).toEqual([
      'GET /admin/nodes Bearer T',
      'PUT /admin/nodes/@acme/kit {"enabled":false} Bearer T',
    ])
  })

  it('one set at a time when the flags differ; what already matches is left alone', async () => {
    const failures = await apply(
      desiredOf({
        modules: [
          {
            name: '@acme/kit',
            sets: [
              { name: 'a', enabled: true },
              { name: 'b', enabled: false },
            ],
          },
        ],
      }),
    )
    expect(failures).toEqual([])
    expect(calls).toEqual([
      'GET /admin/nodes Bearer T',
      'PUT /admin/nodes/@acme/kit/b {"enabled":false} Bearer T',
    ])
  })

  it('installs what it lacks once per desired state (npm’s failure kept), removes what is removed; never Node-RED’s own', async () => {
    const { applier } = applierOver(local())
    const desired = desiredOf({
      installs: [{ module: 'wave', version: '1.0.0' }],
      removals: ['hand', 'node-red-x'],
    })
    expect(await applyWith(applier, desired)).toEqual([
      { module: 'wave', action: 'install', message: 'Install failed' },
    ])
    expect(calls).toEqual([
      'GET /admin/nodes Bearer T',
      'DELETE /admin/nodes/hand Bearer T',
      'POST /admin/nodes {"module":"wave","version":"1.0.0"} Bearer T',
      'GET /admin/nodes Bearer T',
    ])
    calls.length = 0
    // The same desired state again (a hand change to a module it decides runs it again): the
    // failed install is not run again, only reported.
    applier.handChange('hand')
    await applier.idle()
    expect(applier.state().failures).toEqual([
      { module: 'wave', action: 'install', message: 'Install failed' },
    ])
    expect(calls.filter((call) => call.startsWith('POST'))).toEqual([])
    // A new desired state: tried again, once.
    expect(await applyWith(applier, { ...desired, version: 'later' })).toEqual([
      { module: 'wave', action: 'install', message: 'Install failed' },
    ])
    expect(calls.filter((call) => call.startsWith('POST'))).toEqual([
      'POST /admin/nodes {"module":"wave","version":"1.0.0"} Bearer T',
    ])
  })

  it('prune removes every module not installed through flowadmin, and nothing without it', async () => {
    await apply(desiredOf({ installs: [{ module: 'hand', version: null }] }))
    expect(calls.filter((call) => call.startsWith('DELETE'))).toEqual([])
    await apply(desiredOf({ prune: true, installs: [{ module: 'hand', version: null }] }))
    expect(calls.filter((call) => call.startsWith('DELETE'))).toEqual([
      'DELETE /admin/nodes/@acme/kit Bearer T',
    ])
  })

  it('changes nothing when its Node-RED does not answer', async () => {
    const away = createLocalAdmin({ uiHost: '127.0.0.1', serverPort: 9, httpAdminRoot: '/' }, 'T')
    expect(await applyWith(applierOver(away).applier, desiredOf({ removals: ['hand'] }))).toBeNull()
  })
})

describe('the address it calls its own Node-RED on: never a name, only this machine', () => {
  const { adminAddressOf } = require('../lib/local-admin.js') as {
    adminAddressOf(
      uiHost: unknown,
      hooks?: { lookup?: (host: string, options: object) => Promise<unknown>; interfaces?: () => object },
    ): Promise<{ address?: string; refused?: string }>
  }
  const interfaces = () => ({
    lo: [{ address: '127.0.0.1' }, { address: '::1' }],
    eth0: [{ address: '10.1.2.3' }, { address: 'fe80::1%eth0' }],
  })
  const resolvingTo =
    (...addresses: string[]) =>
    async (_host: string, options: object) => {
      expect(options).toEqual({ all: true })
      return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
    }

  it('loopback for none or a wildcard; a loopback or own IP literal as it is', async () => {
    for (const uiHost of [undefined, '', '0.0.0.0', '::']) {
      expect(await adminAddressOf(uiHost, { interfaces })).toEqual({ address: '127.0.0.1' })
    }
    expect(await adminAddressOf('::1', { interfaces })).toEqual({ address: '::1' })
    expect(await adminAddressOf('127.0.0.2', { interfaces })).toEqual({ address: '127.0.0.2' })
    expect(await adminAddressOf('10.1.2.3', { interfaces })).toEqual({ address: '10.1.2.3' })
    expect(await adminAddressOf('10.9.9.9', { interfaces })).toEqual({
      refused: 'uiHost 10.9.9.9 is not an address of this machine',
    })
  })

  it('a name resolved once, to one of this machine’s addresses, else refused', async () => {
    expect(
      await adminAddressOf('node-red.internal', { interfaces, lookup: resolvingTo('10.1.2.3') }),
    ).toEqual({ address: '10.1.2.3' })
    expect(
      await adminAddressOf('localhost', { interfaces, lookup: resolvingTo('::1', '127.0.0.1') }),
    ).toEqual({ address: '::1' })
    // A name that goes elsewhere, even beside one of ours, is called on ours only.
    expect(
      await adminAddressOf('node-red.example', {
        interfaces,
        lookup: resolvingTo('203.0.113.5', '10.1.2.3'),
      }),
    ).toEqual({ address: '10.1.2.3' })
    expect(
      await adminAddressOf('node-red.example', { interfaces, lookup: resolvingTo('203.0.113.5') }),
    ).toEqual({ refused: 'uiHost "node-red.example" resolves to no address of this machine' })
    const failing = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' })
    }
    expect(await adminAddressOf('nowhere.invalid', { interfaces, lookup: failing })).toEqual({
      refused: 'uiHost "nowhere.invalid" does not resolve (ENOTFOUND)',
    })
  })
})
