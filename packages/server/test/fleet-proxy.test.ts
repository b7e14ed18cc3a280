// A real, stock Node-RED 4.1 in fleet mode behind a gateway that ends a request idle for 6 s with
// its own 502 (as common gateways do at 20–30 s), while flowadmin may hold a poll 15 s: the agent
// sees the cut, says so once, and asks for holds short enough to pass; its polls are then held and
// answered 304, and the instance stays connected and reports.
import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import * as path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BuiltServer, startBuiltServer, useServerFolder } from './cli-process.js'
import {
  eventually,
  fleetAdminAuth,
  fleetInstances,
  helperSettings,
  operatorToken,
  SECRET,
} from './fleet-setup.js'
import { type NodeRedRun, startNodeRed, stopNodeReds } from './node-red-process.js'

/** The gateway's idle cut, and flowadmin's hold (longer). */
const CUT_MS = 6000
const HOLD = 15

const work = useServerFolder('fleet-proxy')
let flowadmin: BuiltServer
let gateway: Server
let nodeRed: NodeRedRun
/** Each poll of the desired state through the gateway: the wait it asked, and its answer's status. */
const polls: Array<{ prefer: string; status: number }> = []

/** A reverse proxy to flowadmin that answers 502 itself (HTML) to a request with no answer after CUT_MS. */
async function startGateway(target: string): Promise<string> {
  const to = new URL(target)
  gateway = createServer((req, res) => {
    const poll = req.method === 'GET' && /\/desired$/.test(req.url ?? '')
    const upstream = request(
      { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        clearTimeout(cut)
        if (poll) polls.push({ prefer: String(req.headers.prefer), status: answer.statusCode ?? 0 })
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      },
    )
    const cut = setTimeout(() => {
      upstream.destroy()
      if (poll) polls.push({ prefer: String(req.headers.prefer), status: 502 })
      res.writeHead(502, { 'content-type': 'text/html' })
      res.end('<html><body><h1>502 Bad Gateway</h1></body></html>')
    }, CUT_MS)
    upstream.on('error', () => {
      clearTimeout(cut)
      res.destroy()
    })
    res.on('close', () => {
      clearTimeout(cut)
      upstream.destroy()
    })
    req.pipe(upstream)
  })
  await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`
}

beforeAll(async () => {
  const dir = path.join(work.dir, 'flowadmin')
  flowadmin = await startBuiltServer(path.join(dir, 'settings.json'), {
    settings: {
      storage: 'sqlite',
      userDir: dir,
      auditLog: 'off',
      fleet: { modules: true, hold: HOLD },
      adminAuth: await fleetAdminAuth(),
    },
  })
  const url = await startGateway(flowadmin.url)
  nodeRed = await startNodeRed(path.join(work.dir, 'edge'), helperSettings(url, 'edge'), {
    FLOWADMIN_SECRET: SECRET,
  })
}, 120_000)

afterAll(async () => {
  await stopNodeReds()
  gateway?.closeAllConnections()
  await new Promise<void>((resolve) => (gateway ? gateway.close(() => resolve()) : resolve()))
})

describe('a Node-RED instance behind a gateway that cuts idle requests', () => {
  it('asks for shorter holds after the first cut, says so once, and then stays connected', async () => {
    const said = await eventually(
      async () => nodeRed.stderr,
      (text) => text.includes('polls now ask flowadmin to answer within'),
    )
    expect(said).toMatch(
      /fleet: a poll to flowadmin at http:\/\/127\.0\.0\.1:\d+ was cut after 6 s \(HTTP 502 from something other than flowadmin\), within the 15 s flowadmin may hold it: a proxy or gateway on the way ends idle requests; polls now ask flowadmin to answer within 5 s/,
    )
    const from = polls.length
    // Three more rounds: each asks for 5 s, is held, and is answered before the cut.
    const after = await eventually(
      async () => polls.slice(from),
      (rounds) => rounds.length >= 3,
    )
    expect(after.slice(0, 3)).toEqual([
      { prefer: 'wait=5', status: 304 },
      { prefer: 'wait=5', status: 304 },
      { prefer: 'wait=5', status: 304 },
    ])
    const admin = await operatorToken(flowadmin.url)
    const [edge] = await fleetInstances(flowadmin.url, admin)
    expect(edge).toMatchObject({ id: 'edge', connected: true })
    expect(edge?.lastReport).not.toBeNull()
    // Said once, however many polls since.
    expect(nodeRed.stderr.split('was cut after').length - 1).toBe(1)
  }, 120_000)
})
