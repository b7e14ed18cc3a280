#!/usr/bin/env node
// Soak: runs the built flowadmin server (SQLite in a temp folder) under N minutes of mixed load
// on 127.0.0.1 and prints, per minute, the requests served, p50/p99/max latency and the server's
// resident memory, so that a leak or a slowdown shows as a trend.
//
//   node scripts/soak.mjs [--minutes N] [--connections C]     (after `pnpm build`)
//
// Load: C clients, each on its own keep-alive connection, loop over GET /auth/login, an
// authenticated GET /settings and GET /nodes, and toggles of the demo's scoped node sets; one
// more client logs in twice a second and revokes the tokens it issued once more than 20 are alive.
import { spawn } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import * as http from 'node:http'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const BIN = path.join(ROOT, 'packages/server/bin/flowadmin.cjs')
const DEMO = path.join(ROOT, 'examples/demo')
const ADMIN = { username: 'admin', password: 'flowadmin-demo' }
const SETS = ['@flowadmin-examples/text-tools/upper', '@flowadmin-examples/text-tools/lower']
const LOGINS_PER_SECOND = 2
const LIVE_TOKENS = 20

const { values } = parseArgs({
  options: { minutes: { type: 'string', default: '5' }, connections: { type: 'string', default: '8' } },
})
const minutes = Number(values.minutes)
const connections = Number(values.connections)
if (!(minutes > 0) || !Number.isInteger(connections) || connections < 1) {
  console.error('usage: node scripts/soak.mjs [--minutes N (> 0)] [--connections C (>= 1)]')
  process.exit(2)
}
if (!existsSync(path.join(ROOT, 'packages/server/dist/cli/main.js'))) {
  console.error('soak: the server is not built; run `pnpm build` first')
  process.exit(2)
}

// A userDir with the demo's modules, flows and users (argon2 hashes), storage SQLite.
const userDir = mkdtempSync(path.join(tmpdir(), 'flowadmin-soak-'))
cpSync(path.join(DEMO, 'node_modules'), path.join(userDir, 'node_modules'), { recursive: true })
cpSync(path.join(DEMO, 'flows.json'), path.join(userDir, 'flows.json'))
const demo = JSON.parse(readFileSync(path.join(DEMO, 'settings.json'), 'utf8'))
writeFileSync(
  path.join(userDir, 'settings.json'),
  JSON.stringify({
    ...demo,
    uiHost: '127.0.0.1',
    uiPort: 0,
    storage: 'sqlite',
    auditLog: { file: 'audit.log' },
  }),
)

const server = spawn(process.execPath, [BIN, 'start', '--settings', path.join(userDir, 'settings.json')], {
  stdio: ['ignore', 'pipe', 'pipe'],
  // The demo's second-factor key is published: flowadmin takes it only when told so.
  env: { ...process.env, FLOWADMIN_ALLOW_EXAMPLE_MFA_KEY: '1' },
})
let serverErrors = ''
server.stderr.setEncoding('utf8').on('data', (chunk) => {
  serverErrors += chunk
})

let finished = false
/** Stops the load, the server (SIGTERM, then SIGKILL) and removes the temp folder; idempotent. */
async function shutdown(code) {
  if (finished) return
  finished = true
  stopLoad()
  if (server.exitCode === null && server.signalCode === null) {
    const exited = new Promise((resolve) => server.once('exit', resolve))
    server.kill('SIGTERM')
    const forced = setTimeout(() => server.kill('SIGKILL'), 7_000)
    await exited
    clearTimeout(forced)
  }
  rmSync(userDir, { recursive: true, force: true })
  process.exit(code)
}
process.on('SIGINT', () => {
  console.log('soak: interrupted, stopping')
  shutdown(130)
})
process.on('SIGTERM', () => shutdown(143))
server.once('exit', (code, signal) => {
  if (finished) return
  console.error(`soak: the server exited (${code ?? signal}) during the run\n${serverErrors}`)
  shutdown(1)
})

const url = await new Promise((resolve) => {
  let out = ''
  server.stdout.setEncoding('utf8').on('data', (chunk) => {
    out += chunk
    const found = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)
    if (found) resolve(found[1])
  })
})
const { port } = new URL(url)

/** One client on one keep-alive connection. Resolves with the status, or 0 on a socket error. */
function createClient() {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  return {
    agent,
    send(method, target, headers = {}, body = '') {
      return new Promise((resolve) => {
        const request = http.request(
          {
            host: '127.0.0.1',
            port,
            path: target,
            method,
            agent,
            headers: { ...headers, 'content-length': Buffer.byteLength(body) },
          },
          (response) => {
            let text = ''
            response.setEncoding('utf8')
            response.on('data', (chunk) => {
              text += chunk
            })
            response.on('end', () => resolve({ status: response.statusCode, body: text }))
            response.on('error', () => resolve({ status: 0, body: '' }))
          },
        )
        request.on('error', () => resolve({ status: 0, body: '' }))
        request.end(body)
      })
    },
  }
}

const form = { 'content-type': 'application/x-www-form-urlencoded' }
const loginBody = new URLSearchParams({
  client_id: 'service-admin',
  grant_type: 'password',
  scope: '*',
  ...ADMIN,
}).toString()

// Latencies of the current minute, in milliseconds, and its failures.
let latencies = []
let failures = 0
async function timed(client, expected, ...request) {
  const started = performance.now()
  const answer = await client.send(...request)
  latencies.push(performance.now() - started)
  if (answer.status !== expected && !finished) failures++
  return answer
}

const setup = createClient()
const first = await setup.send('POST', '/auth/token', form, loginBody)
if (first.status !== 200) {
  console.error(`soak: the first login answered ${first.status}`)
  await shutdown(1)
}
const bearer = { authorization: `Bearer ${JSON.parse(first.body).access_token}` }
setup.agent.destroy()

let running = true
const agents = []
function stopLoad() {
  running = false
  for (const agent of agents) agent.destroy()
}

async function mixedLoop(seed) {
  const client = createClient()
  agents.push(client.agent)
  for (let i = seed; running; i++) {
    const pick = i % 10
    if (pick < 3) await timed(client, 200, 'GET', '/auth/login')
    else if (pick < 6) await timed(client, 200, 'GET', '/settings', bearer)
    else if (pick < 9) await timed(client, 200, 'GET', '/nodes', bearer)
    else {
      const set = SETS[i % SETS.length]
      const enabled = JSON.stringify({ enabled: Math.floor(i / 10) % 2 === 0 })
      await timed(
        client,
        200,
        'PUT',
        `/nodes/${set}`,
        { 'content-type': 'application/json', ...bearer },
        enabled,
      )
    }
  }
}

async function loginLoop() {
  const client = createClient()
  agents.push(client.agent)
  const live = []
  while (running) {
    const next = performance.now() + 1_000 / LOGINS_PER_SECOND
    const answer = await timed(client, 200, 'POST', '/auth/token', form, loginBody)
    if (answer.status === 200) live.push(JSON.parse(answer.body).access_token)
    if (live.length > LIVE_TOKENS) {
      const token = live.shift()
      const body = new URLSearchParams({ token }).toString()
      await timed(client, 200, 'POST', '/auth/revoke', { ...form, ...bearer }, body)
    }
    const wait = next - performance.now()
    if (wait > 0 && running) await new Promise((resolve) => setTimeout(resolve, wait))
  }
}

/** Resident memory of the server process in MiB, from /proc (Linux), or NaN. */
function rssMiB() {
  try {
    const kib = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))?.[1]
    return Number(kib) / 1024
  } catch {
    return Number.NaN
  }
}

function percentile(sorted, p) {
  if (sorted.length === 0) return Number.NaN
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

const pad = (value, width, digits = 1) =>
  (typeof value === 'number' ? value.toFixed(digits) : String(value)).padStart(width)

console.log(
  `soak: ${url}, ${minutes} min, ${connections} connections + 1 login client; storage ${path.join(userDir, 'flowadmin.db')}`,
)
console.log(`soak: server RSS at start ${rssMiB().toFixed(1)} MiB`)
console.log(
  `${'minute'.padStart(6)} ${'requests'.padStart(9)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'max ms'.padStart(8)} ${'failed'.padStart(7)} ${'RSS MiB'.padStart(8)}`,
)

const loops = [...Array.from({ length: connections }, (_, i) => mixedLoop(i * 3)), loginLoop()]
const rows = []
const totalMs = minutes * 60_000
const started = performance.now()
let minute = 0
while (performance.now() - started < totalMs - 1) {
  const left = totalMs - (performance.now() - started)
  const periodMs = Math.min(60_000, left)
  const periodStart = performance.now()
  await new Promise((resolve) => setTimeout(resolve, periodMs))
  minute++
  const sorted = latencies.sort((a, b) => a - b)
  const seconds = (performance.now() - periodStart) / 1000
  const row = {
    requests: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    rss: rssMiB(),
  }
  rows.push(row)
  console.log(
    `${pad(minute, 6, 0)} ${pad(row.requests, 9, 0)} ${pad(row.requests / seconds, 8)} ${pad(row.p50, 8, 2)} ${pad(row.p99, 8, 2)} ${pad(sorted.at(-1) ?? Number.NaN, 8, 1)} ${pad(failures, 7, 0)} ${pad(row.rss, 8)}`,
  )
  latencies = []
  failures = 0
}
running = false
await Promise.all(loops)

const [head, tail] = [rows[0], rows.at(-1)]
console.log(
  `soak: RSS ${head.rss.toFixed(1)} -> ${tail.rss.toFixed(1)} MiB, p99 ${head.p99.toFixed(2)} -> ${tail.p99.toFixed(2)} ms (first -> last minute)`,
)
if (serverErrors !== '') console.log(`soak: the server wrote to stderr:\n${serverErrors}`)
await shutdown(0)
