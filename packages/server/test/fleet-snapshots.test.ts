// Snapshots of flows end to end: the built flowadmin in fleet mode on its SQLite file. A CI job's
// file is uploaded over a real socket, refused past `fleet.snapshots.maxBytes`, and after a restart
// still listed, downloaded byte for byte and compared; its making is in the trail.
import { beforeAll, describe, expect, it } from 'vitest'
import { hashPassword } from '../src/adapters/argon2.js'
import { useUserDir } from './cli-process.js'
import { within } from './fleet-setup.js'
import { logInAs } from './password-grant.js'

const dir = useUserDir('fleet-snapshots')
const PASSWORD = 'snapshots pw'
let users: object[]

beforeAll(async () => {
  const password = await hashPassword(PASSWORD)
  users = [
    { username: 'admin', password, permissions: '*' },
    { username: 'ci', password, permissions: ['flows.write', 'flows.read'] },
  ]
})

const settings = () => ({
  fleet: { modules: true, snapshots: { maxBytes: 4096 } },
  adminAuth: {
    type: 'credentials',
    users,
    resourceServers: [{ id: 'fleet', secret: `sha256:${'0'.repeat(64)}`, fleet: true }],
  },
})

/** The file a CI job keeps in git: indented as an editor would save it. */
const FILE = `${JSON.stringify(
  {
    name: 'line-1',
    flows: [
      { id: 't1', type: 'tab', label: 'Line 1' },
      { id: 'n1', type: 'inject', z: 't1', name: 'tick', repeat: '5', wires: [['n2']] },
      { id: 'n2', type: 'debug', z: 't1', wires: [] },
    ],
  },
  null,
  4,
)}\n`

async function tokenOf(url: string, username: string): Promise<string> {
  const res = await logInAs(url, username, PASSWORD, '')
  expect(res.status).toBe(200)
  return ((await res.json()) as { access_token: string }).access_token
}

const call = (url: string, token: string, route: string, init: RequestInit = {}) =>
  fetch(`${url}${route}`, { ...init, headers: { authorization: `Bearer ${token}`, ...init.headers } })

const upload = (url: string, token: string, body: string) =>
  call(url, token, '/fleet/snapshots', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  })

describe('snapshots of flows on the built server', () => {
  it('keeps an uploaded snapshot across a restart, refuses one past the bound, and compares two', async () => {
    let server = await dir.start({ settings: settings() })
    const ci = await tokenOf(server.url, 'ci')
    const made = await upload(server.url, ci, FILE)
    expect(made.status).toBe(201)
    const first = (await made.json()) as { id: string; version: number; createdBy: string }
    expect(first).toMatchObject({ version: 1, createdBy: 'ci', nodes: 3, modules: [] })

    const big = JSON.stringify({
      name: 'big',
      flows: [{ id: 'c1', type: 'comment', info: 'x'.repeat(5000) }],
    })
    const refused = await upload(server.url, ci, big)
    expect(refused.status).toBe(413)
    expect(await refused.json()).toMatchObject({ code: 'payload_too_large' })
    const bad = await upload(
      server.url,
      ci,
      JSON.stringify({ name: 'bad', flows: [{ id: 'n1', type: 'inject', z: 't9' }] }),
    )
    expect(bad.status).toBe(400)
    expect(await bad.json()).toEqual({
      code: 'invalid_request',
      message: 'flows[0] (id "n1"): z names "t9", no tab or subflow of these flows',
    })

    // A module's version is what an install takes (a semver version or range), nothing else.
    for (const version of ['file:../x', 'github:evil/x', 'https://example.com/x.tgz', 'latest']) {
      const odd = await upload(
        server.url,
        ci,
        JSON.stringify({ name: 'odd', modules: [{ name: 'node-red-x', version }], flows: [] }),
      )
      expect(odd.status).toBe(400)
      expect(await odd.json()).toEqual({
        code: 'invalid_request',
        message: 'modules[0]: Invalid version: use a semver version or range such as 1.2.3 or ^1.2',
      })
    }
    const ranged = await upload(
      server.url,
      ci,
      JSON.stringify({ name: 'ranged', modules: [{ name: 'node-red-x', version: '^1.2' }], flows: [] }),
    )
    expect(ranged.status).toBe(201)

    const before = await call(server.url, ci, `/fleet/snapshots/${first.id}`)
    const file = await before.text()
    expect(await server.stop()).toBe(0)
    // A new process over the same userDir (its SQLite file) sees the same snapshot.
    server = await dir.start()
    const admin = await tokenOf(server.url, 'admin')
    const listed = await call(server.url, admin, '/fleet/snapshots')
    expect(
      ((await listed.json()) as Array<{ id: string; name: string }>).map((each) => [each.id, each.name]),
    ).toEqual([
      [first.id, 'line-1'],
      [expect.any(String), 'ranged'],
    ])
    const after = await call(server.url, admin, `/fleet/snapshots/${first.id}`)
    expect(after.headers.get('content-disposition')).toBe('attachment; filename="line-1-v1.json"')
    expect(await after.text()).toBe(file)

    // The download, edited and uploaded again: version 2, and the diff names the node changed.
    const edited = file.replace('"name":"tick"', '"name":"tock"')
    const second = (await (await upload(server.url, admin, edited)).json()) as { id: string; version: number }
    expect(second.version).toBe(2)
    const diff = await call(server.url, admin, `/fleet/snapshots/${first.id}/diff?against=${second.id}`)
    expect(await diff.json()).toEqual({
      from: first.id,
      to: second.id,
      added: [],
      removed: [],
      changed: [{ id: 'n1', type: 'inject', z: 't1', name: 'tock', keys: ['name'] }],
    })

    // The trail is written after the answer: read until both are there.
    const trailed = async () =>
      (
        (await (await call(server.url, admin, '/audit?event=fleet.snapshot_created')).json()) as {
          events: Array<{ actor: string; details: Record<string, unknown> }>
        }
      ).events
    const events = await within(10_000, trailed, (found) => found.length >= 3)
    expect(events.map((event) => [event.actor, event.details.name, event.details.version]).sort()).toEqual([
      ['admin', 'line-1', 2],
      ['ci', 'line-1', 1],
      ['ci', 'ranged', 1],
    ])
  })
})
