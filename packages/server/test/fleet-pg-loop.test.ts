// Two built flowadmin instances on one PostgreSQL database with different `fleet` settings (prune,
// hold, wait), and a real, stock Node-RED 4.1 whose helper reaches them through a round-robin
// balancer, each poll to the other one, as a load balancer without stickiness does. Both answer
// one version for one desired state (the store's revision, the store's prune), so the agent's
// polls are held, not answered at once in turn: counted at the balancer, at most one round per
// hold and pause, and never a desired state it has already.
import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import * as path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { useTestDatabase } from '../../adapter-postgres/test/pg-server.js'
import { type BuiltServer, startBuiltServer, useServerFolder } from './cli-process.js'
import {
  CLIENT_ID,
  eventually,
  fleetAdminAuth,
  fleetInstances,
  helperSettings,
  operatorToken,
  SECRET,
} from './fleet-setup.js'
import { startNodeRed, stopNodeReds } from './node-red-process.js'

const database = useTestDatabase()
const work = useServerFolder('fleet-pg-loop')
/** flowadmin A and B: every `fleet` setting differs. */
const FLEETS = [
  { modules: true, hold: 5, wait: 0, prune: false },
  { modules: true, hold: 8, wait: 2, prune: true },
]
/** The shortest hold of the two: no held poll ends sooner. */
const MIN_HOLD_S = 5
/** How long the rounds are counted. */
const WINDOW_MS = 30_000

const servers: BuiltServer[] = []
let balancer: Server
/** Each poll of the desired state through the balancer: which flowadmin, when, the status. */
const polls: Array<{ to: number; at: number; status: number; etag: string | null }> = []

/** A balancer on 127.0.0.1 that sends each request to the next flowadmin in turn, as it comes. */
async function startBalancer(targets: string[]): Promise<string> {
  let next = 0
  balancer = createServer((req, res) => {
    const to = next
    next = (next + 1) % targets.length
    const target = new URL(targets[to] as string)
    const upstream = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        if (req.method === 'GET' && /\/desired$/.test(req.url ?? '')) {
          polls.push({
            to,
            at: Date.now(),
            status: answer.statusCode ?? 0,
            etag: answer.headers.etag ?? null,
          })
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      },
    )
    upstream.on('error', () => res.destroy())
    // The instance went away: so does the request it made.
    res.on('close', () => upstream.destroy())
    req.pipe(upstream)
  })
  await new Promise<void>((resolve) => balancer.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(balancer.address() as AddressInfo).port}`
}

beforeAll(async () => {
  for (const [index, fleet] of FLEETS.entries()) {
    const dir = path.join(work.dir, `flowadmin-${index}`)
    servers.push(
      await startBuiltServer(path.join(dir, 'settings.json'), {
        settings: {
          storage: 'postgres',
          postgres: { url: database.current().url, pool: 4 },
          userDir: dir,
          auditLog: 'off',
          fleet,
          adminAuth: await fleetAdminAuth(),
        },
      }),
    )
  }
  const url = await startBalancer(servers.map((server) => server.url))
  await startNodeRed(path.join(work.dir, 'edge'), helperSettings(url, 'edge'), { FLOWADMIN_SECRET: SECRET })
}, 180_000)

afterAll(async () => {
  await stopNodeReds()
  balancer?.closeAllConnections()
  await new Promise<void>((resolve) => (balancer ? balancer.close(() => resolve()) : resolve()))
})

describe('two flowadmin instances with different fleet settings on one PostgreSQL', () => {
  it('answer the same version; an agent polling both in turn is held, never in a loop', async () => {
    const [a, b] = servers as [BuiltServer, BuiltServer]
    const admin = await operatorToken(a.url)
    await eventually(
      () => fleetInstances(a.url, admin),
      (list) => list.some((i) => i.id === 'edge' && i.connected && i.applied !== null),
    )
    // The same version and prune at both, whichever started last.
    const basic = `Basic ${Buffer.from(`${CLIENT_ID}:${SECRET}`).toString('base64')}`
    const desired = await Promise.all(
      [a, b].map(async (server) => {
        const res = await fetch(`${server.url}/fleet/instances/edge/desired`, {
          headers: { authorization: basic },
        })
        const body = (await res.json()) as { version: string; prune: boolean; hold: number }
        return { etag: res.headers.get('etag'), version: body.version, prune: body.prune, hold: body.hold }
      }),
    )
    const [atA, atB] = desired as [(typeof desired)[number], (typeof desired)[number]]
    expect(atB.version).toBe(atA.version)
    expect(atB.etag).toBe(atA.etag)
    expect([atA.prune, atB.prune]).toEqual([true, true])
    // Each tells its own hold.
    expect([atA.hold, atB.hold]).toEqual([5, 8])

    const from = polls.length
    const started = Date.now()
    await new Promise((resolve) => setTimeout(resolve, WINDOW_MS))
    const rounds = polls.slice(from)
    // Polls went to both.
    expect(new Set(rounds.map((poll) => poll.to))).toEqual(new Set([0, 1]))
    // Every one was held and answered 304: the version never flips between the two.
    expect(rounds.map((poll) => poll.status)).toEqual(rounds.map(() => 304))
    // At most one round per hold: each held poll lasts the shorter hold at least.
    expect(rounds.length).toBeLessThanOrEqual(Math.ceil((Date.now() - started) / (MIN_HOLD_S * 1000)) + 1)
  }, 180_000)
})
