// Rollouts on two built flowadmin instances sharing one PostgreSQL database, over real sockets: a
// rollout made at A wakes an instance's poll held at B, whose fetch and report at B make the
// rollout succeed as A sees it; a secret variable set at A is delivered opened at B and shown to
// nobody; malformed and refused requests get their documented answers. The instances here are
// lean clients speaking the agent's protocol with the resource server's shared secret.
import * as path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { useTestDatabase } from '../../adapter-postgres/test/pg-server.js'
import { hashPassword } from '../src/adapters/argon2.js'
import { type BuiltServer, startBuiltServer, useServerFolder } from './cli-process.js'
import { CLIENT_ID, callFlowadmin, operatorToken, PASSWORD, SECRET } from './fleet-setup.js'
import { logInAs } from './password-grant.js'

const database = useTestDatabase()
const work = useServerFolder('fleet-rollouts-pg')
const basic = `Basic ${Buffer.from(`${CLIENT_ID}:${SECRET}`).toString('base64')}`
const servers: BuiltServer[] = []
const FLOWS = [
  { id: 't1', type: 'tab', label: 'Line' },
  { id: 'n1', type: 'inject', z: 't1', name: 'tick', wires: [] },
]
let tokenA: string
let tokenB: string

const a = () => servers[0] as BuiltServer
const b = () => servers[1] as BuiltServer

async function api(server: BuiltServer, token: string, method: string, route: string, body?: unknown) {
  const res = await callFlowadmin(server.url, token, method, route, body)
  const text = await res.text()
  return { status: res.status, body: text === '' ? null : (JSON.parse(text) as Record<string, unknown>) }
}

/** An instance's own call with the shared secret. */
async function asInstance(server: BuiltServer, method: string, route: string, body?: unknown, headers = {}) {
  const res = await fetch(`${server.url}${route}`, {
    method,
    headers: { authorization: basic, 'content-type': 'application/json', ...headers },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  })
  const text = await res.text()
  return {
    status: res.status,
    etag: res.headers.get('etag'),
    body: text === '' ? null : (JSON.parse(text) as Record<string, unknown>),
  }
}

beforeAll(async () => {
  const password = await hashPassword(PASSWORD)
  const settings = {
    storage: 'postgres',
    postgres: { url: database.current().url, pool: 4 },
    auditLog: 'off',
    fleet: {
      modules: true,
      hold: 10,
      groups: { line: ['press-*'], other: ['weld-*'] },
      flows: { key: 'the flow variables key of this test, 0123456789abcdef' },
    },
    adminAuth: {
      type: 'credentials',
      users: [
        { username: 'admin', password, permissions: '*' },
        { username: 'wanda', password, grants: [{ role: 'deployer', on: 'other' }] },
      ],
      resourceServers: [{ id: CLIENT_ID, secret: await hashPassword(SECRET), fleet: true }],
    },
  }
  for (const name of ['flowadmin-a', 'flowadmin-b']) {
    const dir = path.join(work.dir, name)
    servers.push(
      await startBuiltServer(path.join(dir, 'settings.json'), { settings: { ...settings, userDir: dir } }),
    )
  }
  tokenA = await operatorToken(a().url)
  tokenB = await operatorToken(b().url)
}, 120_000)

afterAll(async () => {
  for (const server of servers) await server.stop()
})

describe('rollouts on two flowadmin instances sharing PostgreSQL', () => {
  let snapshot: string
  let rollout: string

  it('wakes a poll held at B with a rollout made at A, and follows it to its end from either', async () => {
    const first = await asInstance(b(), 'GET', '/fleet/instances/press-1/desired')
    expect(first.status).toBe(200)
    expect(first.body).not.toHaveProperty('flows')
    const made = await api(a(), tokenA, 'POST', '/fleet/snapshots', { name: 'line', flows: FLOWS })
    expect(made.status).toBe(201)
    snapshot = made.body?.id as string

    const held = asInstance(b(), 'GET', '/fleet/instances/press-1/desired', undefined, {
      'if-none-match': first.etag as string,
      prefer: 'wait=10',
    })
    await new Promise((resolve) => setTimeout(resolve, 300))
    const started = await api(a(), tokenA, 'POST', '/fleet/groups/line/rollouts', { snapshot })
    expect(started.status).toBe(201)
    expect(started.body).toMatchObject({
      instances: ['press-1'],
      state: 'pending',
      kind: 'rollout',
      createdBy: 'admin',
    })
    rollout = started.body?.id as string
    const woke = await held
    expect(woke.status).toBe(200)
    expect(woke.body?.flows).toEqual({ rollout, snapshot, mode: 'report', variables: '0' })

    const target = await asInstance(b(), 'GET', '/fleet/instances/press-1/flows/target')
    expect(target.status).toBe(200)
    expect(target.body).toMatchObject({ rollout, snapshot, flows: FLOWS, modules: [], env: [] })
    const reported = await asInstance(b(), 'POST', '/fleet/instances/press-1/flows/report', {
      rollout,
      outcome: 'succeeded',
      rev: 'rev-1',
      missingCredentials: ['n1'],
    })
    expect(reported.status).toBe(204)
    const seen = await api(a(), tokenA, 'GET', `/fleet/rollouts/${rollout}`)
    expect(seen.body).toMatchObject({
      state: 'succeeded',
      waiting: [],
      outcomes: [{ instance: 'press-1', outcome: 'succeeded', rev: 'rev-1', missingCredentials: ['n1'] }],
    })
    const drift = await asInstance(b(), 'POST', '/fleet/instances/press-1/flows/report', {
      rev: 'rev-2',
      by: 'bob',
    })
    expect(drift.status).toBe(204)
    const group = await api(a(), tokenA, 'GET', '/fleet/groups/line/flows')
    expect(group.body).toMatchObject({
      mode: 'report',
      target: { id: rollout },
      previous: null,
      instances: [
        {
          instance: 'press-1',
          rollout,
          deployedRev: 'rev-1',
          rev: 'rev-2',
          drift: { rev: 'rev-2', by: 'bob' },
        },
      ],
    })
  })

  it('delivers a secret variable set at A opened at B, as a credential, and shows it to nobody', async () => {
    const set = await api(a(), tokenA, 'PUT', '/fleet/groups/line/variables/API_KEY', {
      value: 'k-123',
      secret: true,
    })
    expect(set.status).toBe(200)
    expect(set.body).toMatchObject({ name: 'API_KEY', value: null, secret: true, by: 'admin' })
    await api(a(), tokenA, 'PUT', '/fleet/instances/press-1/variables/SPEED', { value: '7' })
    const target = await asInstance(b(), 'GET', '/fleet/instances/press-1/flows/target')
    expect(target.body?.env).toEqual([
      { name: 'API_KEY', value: 'k-123', type: 'cred' },
      { name: 'SPEED', value: '7', type: 'str' },
    ])
    const listed = await api(b(), tokenB, 'GET', '/fleet/groups/line/variables')
    expect(JSON.stringify(listed.body)).not.toContain('k-123')
    const poll = await asInstance(b(), 'GET', '/fleet/instances/press-1/desired')
    expect((poll.body?.flows as { variables: string }).variables).toMatch(/^[0-9a-f]{16}$/)
  })

  it('answers malformed and refused requests as documented', async () => {
    const post = (body: unknown, token = tokenA, group = 'line') =>
      api(a(), token, 'POST', `/fleet/groups/${group}/rollouts`, body)
    expect(await post({ snapshot, strategy: { kind: 'staged', first: 0 } })).toMatchObject({
      status: 400,
      body: { code: 'invalid_request' },
    })
    expect(await post({ snapshot, strategy: { kind: 'sideways' } })).toMatchObject({ status: 400 })
    expect(await post({})).toMatchObject({ status: 400, body: { code: 'invalid_request' } })
    expect(await post({ snapshot: 'AAAAAAAAAAAAAAAA' })).toMatchObject({
      status: 404,
      body: { code: 'snapshot_not_found' },
    })
    expect(await post({ snapshot }, tokenA, 'nope')).toMatchObject({
      status: 404,
      body: { code: 'group_not_found' },
    })
    expect(await api(a(), tokenA, 'POST', '/fleet/groups/line/rollback')).toMatchObject({
      status: 409,
      body: { code: 'no_previous_target' },
    })
    expect(await api(a(), tokenA, 'GET', '/fleet/rollouts/nope')).toMatchObject({
      status: 404,
      body: { code: 'rollout_not_found' },
    })
    expect(await api(a(), tokenA, 'PUT', '/fleet/groups/line/variables/9X', { value: 'x' })).toMatchObject({
      status: 400,
    })
    expect(await api(a(), tokenA, 'DELETE', '/fleet/groups/line/variables/NOPE')).toMatchObject({
      status: 404,
      body: { code: 'variable_not_found' },
    })
    expect(await api(a(), tokenA, 'PUT', '/fleet/groups/line/flows/mode', { mode: 'loud' })).toMatchObject({
      status: 400,
    })
    const wanda = await logInAs(a().url, 'wanda', PASSWORD, '')
    const token = ((await wanda.json()) as { access_token: string }).access_token
    const refused = await post({ snapshot }, token)
    expect(refused.status).toBe(401)
    expect((await post({ snapshot }, token, 'other')).status).toBe(201)
    expect(
      await asInstance(b(), 'POST', '/fleet/instances/weld-1/flows/report', {
        rollout,
        outcome: 'succeeded',
        rev: 'r',
      }),
    ).toMatchObject({ status: 409, body: { code: 'not_targeted' } })
    expect(await asInstance(b(), 'POST', '/fleet/instances/press-1/flows/report', { rev: 5 })).toMatchObject({
      status: 400,
    })
    expect(await asInstance(b(), 'GET', '/fleet/instances/lone-1/flows/target')).toMatchObject({
      status: 404,
      body: { code: 'no_target' },
    })
  })
})
