// The trail, in this process, over the built core, HTTP app and stores: how fast instances'
// reports are taken (POST /audit/events, batches of 100, through the app's validation,
// resource-server authentication and the store), how fast `GET /audit?actor=…` answers over a
// large trail, and how much disk a million events take (SQLite).
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { percentile } from './load.mjs'

const BATCH = 100
/** Reports in flight at once: as many instances reporting together. */
const IN_FLIGHT = 16
const ACTORS = 1000
const FILL_BATCH = 5000
const SECRET = 'bench-trail-secret'
const T0 = Date.UTC(2026, 0, 1)

/** One report of `count` events, as the helper sends it. */
function reportBody(count, offset) {
  const events = []
  for (let i = 0; i < count; i++) {
    const n = offset + i
    events.push({
      time: T0 + n,
      instance: `line-${n % 10}`,
      actor: `user-${n % ACTORS}`,
      event: n % 3 === 0 ? 'flows.set' : 'nodes.install',
      address: '10.0.0.7',
      details: { type: 'full', module: 'node-red-contrib-example', version: '1.2.3' },
    })
  }
  return JSON.stringify({ events })
}

/** A stored entry, for filling the trail beside the measured path. */
const entryOf = (n) => ({
  time: T0 + n,
  received: T0 + n,
  reporter: 'fleet',
  server: 'fleet',
  instance: `line-${n % 10}`,
  actor: `user-${n % ACTORS}`,
  event: n % 3 === 0 ? 'flows.set' : 'nodes.install',
  outcome: 'success',
  address: '10.0.0.7',
  addressReported: true,
  details: { type: 'full', module: 'node-red-contrib-example', version: '1.2.3' },
})

/** The core and app over `stores`, with the resource server `fleet` and an admin token. */
async function appOver(stores, root) {
  const { createCore, DEFAULT_TRAIL_OPTIONS } = await import(
    new URL('packages/core/dist/index.js', root).href
  )
  const { createHttpApp } = await import(new URL('packages/adapter-http/dist/index.js', root).href)
  const core = createCore(
    {
      stores,
      // The bench measures the trail, not argon2: a verifier that compares the hash itself.
      verifier: { dummyHash: '\u0000', verify: async (hash, password) => hash === password },
      loader: { load: async () => ({ ok: true }) },
      typeUsage: { typesInUse: async () => new Set() },
    },
    {
      adminAuth: {
        users: [{ username: 'admin', password: 'pw', permissions: '*' }],
        resourceServers: [{ id: 'fleet', secret: SECRET }],
      },
      // The reporter's pace is kept (its allowance is read and written with each report) but
      // never reached: the bench measures how fast reports are taken, not the bound on them.
      trail: { ...DEFAULT_TRAIL_OPTIONS, reportedPerMinute: 1_000_000_000 },
    },
  )
  const issued = await core.login(
    { clientId: 'service-admin', grantType: 'password', scope: '*', username: 'admin', password: 'pw' },
    '127.0.0.1',
  )
  const app = createHttpApp(core, { version: 'bench' })
  return { app, token: issued.value.accessToken }
}

/** Reports of BATCH events for `durationMs`, IN_FLIGHT at a time: events/s. */
async function measureIngest(app, durationMs) {
  const authorization = `Basic ${Buffer.from(`fleet:${SECRET}`).toString('base64')}`
  const body = reportBody(BATCH, 0)
  const post = async () => {
    const res = await app.request('/audit/events', {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body,
    })
    if (res.status !== 200) throw new Error(`POST /audit/events answered ${res.status}`)
    await res.arrayBuffer()
  }
  await post()
  let events = 0
  const start = performance.now()
  const end = start + durationMs
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (performance.now() < end) {
        await post()
        events += BATCH
      }
    }),
  )
  return (events * 1000) / (performance.now() - start)
}

/** `GET /audit?actor=user-k` one at a time for `durationMs`: p50 and p99 in ms. */
async function measureSearch(app, token, durationMs) {
  const latencies = []
  const end = performance.now() + durationMs
  let k = 0
  while (performance.now() < end || latencies.length < 20) {
    const t0 = performance.now()
    const res = await app.request(`/audit?actor=user-${(k++ * 7919) % ACTORS}`, {
      headers: { authorization: `Bearer ${token}` },
    })
    if (res.status !== 200) throw new Error(`GET /audit answered ${res.status}`)
    await res.arrayBuffer()
    latencies.push(performance.now() - t0)
  }
  latencies.sort((a, b) => a - b)
  return { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), count: latencies.length }
}

async function fill(stores, total, already) {
  for (let n = already; n < total; n += FILL_BATCH) {
    const batch = []
    for (let i = n; i < Math.min(n + FILL_BATCH, total); i++) batch.push(entryOf(i))
    await stores.trail.append(batch)
  }
}

/** Every figure of one store: ingest rate, then search over `events` events, and its size. */
async function measureStore({ stores, root, durationMs, events, size, filled = async () => {} }) {
  const { app, token } = await appOver(stores, root)
  const ingest = await measureIngest(app, durationMs / 2)
  const counted = (await stores.trail.search({}, 1, null)).length
  await fill(stores, events, counted)
  await filled()
  const search = await measureSearch(app, token, durationMs / 2)
  return { ingest, search, events, bytesPerMillion: size === null ? null : (await size()) * (1e6 / events) }
}

/** Runs one statement on a connection of its own; its rows. */
async function sql(url, root, text) {
  const { default: pgDriver } = await import(
    new URL('packages/adapter-postgres/node_modules/pg/lib/index.js', root).href
  )
  const client = new pgDriver.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query(text)).rows
  } finally {
    await client.end()
  }
}

export async function measureTrail({ root, folder, durationMs, events, pgUrl }) {
  const sqlite = await import(new URL('packages/adapter-sqlite/dist/index.js', root).href)
  const file = join(folder, `trail-${Date.now()}.db`)
  const stores = sqlite.createSqliteStores(file)
  let onSqlite
  try {
    onSqlite = await measureStore({
      stores,
      root,
      durationMs,
      events,
      size: async () => {
        await stores.close()
        return statSync(file).size
      },
    })
  } finally {
    await stores.close()
  }
  let onPostgres = null
  if (pgUrl !== null) {
    const { createPostgresStorage } = await import('./postgres.mjs')
    const storage = await createPostgresStorage({ serverUrl: pgUrl, root }).catch((error) => ({ error }))
    if (storage.error) onPostgres = { error: `cannot reach ${pgUrl}: ${storage.error.message}` }
    else {
      const { url } = await storage.create()
      const { createPostgresStores } = await import(
        new URL('packages/adapter-postgres/dist/index.js', root).href
      )
      const pg = await createPostgresStores({ url, pool: 8 })
      try {
        onPostgres = await measureStore({
          stores: pg,
          root,
          durationMs,
          events,
          // The planner's statistics, as autovacuum's analyze keeps them on a live database: a
          // table filled within seconds has none yet, and without them the search by actor walks
          // the time index.
          filled: () => sql(url, root, 'ANALYZE flowadmin_trail'),
          size: async () =>
            Number(
              (await sql(url, root, "SELECT pg_total_relation_size('flowadmin_trail') AS size"))[0].size,
            ),
        })
      } finally {
        await pg.close()
        await storage.close()
      }
    }
  }
  return { sqlite: onSqlite, postgres: onPostgres }
}

const fmt = (value, digits) => (value === null || value === undefined ? '-' : Number(value).toFixed(digits))

/** The figures as the bench prints them. */
/** The trail's figures as rows [label, sqlite, postgres] (the last round), for docs/benchmarks.md. */
export function trailRows(rounds) {
  const last = rounds.at(-1) ?? {}
  const cell = (figures, value) => (figures && !figures.error ? value(figures) : '-')
  const row = (label, value) => [label, cell(last.sqlite, value), cell(last.postgres, value)]
  return [
    row(`ingest events/s (batches of ${BATCH}, ${IN_FLIGHT} at once)`, (f) => fmt(f.ingest, 0)),
    row('events in the trail searched', (f) => fmt(f.events, 0)),
    row('GET /audit?actor= p50 ms', (f) => fmt(f.search.p50, 2)),
    row('GET /audit?actor= p99 ms', (f) => fmt(f.search.p99, 2)),
    row('disk per million events MiB', (f) =>
      f.bytesPerMillion === null ? '-' : fmt(f.bytesPerMillion / 1048576, 0),
    ),
  ]
}

export function trailTable(scenario, rounds, { durationS }) {
  const lines = [`\n## ${scenario.title}  [${scenario.id}; ${durationS} s × ${rounds.length} round(s)]`]
  for (const [name, pick] of [
    ['sqlite', (r) => r.sqlite],
    ['postgres', (r) => r.postgres],
  ]) {
    for (const round of rounds) {
      const figures = pick(round)
      if (figures === null) continue
      if (figures.error) {
        lines.push(`${name.padEnd(9)} ${figures.error}`)
        continue
      }
      lines.push(
        `${name.padEnd(9)} ingest ${fmt(figures.ingest, 0).padStart(8)} events/s (batches of ${BATCH}, ${IN_FLIGHT} at once)   ` +
          `GET /audit?actor= over ${figures.events} events: p50 ${fmt(figures.search.p50, 2)} ms, p99 ${fmt(figures.search.p99, 2)} ms   ` +
          `disk ${figures.bytesPerMillion === null ? '-' : `${fmt(figures.bytesPerMillion / 1048576, 0)} MiB`} per million events`,
      )
    }
  }
  return lines.join('\n')
}
