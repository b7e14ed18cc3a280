// A real Prometheus (Debian's `prometheus` package) scrapes a running flowadmin with a bearer
// token, and its HTTP API then answers the login counters.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { hashPassword, LOGIN_OUTCOMES, type RunningServer, startServer } from '../src/index.js'
import { captureLog } from './log-capture.js'

let dir: string
let server: RunningServer | undefined
let prometheus: ChildProcess | undefined

/**
 * Fails, saying what to install, where Prometheus is missing: the test never installs it (CI's
 * .ci/run does) and never skips, so a run without it cannot pass unnoticed.
 */
function requirePrometheus(): void {
  try {
    execFileSync('prometheus', ['--version'], { stdio: 'ignore' })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error("prometheus is not installed: apt-get install prometheus (CI's .ci/run installs it)")
    }
    throw new Error(`prometheus --version failed: ${(error as Error).message}`)
  }
}

/** A port free on 127.0.0.1 now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'flowadmin-prometheus-'))
})
afterAll(async () => {
  if (prometheus && prometheus.exitCode === null) {
    const exited = new Promise((resolve) => prometheus?.once('close', resolve))
    prometheus.kill('SIGTERM')
    await exited
  }
  await server?.close()
  await rm(dir, { recursive: true, force: true })
})

function login(username: string, password: string): Promise<Response> {
  return fetch(`${server?.url}/auth/token`, {
    method: 'POST',
    body: new URLSearchParams({
      client_id: 'service-admin',
      grant_type: 'password',
      scope: 'read',
      username,
      password,
    }),
  })
}

type Vector = Array<{ metric: Record<string, string>; value: [number, string] }>

async function query(port: number, expression: string): Promise<Vector> {
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(expression)}`)
  const body = (await res.json()) as { status: string; data: { result: Vector } }
  expect(body.status).toBe('success')
  return body.data.result
}

it('Prometheus scrapes /metrics with a token and answers the login counters', {
  timeout: 90_000,
}, async () => {
  requirePrometheus()
  server = await startServer({
    port: 0,
    userDir: dir,
    stdout: () => {},
    logger: captureLog().logger,
    settings: {
      storage: 'memory',
      adminAuth: {
        type: 'credentials',
        users: [{ username: 'monitor', password: await hashPassword('monitor-pw'), permissions: 'read' }],
      },
    },
  })
  const scrape = await login('monitor', 'monitor-pw')
  const { access_token: token } = (await scrape.json()) as { access_token: string }
  for (let i = 0; i < 2; i++) expect((await login('monitor', 'monitor-pw')).status).toBe(200)
  for (let i = 0; i < 3; i++) expect((await login('monitor', 'wrong')).status).toBe(401)

  const port = await freePort()
  const config = path.join(dir, 'prometheus.yml')
  await writeFile(
    config,
    [
      'global: { scrape_interval: 1s, evaluation_interval: 1s }',
      'scrape_configs:',
      '  - job_name: flowadmin',
      '    scrape_interval: 1s',
      `    authorization: { type: Bearer, credentials: "${token}" }`,
      `    static_configs: [{ targets: ["127.0.0.1:${server.port}"] }]`,
      '',
    ].join('\n'),
  )
  prometheus = spawn(
    'prometheus',
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  )
  let stderr = ''
  prometheus.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  const ended = new Promise<never>((_, reject) => {
    prometheus?.once('close', (code, signal) =>
      reject(new Error(`prometheus ended (${code ?? signal}) before scraping flowadmin:\n${stderr}`)),
    )
  })

  // Prometheus starts, then scrapes once a second: ask its API until the first scrape shows all
  // outcomes (the logins all happened before it started), or fail at the deadline.
  let logins: Vector = []
  await Promise.race([
    ended,
    expect
      .poll(
        async () => {
          logins = await query(port, 'flowadmin_logins_total{job="flowadmin"}').catch(() => [])
          return logins.length
        },
        {
          timeout: 60_000,
          interval: 100,
          message: 'Prometheus to scrape flowadmin_logins_total (one series per outcome)',
        },
      )
      .toBe(LOGIN_OUTCOMES.length),
  ])
  const byOutcome = Object.fromEntries(
    logins.map((series) => [series.metric.outcome, Number(series.value[1])]),
  )
  expect(byOutcome).toEqual({ succeeded: 3, failed: 3, throttled: 0, shed: 0, mfa_required: 0 })
  expect((await query(port, 'up{job="flowadmin"}')).map((series) => series.value[1])).toEqual(['1'])
  const requests = await query(port, 'flowadmin_http_request_duration_seconds_count{route="/auth/token"}')
  expect(requests.map((series) => series.metric.status).sort()).toEqual(['200', '401'])
})
