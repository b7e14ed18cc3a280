// `pnpm bench:runtimes [--duration S] [--warmup S] [--connections N]`: the same admin under Node, Bun, Deno and
// workerd, each loaded in turn with autocannon on 127.0.0.1: GET /auth/login (no auth) and an
// authenticated GET /settings. Prints requests per second and latencies. A short run is noisy on
// a shared machine: compare runtimes within one run, not across runs.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { buildWorker, login, RUNTIMES, startExample } from './runtimes.mjs'

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '1' },
    connections: { type: 'string', default: '10' },
  },
})
const warmup = Number(values.warmup)
const duration = Number(values.duration)
const connections = Number(values.connections)
if (!(duration > 0) || !(connections > 0))
  throw new Error('--duration and --connections must be positive numbers')

const password = 'bench-password'
const hash = execFileSync(
  process.execPath,
  [join(import.meta.dirname, '../../packages/server/bin/flowadmin.cjs'), 'hash-pw'],
  {
    input: `${password}\n`,
    encoding: 'utf8',
  },
).trim()
const adminAuth = JSON.stringify({ users: [{ username: 'admin', password: hash, permissions: '*' }] })
const folder = mkdtempSync(join(tmpdir(), 'flowadmin-bench-runtimes-'))

/** Loads `url` for `warmup` seconds unmeasured, then for `duration` seconds. */
const load = async (url, headers = {}) => {
  if (warmup > 0) await autocannon({ url, headers, connections, duration: warmup })
  return autocannon({ url, headers, connections, duration }).then((result) => ({
    rate: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
  }))
}

await buildWorker()
const rows = []
try {
  for (const runtime of RUNTIMES) {
    const server = await startExample(runtime, {
      FLOWADMIN_ADMIN_AUTH: adminAuth,
      FLOWADMIN_DB: join(folder, `${runtime.name}.db`),
    })
    try {
      const response = await login(server.url, { username: 'admin', password })
      const { access_token: token } = await response.json()
      const scheme = await load(`${server.url}/auth/login`)
      const settings = await load(`${server.url}/settings`, { authorization: `Bearer ${token}` })
      rows.push({ runtime: runtime.name, scheme, settings })
      console.error(`${runtime.name}: done`)
    } finally {
      await server.stop()
    }
  }
} finally {
  rmSync(folder, { recursive: true, force: true })
}

const cell = ({ rate, p50, p99, errors }) =>
  `${rate} req/s, p50 ${p50} ms, p99 ${p99} ms${errors ? `, ${errors} errors` : ''}`
console.log(`\n${duration} s each after ${warmup} s of warm-up, ${connections} connections, 127.0.0.1\n`)
console.log('| runtime | GET /auth/login | authenticated GET /settings |')
console.log('| ------- | --------------- | --------------------------- |')
for (const { runtime, scheme, settings } of rows)
  console.log(`| ${runtime} | ${cell(scheme)} | ${cell(settings)} |`)
