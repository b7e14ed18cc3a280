import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { createMemoryStores } from '@flowadmin/adapter-memory'
import { createCore } from '@flowadmin/core'
import { createPlainHasher, holdVerifications, tokenRecord, trailEntry, waitFor } from '@flowadmin/testkit'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { LOGIN_OUTCOMES } from '../src/adapters/metrics.js'
import {
  createMetrics,
  createReadiness,
  hashPassword,
  type RunningServer,
  SettingsError,
  type SettingsInput,
  startServer,
} from '../src/index.js'
import { captureLog } from './log-capture.js'

let userDir: string
const running: RunningServer[] = []
let hash: string

beforeAll(async () => {
  hash = await hashPassword('pw')
})
beforeEach(async () => {
  userDir = await mkdtemp(path.join(tmpdir(), 'flowadmin-metrics-'))
})
afterEach(async () => {
  for (const server of running.splice(0)) await server.close()
  await rm(userDir, { recursive: true, force: true })
})

/** A node module with one node set of one type, as a package in `<userDir>/node_modules`. */
async function install(name: string): Promise<void> {
  const dir = path.join(userDir, 'node_modules', name)
  await mkdir(dir, { recursive: true })
  await writeFile(
    path.join(dir, 'package.json'),
    JSON.stringify({ name, version: '1.0.0', 'node-red': { nodes: { main: 'main.js' } } }),
  )
  await writeFile(path.join(dir, 'main.js'), 'module.exports = function (RED) {}\n')
  await writeFile(
    path.join(dir, 'main.html'),
    `<script type="text/html" data-template-name="${name}"></script>`,
  )
}

async function start(settings: SettingsInput = {}): Promise<RunningServer> {
  const server = await startServer({
    port: 0,
    userDir,
    stdout: () => {},
    logger: captureLog().logger,
    settings: {
      adminAuth: {
        type: 'credentials',
        users: [
          { username: 'admin', password: hash, permissions: '*' },
          { username: 'viewer', password: hash, permissions: 'read' },
          { username: 'editor', password: hash, permissions: ['nodes.read', 'nodes.write'] },
        ],
      },
      ...settings,
    },
  })
  running.push(server)
  return server
}

async function login(url: string, username: string, password = 'pw'): Promise<Response> {
  return fetch(`${url}/auth/token`, {
    method: 'POST',
    body: new URLSearchParams({
      client_id: 'service-admin',
      grant_type: 'password',
      scope: '',
      username,
      password,
    }),
  })
}

async function token(url: string, username: string): Promise<string> {
  const res = await login(url, username)
  expect(res.status).toBe(200)
  return ((await res.json()) as { access_token: string }).access_token
}

/** The value of one sample line, e.g. `flowadmin_logins_total{outcome="failed"}`; null when absent. */
function sample(exposition: string, series: string): number | null {
  const line = exposition.split('\n').find((candidate) => candidate.startsWith(`${series} `))
  return line === undefined ? null : Number(line.slice(series.length + 1))
}

/** The value of each of `series` in the exposition, by series (null where one is missing). */
const samples = (exposition: string, series: string[]) =>
  Object.fromEntries(series.map((name) => [name, sample(exposition, name)]))

describe('GET /metrics beside the API', () => {
  it('counts what users did, by outcome and route template, for a token with metrics.read', async () => {
    await install('greeting-nodes')
    const server = await start()
    const { url } = server
    const admin = await token(url, 'admin')
    const viewer = await token(url, 'viewer')
    expect((await login(url, 'admin', 'wrong')).status).toBe(401)
    const disabled = await fetch(`${url}/nodes/greeting-nodes`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${admin}`, 'Content-Type': 'application/json' },
      body: '{"enabled":false}',
    })
    expect(disabled.status).toBe(200)
    expect(
      (await fetch(`${url}/nodes/secret-looking-name`, { headers: { Authorization: `Bearer ${admin}` } }))
        .status,
    ).toBe(404)
    expect((await fetch(`${url}/no/such/route-4711`)).status).toBe(404)

    expect((await fetch(`${url}/metrics`)).status).toBe(401)
    const editor = await fetch(`${url}/metrics`, {
      headers: { Authorization: `Bearer ${await token(url, 'editor')}` },
    })
    expect(editor.status).toBe(401)
    expect(editor.headers.get('WWW-Authenticate')).toContain('insufficient_scope')

    const res = await fetch(`${url}/metrics`, { headers: { Authorization: `Bearer ${viewer}` } })
    expect(res.status).toBe(200)
    expect(res.headers.get('Content-Type')).toBe('text/plain; version=0.0.4; charset=utf-8')
    const text = await res.text()

    const requests = 'flowadmin_http_request_duration_seconds_count'
    const storage = 'flowadmin_storage_operation_duration_seconds_count'
    const expected = {
      'flowadmin_logins_total{outcome="succeeded"}': 3,
      'flowadmin_logins_total{outcome="failed"}': 1,
      'flowadmin_logins_total{outcome="throttled"}': 0,
      'flowadmin_logins_total{outcome="shed"}': 0,
      'flowadmin_logins_total{outcome="mfa_required"}': 0,
      'flowadmin_tokens_live{kind="session"}': 3,
      'flowadmin_tokens_live{kind="api"}': 0,
      'flowadmin_module_changes_total{change="disabled"}': 1,
      'flowadmin_module_changes_total{change="enabled"}': 0,
      flowadmin_permission_denied_total: 1,
      'flowadmin_verifier_queue_depth{lane="known"}': 0,
      'flowadmin_verifier_queue_depth{lane="general"}': 0,
      flowadmin_verifier_running: 0,
      flowadmin_verifier_wait_seconds_count: 4,
      [`${requests}{method="POST",route="/auth/token",status="200"}`]: 3,
      [`${requests}{method="POST",route="/auth/token",status="401"}`]: 1,
      [`${requests}{method="PUT",route="/nodes/*",status="200"}`]: 1,
      [`${requests}{method="GET",route="/nodes/*",status="404"}`]: 1,
      [`${requests}{method="GET",route="unmatched",status="404"}`]: 1,
      [`${storage}{store="tokens",operation="save"}`]: 3,
      [`${storage}{store="modules",operation="setEnabled"}`]: 1,
    }
    expect(samples(text, Object.keys(expected))).toEqual(expected)
    expect(text).not.toContain('secret-looking-name')
    expect(text).not.toContain('route-4711')
    expect(text).not.toContain('flowadmin_storage_errors_total{')
    for (const name of [
      'nodejs_eventloop_lag_seconds',
      'nodejs_eventloop_lag_p99_seconds',
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_heap_size_used_bytes',
    ]) {
      expect(sample(text, name), name).toBeGreaterThanOrEqual(0)
    }
  })

  it('is not served when metrics is false', async () => {
    const { url } = await start({ metrics: false })
    expect(
      (await fetch(`${url}/metrics`, { headers: { Authorization: `Bearer ${await token(url, 'admin')}` } }))
        .status,
    ).toBe(404)
    expect((await fetch(`${url}/healthz`)).status).toBe(200)
  })
})

describe('a metrics listener of its own', () => {
  it('serves /metrics without a token on loopback, and the API no longer does', async () => {
    const server = await start({ metrics: { port: 0 } })
    expect(server.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/)
    const metricsUrl = server.metricsUrl as string
    expect((await token(server.url, 'admin')).length).toBeGreaterThan(40)
    const res = await fetch(metricsUrl)
    expect(res.status).toBe(200)
    expect(res.headers.get('Cache-Control')).toBe('no-store')
    expect(sample(await res.text(), 'flowadmin_logins_total{outcome="succeeded"}')).toBe(1)
    expect((await fetch(metricsUrl, { method: 'HEAD' })).status).toBe(200)
    expect((await fetch(metricsUrl, { method: 'POST' })).status).toBe(405)
    expect((await fetch(metricsUrl.replace(/metrics$/, 'other'))).status).toBe(404)
    const admin = await token(server.url, 'admin')
    expect(
      (await fetch(`${server.url}/metrics`, { headers: { Authorization: `Bearer ${admin}` } })).status,
    ).toBe(404)

    await server.close()
    await expect(fetch(metricsUrl)).rejects.toThrow()
  })

  it('refuses an address other machines can reach', async () => {
    const error = await start({ metrics: { host: '0.0.0.0', port: 0 } }).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(SettingsError)
    expect((error as Error).message).toMatch(/^metrics\.host: 0\.0\.0\.0 is not a loopback address/)
  })
})

describe('readiness', () => {
  it('GET /readyz is 200 once the service runs, with no detail', async () => {
    const { url } = await start()
    const res = await fetch(`${url}/readyz`)
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('{"status":"ready"}')
  })

  it('names the reason: stopping, or a store that fails', async () => {
    const stores = createMemoryStores()
    let state: 'running' | 'closing' = 'running'
    const readiness = createReadiness(stores.tokens, () => state)
    expect(await readiness()).toBeNull()
    stores.tokens.findByHash = async () => {
      throw new Error('SQLITE_IOERR')
    }
    expect(await readiness()).toBe('storage_unavailable')
    state = 'closing'
    expect(await readiness()).toBe('shutting_down')
  })
})

/**
 * Metrics over memory stores they instrument (`raw` the stores below), holding one session live at
 * time 5, which is when the live tokens are counted; `load` is the login queue's at each scrape.
 */
async function metricsOfStores(load: { running: number; known: number; general: number }) {
  const metrics = createMetrics()
  const raw = createMemoryStores()
  const stores = metrics.instrument(raw)
  await stores.tokens.save(tokenRecord('h', { createdAt: 0, expiresAt: 10 }))
  metrics.track({ liveTokens: () => stores.tokens.countLive(5), loginQueueLoad: () => load })
  return { metrics, raw, stores }
}

describe('createMetrics', () => {
  it('times every store call and counts the ones that throw, by store and operation', async () => {
    const { metrics, raw, stores } = await metricsOfStores({ running: 4, known: 2, general: 7 })
    expect(await stores.tokens.countLive(5)).toEqual({ session: 1, api: 0 })
    raw.modules.list = async () => {
      throw new Error('disk I/O error')
    }
    await expect(stores.modules.list()).rejects.toThrow('disk I/O error')
    await expect(stores.modules.list()).rejects.toThrow('disk I/O error')
    await stores.trail.append([trailEntry()])
    expect(await stores.trail.search({}, 10, null)).toHaveLength(1)

    const { body } = await metrics.exposition()
    const timed = 'flowadmin_storage_operation_duration_seconds_count'
    expect(sample(body, `${timed}{store="trail",operation="append"}`)).toBe(1)
    expect(sample(body, `${timed}{store="trail",operation="search"}`)).toBe(1)
    expect(sample(body, `${timed}{store="tokens",operation="save"}`)).toBe(1)
    expect(sample(body, `${timed}{store="modules",operation="list"}`)).toBe(2)
    expect(sample(body, 'flowadmin_storage_errors_total{store="modules",operation="list"}')).toBe(2)
    expect(sample(body, 'flowadmin_tokens_live{kind="session"}')).toBe(1)
    expect(sample(body, 'flowadmin_verifier_queue_depth{lane="general"}')).toBe(7)
    expect(sample(body, 'flowadmin_verifier_queue_depth{lane="known"}')).toBe(2)
    expect(sample(body, 'flowadmin_verifier_running')).toBe(4)
    await stores.close()
  })

  it('counts second factors and passkey sign-ins by method and outcome, every series from 0', async () => {
    const { metrics, stores } = await metricsOfStores({ running: 0, known: 0, general: 0 })
    const series = 'flowadmin_second_factors_total'
    const before = (await metrics.exposition()).body
    for (const method of ['totp', 'recovery_code', 'passkey'])
      for (const outcome of ['succeeded', 'failed'])
        expect(sample(before, `${series}{method="${method}",outcome="${outcome}"}`)).toBe(0)
    expect(sample(before, `${series}{method="code",outcome="throttled"}`)).toBe(0)
    const actor = { username: 'u', clientId: null, address: 'a' }
    metrics.events.emit({ type: 'mfa.succeeded', at: 0, factor: 'totp', ...actor })
    metrics.events.emit({ type: 'mfa.failed', at: 0, factor: 'recovery_code', reason: 'wrong', ...actor })
    metrics.events.emit({ type: 'mfa.throttled', at: 0, retryAfter: 3, ...actor })
    metrics.events.emit({ type: 'passkey.succeeded', at: 0, id: 'k', ...actor })
    metrics.events.emit({ type: 'passkey.failed', at: 0, id: null, reason: 'unknown_challenge', ...actor })
    metrics.events.emit({ type: 'passkey.failed', at: 0, id: 'k', reason: 'counter', ...actor })
    metrics.events.emit({ type: 'passkey.registered', at: 0, id: 'k', name: 'n', sessionsEnded: 0, ...actor })
    const { body } = await metrics.exposition()
    expect(sample(body, `${series}{method="totp",outcome="succeeded"}`)).toBe(1)
    expect(sample(body, `${series}{method="totp",outcome="failed"}`)).toBe(0)
    expect(sample(body, `${series}{method="recovery_code",outcome="failed"}`)).toBe(1)
    expect(sample(body, `${series}{method="code",outcome="throttled"}`)).toBe(1)
    expect(sample(body, `${series}{method="passkey",outcome="succeeded"}`)).toBe(1)
    expect(sample(body, `${series}{method="passkey",outcome="failed"}`)).toBe(2)
    await stores.close()
  })

  it('counts the directory’s answers by outcome, every series from 0, and times them', async () => {
    const { metrics, stores } = await metricsOfStores({ running: 0, known: 0, general: 0 })
    const series = 'flowadmin_directory_requests_total'
    const before = (await metrics.exposition()).body
    for (const outcome of ['verified', 'refused', 'unavailable'])
      expect(sample(before, `${series}{outcome="${outcome}"}`)).toBe(0)
    metrics.observer.directory?.('verified', 4)
    metrics.observer.directory?.('unavailable', 3000)
    metrics.observer.directory?.('unavailable', 1200)
    const { body } = await metrics.exposition()
    expect(sample(body, `${series}{outcome="verified"}`)).toBe(1)
    expect(sample(body, `${series}{outcome="refused"}`)).toBe(0)
    expect(sample(body, `${series}{outcome="unavailable"}`)).toBe(2)
    expect(sample(body, 'flowadmin_directory_request_duration_seconds_count{outcome="unavailable"}')).toBe(2)
    expect(sample(body, 'flowadmin_directory_request_duration_seconds_sum{outcome="unavailable"}')).toBe(4.2)
    await stores.close()
  })

  it('keeps the last count of live tokens when counting fails, and counts the failure', async () => {
    const { metrics, raw, stores } = await metricsOfStores({ running: 0, known: 0, general: 0 })
    expect(sample((await metrics.exposition()).body, 'flowadmin_tokens_live{kind="session"}')).toBe(1)

    raw.tokens.countLive = async () => {
      throw new Error('database is locked')
    }
    const { body } = await metrics.exposition()
    expect(sample(body, 'flowadmin_tokens_live{kind="session"}')).toBe(1)
    expect(sample(body, 'flowadmin_storage_errors_total{store="tokens",operation="countLive"}')).toBe(1)
    expect(sample(body, 'flowadmin_verifier_running')).toBe(0)
    await stores.close()
  })

  it('writes its own series as prom-client’s Counter, Gauge and Histogram write the same figures', async () => {
    const metrics = createMetrics()
    const requests: Array<[string, string, number, number]> = [
      ['GET', '/nodes', 200, 0.0003],
      ['POST', '/auth/token', 401, 0.2],
      ['GET', '/nodes', 200, 0.004],
      ['GET', 'unmatched', 404, 12],
    ]
    for (const [method, route, status, seconds] of requests)
      metrics.onResponse({ method, route, status, seconds })
    const actor = { username: 'u', clientId: 'c', address: 'a' }
    metrics.events.emit({ type: 'login.failed', at: 0, ...actor })
    metrics.events.emit({ type: 'login.failed', at: 0, ...actor })
    metrics.events.emit({ type: 'login.succeeded', at: 0, ...actor })
    metrics.track({
      liveTokens: async () => ({ session: 2, api: 1 }),
      loginQueueLoad: () => ({ running: 1, known: 0, general: 3 }),
    })
    const { body } = await metrics.exposition()

    const { Counter, Gauge, Histogram, Registry } = await import('prom-client')
    const reference = new Registry()
    const registers = [reference]
    const requestTimes = new Histogram({
      name: 'flowadmin_http_request_duration_seconds',
      help: 'h',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    })
    for (const [method, route, status, seconds] of requests)
      requestTimes.observe({ method, route, status: String(status) }, seconds)
    const logins = new Counter({
      name: 'flowadmin_logins_total',
      help: 'h',
      labelNames: ['outcome'],
      registers,
    })
    for (const outcome of LOGIN_OUTCOMES) logins.inc({ outcome }, 0)
    logins.inc({ outcome: 'failed' }, 2)
    logins.inc({ outcome: 'succeeded' })
    const live = new Gauge({ name: 'flowadmin_tokens_live', help: 'h', labelNames: ['kind'], registers })
    live.set({ kind: 'session' }, 2)
    live.set({ kind: 'api' }, 1)
    const expected = await reference.metrics()

    /** The series lines of one metric family, in order. */
    const series = (text: string, name: string) =>
      text.split('\n').filter((line) => line.startsWith(`${name}_`) || line.startsWith(`${name}{`))
    // Three label sets of 14 buckets, +Inf, _sum and _count; four outcomes; two kinds.
    const families = [
      { name: 'flowadmin_http_request_duration_seconds', type: 'histogram', lines: 51 },
      { name: 'flowadmin_logins_total', type: 'counter', lines: 5 },
      { name: 'flowadmin_tokens_live', type: 'gauge', lines: 2 },
    ]
    for (const { name, type, lines } of families) {
      expect(series(body, name), name).toEqual(series(expected, name))
      expect(series(body, name), name).toHaveLength(lines)
      expect(body).toContain(`# TYPE ${name} ${type}\n`)
    }
  })

  it('counts a login shed by the core (too many attempts in flight) as shed', async () => {
    const metrics = createMetrics()
    metrics.events.emit({
      type: 'login.shed',
      at: 0,
      retryAfter: 1,
      username: 'u',
      clientId: 'c',
      address: 'a',
    })
    expect(sample((await metrics.exposition()).body, 'flowadmin_logins_total{outcome="shed"}')).toBe(1)
  })

  it('times each login’s wait in the verifier queue, as the core reports it', async () => {
    const metrics = createMetrics()
    const hasher = createPlainHasher()
    let now = 1_000_000
    const core = createCore(
      {
        stores: createMemoryStores(),
        verifier: hasher,
        loader: { load: async () => ({ ok: true }) },
        typeUsage: { typesInUse: async () => new Set<string>() },
        clock: { now: () => now },
        observer: metrics.observer,
      },
      {
        adminAuth: {
          users: [{ username: 'admin', password: hasher.hash('pw'), permissions: '*' }],
          loginQueue: { concurrency: 1 },
        },
      },
    )
    const login = {
      clientId: 'service-admin',
      grantType: 'password',
      scope: '*',
      username: 'admin',
      password: 'pw',
    }
    const hold = holdVerifications(hasher)
    const first = core.login(login, '10.0.0.1')
    await hold.started
    const second = core.login(login, '10.0.0.2')
    // The second waits for the first's verification: a quarter of a second on the core's clock,
    // which moves once the second is in the queue (its wait started on the clock's reading then).
    await waitFor(
      () => core.loginQueue.load().general === 1,
      () => `the second login to wait in the verifier queue (${JSON.stringify(core.loginQueue.load())})`,
    )
    now += 250
    hold.restore()
    const results = [await first, await second]
    expect(results, JSON.stringify(results)).toMatchObject([{ ok: true }, { ok: true }])
    const text = (await metrics.exposition()).body
    expect(sample(text, 'flowadmin_verifier_wait_seconds_count')).toBe(2)
    expect(sample(text, 'flowadmin_verifier_wait_seconds_sum')).toBeCloseTo(0.25, 6)
    expect(sample(text, 'flowadmin_verifier_wait_seconds_bucket{le="0.1"}')).toBe(1)
  })
})
