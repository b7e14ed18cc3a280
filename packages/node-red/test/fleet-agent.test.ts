// The fleet agent inside a settings module as Node-RED loads it: a stub flowadmin that refuses the
// first polls, then hands out a desired state, and a stub of the instance's own admin API.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, expect, it } from 'vitest'

const require = createRequire(import.meta.url)
const HELPER = fileURLToPath(new URL('../index.js', import.meta.url))
const servers: Server[] = []

async function serve(handle: (req: IncomingMessage, body: string) => { status: number; body?: unknown }) {
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (chunk) => {
      body += chunk
    })
    req.on('end', () => {
      const answer = handle(req, body)
      res.writeHead(answer.status, { 'content-type': 'application/json' })
      res.end(answer.body === undefined ? '' : JSON.stringify(answer.body))
    })
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as AddressInfo).port
}

afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

it('logs a refused poll once however often it is refused, applies through its own token, and reports', async () => {
  const desired = { version: 'v1', prune: false, modules: [], installs: [], removals: [] }
  let polls = 0
  const reports: Array<{ authorization: string | undefined; body: unknown }> = []
  const flowadmin = await serve((req, body) => {
    if (req.url === '/fleet/instances/agent-1/desired') {
      polls++
      if (polls <= 3) return { status: 401, body: { error: 'invalid_client', error_description: 'no' } }
      return req.headers['if-none-match'] === '"v1"' ? { status: 304 } : { status: 200, body: desired }
    }
    if (req.url === '/fleet/instances/agent-1/report' && req.method === 'POST') {
      reports.push({ authorization: req.headers.authorization, body: JSON.parse(body) })
      return { status: 204 }
    }
    return { status: 404 }
  })
  const tokens = new Set<string | undefined>()
  const nodeRed = await serve((req) => {
    tokens.add(req.headers.authorization)
    if (req.url === '/nodes') return { status: 200, body: [] }
    if (req.url === '/flows') return { status: 200, body: [{ id: 't', type: 'tab' }] }
    if (req.url === '/settings') return { status: 200, body: { version: '4.1.2' } }
    return { status: 404 }
  })

  // The settings file as Node-RED's launcher leaves it once it listens.
  const dir = mkdtempSync(path.join(tmpdir(), 'flowadmin-agent-'))
  const settingsFile = path.join(dir, 'settings.js')
  writeFileSync(
    settingsFile,
    `const flowadmin = require(${JSON.stringify(HELPER)})
const options = { url: 'http://127.0.0.1:${flowadmin}', clientId: 'fleet', clientSecret: 's3cret', fleet: true,
  instanceId: 'agent-1', log: (line) => module.exports.lines.push(line) }
module.exports = { lines: [], options, adminAuth: flowadmin.adminAuth(options), settingsFile: __filename,
  uiHost: '127.0.0.1', serverPort: ${nodeRed}, httpAdminRoot: '/', userDir: ${JSON.stringify(dir)} }
`,
  )
  const settings = require(settingsFile) as {
    lines: string[]
    options: object
    adminAuth: { tokens(token: string): Promise<unknown> }
  }
  const deadline = Date.now() + 60_000
  while (reports.length === 0 && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 50))

  expect(settings.lines.filter((line) => line.includes('HTTP 401'))).toEqual([
    'fleet: flowadmin answered HTTP 401 to the poll',
  ])
  expect(reports[0]).toEqual({
    authorization: `Basic ${Buffer.from('fleet:s3cret').toString('base64')}`,
    body: {
      sequence: expect.any(Number),
      nodeRedVersion: '4.1.2',
      modules: [],
      typesInUse: ['tab'],
      applied: 'v1',
      applying: false,
      failures: [],
      changes: [],
      reverted: [],
    },
  })
  // It called its own Node-RED with one token, which this instance's adminAuth accepts as the
  // agent's, with only what the agent needs; anything else is not the agent's.
  expect(tokens.size).toBe(1)
  const token = ([...tokens][0] ?? '').replace(/^Bearer /, '')
  await expect(settings.adminAuth.tokens(token)).resolves.toEqual({
    username: '@flowadmin/fleet',
    permissions: ['nodes.read', 'nodes.write', 'flows.read', 'flows.write', 'settings.read'],
  })
  const { stateOf } = require('../lib/state.js') as {
    stateOf(options: object): { fleet: { isAgentToken(token: string): boolean; stop(): void } }
  }
  const agent = stateOf(settings.options).fleet
  expect(agent.isAgentToken(`${token}x`)).toBe(false)
  expect(agent.isAgentToken(token.slice(1))).toBe(false)
  agent.stop()
}, 90_000)

/** A settings module as Node-RED's launcher leaves it once it listens, with the agent's options. */
function settingsModule(
  flowadmin: number,
  instanceId: string,
  nodeRed: { uiHost: string; serverPort: number },
) {
  const dir = mkdtempSync(path.join(tmpdir(), 'flowadmin-agent-'))
  const settingsFile = path.join(dir, 'settings.js')
  writeFileSync(
    settingsFile,
    `const flowadmin = require(${JSON.stringify(HELPER)})
const options = { url: 'http://127.0.0.1:${flowadmin}', clientId: 'fleet', clientSecret: 's3cret', fleet: true,
  instanceId: ${JSON.stringify(instanceId)}, log: (line) => module.exports.lines.push(line) }
module.exports = { lines: [], options, adminAuth: flowadmin.adminAuth(options), settingsFile: __filename,
  uiHost: ${JSON.stringify(nodeRed.uiHost)}, serverPort: ${nodeRed.serverPort}, httpAdminRoot: '/', userDir: ${JSON.stringify(dir)} }
`,
  )
  return require(settingsFile) as { lines: string[]; options: object }
}

type Agent = { stop(): Promise<void> | undefined }
const agentOf = (options: object) =>
  (require('../lib/state.js') as { stateOf(options: object): { fleet: Agent } }).stateOf(options).fleet

async function until(done: () => boolean) {
  const deadline = Date.now() + 30_000
  while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
}

it('an answer without a desired state is logged once and changes nothing; the agent keeps polling and applies the next', async () => {
  let polls = 0
  const reports: unknown[] = []
  const flowadmin = await serve((req, body) => {
    if (req.url === '/fleet/instances/agent-2/desired') {
      polls++
      // No installs (twice): not a desired state.
      if (polls <= 2) return { status: 200, body: { version: 'v0', prune: true, modules: [], removals: [] } }
      return { status: 200, body: { version: 'v1', prune: false, modules: [], installs: [], removals: [] } }
    }
    if (req.url === '/fleet/instances/agent-2/report') {
      reports.push(JSON.parse(body))
      return { status: 204 }
    }
    return { status: 404 }
  })
  const deletes: string[] = []
  const nodeRed = await serve((req) => {
    if (req.method === 'DELETE') deletes.push(req.url ?? '')
    if (req.url === '/nodes') {
      return {
        status: 200,
        body: [{ id: 'hand/h', name: 'h', types: ['h'], module: 'hand', version: '1.0.0' }],
      }
    }
    if (req.url === '/flows') return { status: 200, body: [] }
    if (req.url === '/settings') return { status: 200, body: { version: '4.1.2' } }
    return { status: 404 }
  })
  const settings = settingsModule(flowadmin, 'agent-2', { uiHost: '127.0.0.1', serverPort: nodeRed })
  await until(() => reports.length > 0)
  await agentOf(settings.options).stop()

  expect(reports[0]).toMatchObject({ applied: 'v1', failures: [] })
  expect(deletes).toEqual([])
  expect(settings.lines.filter((line) => line.includes('no desired state'))).toEqual([
    'fleet: flowadmin answered the poll with no desired state (version, modules, installs and removals as lists): nothing applied; tried again',
  ])
}, 60_000)

it('never calls a uiHost that is not an address of this machine: fleet mode is off, said once, Node-RED runs on', async () => {
  let polls = 0
  const flowadmin = await serve(() => {
    polls++
    return { status: 404 }
  })
  // TEST-NET-1: no machine's own address.
  const settings = settingsModule(flowadmin, 'agent-3', { uiHost: '192.0.2.1', serverPort: 1880 })
  await until(() => settings.lines.some((line) => line.includes('fleet mode is off')))
  await agentOf(settings.options).stop()

  expect(settings.lines).toEqual([
    'fleet: uiHost 192.0.2.1 is not an address of this machine: the agent calls its own Node-RED on this machine only; fleet mode is off',
  ])
  expect(polls).toBe(0)
}, 60_000)

it('stopped before Node-RED’s settings are found (embedded Node-RED): no error, no rejected promise', async () => {
  const rejections: unknown[] = []
  const onRejection = (reason: unknown) => rejections.push(reason)
  process.on('unhandledRejection', onRejection)
  try {
    const lines: string[] = []
    const { adminAuth } = require('../index.js') as { adminAuth(options: object): unknown }
    const options = {
      url: 'http://127.0.0.1:9',
      clientId: 'fleet',
      clientSecret: 's3cret',
      fleet: true,
      instanceId: 'embedded',
      log: (line: string) => lines.push(line),
    }
    adminAuth(options)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(() => agentOf(options).stop()).not.toThrow()
    await agentOf(options).stop()
    // Long enough for a look at the settings to have run, had it gone on.
    await new Promise((resolve) => setTimeout(resolve, 600))
    expect(lines).toEqual([])
    expect(rejections).toEqual([])
  } finally {
    process.off('unhandledRejection', onRejection)
  }
}, 30_000)

it('asked for its flows in a poll, sends what its Node-RED runs under that name; a failure is a line of the log', async () => {
  const flows = [
    { id: 't1', type: 'tab', label: 'Line 1' },
    { id: 'n1', type: 'inject', z: 't1', wires: [] },
  ]
  const sent: Array<{ authorization: string | undefined; body: unknown }> = []
  let answer = 201
  let asking = true
  let polls = 0
  const flowadmin = await serve((req, body) => {
    if (req.url === '/fleet/instances/agent-4/desired') {
      polls += 1
      return {
        status: 200,
        body: {
          version: 'v1',
          prune: false,
          modules: [],
          installs: [],
          removals: [],
          ...(asking && { snapshot: { name: 'line-1' } }),
        },
      }
    }
    if (req.url === '/fleet/instances/agent-4/flows' && req.method === 'POST') {
      sent.push({ authorization: req.headers.authorization, body: JSON.parse(body) })
      return answer === 201
        ? { status: 201, body: { name: 'line-1', version: sent.length } }
        : { status: answer, body: { code: 'payload_too_large', message: 'too large\nsecond line' } }
    }
    if (req.url === '/fleet/instances/agent-4/report') return { status: 204 }
    return { status: 404 }
  })
  let readable = true
  const nodeRed = await serve((req) => {
    if (req.url === '/nodes') return { status: 200, body: [] }
    if (req.url === '/flows') return readable ? { status: 200, body: flows } : { status: 500, body: {} }
    if (req.url === '/settings') return { status: 200, body: { version: '4.1.2' } }
    return { status: 404 }
  })
  const settings = settingsModule(flowadmin, 'agent-4', { uiHost: '127.0.0.1', serverPort: nodeRed })
  await until(() => sent.length > 0)
  expect(sent[0]).toEqual({
    authorization: `Basic ${Buffer.from('fleet:s3cret').toString('base64')}`,
    body: { name: 'line-1', flows },
  })
  await until(() => settings.lines.some((line) => line.includes('kept at flowadmin')))
  // Refused, then not readable: each said in the log; the agent goes on.
  answer = 413
  const before = sent.length
  await until(() => sent.length > before)
  await until(() => settings.lines.some((line) => line.includes('refused')))
  // Refused: not sent again while the polls still carry that name.
  const refusedAt = sent.length
  const pollsThen = polls
  await until(() => polls >= pollsThen + 3)
  expect(sent.length).toBe(refusedAt)
  // A poll that asks for nothing, then one that asks again: sent again.
  asking = false
  const quiet = polls
  await until(() => polls > quiet + 1)
  readable = false
  asking = true
  await until(() => settings.lines.some((line) => line.includes('cannot be read')))
  await agentOf(settings.options).stop()
  expect(new Set(settings.lines.filter((line) => line.includes('line-1')))).toEqual(
    new Set([
      'fleet: the flows this instance runs are kept at flowadmin as a snapshot of line-1',
      'fleet: flowadmin refused the flows asked for as line-1 (HTTP 413: too large); not sent again',
      'fleet: the flows asked for as line-1 cannot be read from this Node-RED; tried again at the next poll',
    ]),
  )
}, 60_000)
