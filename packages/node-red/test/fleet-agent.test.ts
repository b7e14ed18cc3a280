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
    body: { nodeRedVersion: '4.1.2', modules: [], typesInUse: ['tab'], applied: 'v1', failures: [] },
  })
  // It called its own Node-RED with one token, which this instance's adminAuth accepts as the
  // agent's, with only what the agent needs; anything else is not the agent's.
  expect(tokens.size).toBe(1)
  const token = ([...tokens][0] ?? '').replace(/^Bearer /, '')
  await expect(settings.adminAuth.tokens(token)).resolves.toEqual({
    username: '@flowadmin/fleet',
    permissions: ['nodes.read', 'nodes.write', 'flows.read', 'settings.read'],
  })
  const { stateOf } = require('../lib/state.js') as {
    stateOf(options: object): { fleet: { isAgentToken(token: string): boolean; stop(): void } }
  }
  const agent = stateOf(settings.options).fleet
  expect(agent.isAgentToken(`${token}x`)).toBe(false)
  expect(agent.isAgentToken(token.slice(1))).toBe(false)
  agent.stop()
}, 90_000)
