// `pnpm --filter @flowadmin/adapter-postgres bench [--ops N] [--concurrency C]`: the same three
// store-shaped workloads through `pg` and through `postgres`, alternately, on a throw-away
// database of the server at FLOWADMIN_TEST_PG (default postgres://postgres@127.0.0.1:5432/postgres).
// Prints operations per second and latency percentiles per driver and workload.
import { randomBytes } from 'node:crypto'
import { parseArgs } from 'node:util'
import pg from 'pg'
import postgres from 'postgres'

const { values } = parseArgs({
  options: {
    ops: { type: 'string', default: '3000' },
    concurrency: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '2' },
  },
})
const OPS = Number(values.ops)
const CONCURRENCY = Number(values.concurrency)
const ROUNDS = Number(values.rounds)
const server = process.env.FLOWADMIN_TEST_PG || 'postgres://postgres@127.0.0.1:5432/postgres'

const SCHEMA = `
  CREATE TABLE tokens (hash text PRIMARY KEY, username text NOT NULL, scope text[] NOT NULL,
                       created_at bigint NOT NULL, expires_at bigint);
  CREATE TABLE throttle (key text PRIMARY KEY, count integer NOT NULL, reset_at bigint NOT NULL);`
const SQL = {
  find: 'SELECT hash, username, scope, created_at, expires_at FROM tokens WHERE hash = $1',
  save: `INSERT INTO tokens (hash, username, scope, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (hash) DO UPDATE SET username = excluded.username`,
  lock: 'SELECT pg_advisory_xact_lock(1, hashtext($1))',
  hit: `INSERT INTO throttle AS t (key, count, reset_at) VALUES ($1, 1, $2)
        ON CONFLICT (key) DO UPDATE SET count = t.count + 1 RETURNING count`,
}

const hashes = Array.from({ length: 1000 }, () => randomBytes(32).toString('hex'))
const pick = (i) => hashes[i % hashes.length]

/** Each driver behind the same three calls. */
function pgDriver(url) {
  const pool = new pg.Pool({ connectionString: url, max: CONCURRENCY })
  return {
    name: 'pg',
    find: (i) => pool.query(SQL.find, [pick(i)]),
    save: (i) => pool.query(SQL.save, [pick(i), 'admin', ['*'], i, i + 1]),
    async transaction(i) {
      const client = await pool.connect()
      try {
        await client.query('BEGIN')
        await client.query(SQL.lock, [`k${i % 50}`])
        await client.query(SQL.hit, [`k${i % 50}`, i])
        await client.query('COMMIT')
      } finally {
        client.release()
      }
    },
    end: () => pool.end(),
  }
}

function postgresDriver(url) {
  const sql = postgres(url, { max: CONCURRENCY, onnotice: () => {} })
  return {
    name: 'postgres',
    find: (i) => sql.unsafe(SQL.find, [pick(i)], { prepare: true }),
    save: (i) => sql.unsafe(SQL.save, [pick(i), 'admin', ['*'], i, i + 1], { prepare: true }),
    transaction: (i) =>
      sql.begin(async (tx) => {
        await tx.unsafe(SQL.lock, [`k${i % 50}`], { prepare: true })
        await tx.unsafe(SQL.hit, [`k${i % 50}`, i], { prepare: true })
      }),
    end: () => sql.end(),
  }
}

async function run(operation) {
  const latencies = []
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < OPS) {
        const i = next++
        const t = performance.now()
        await operation(i)
        latencies.push(performance.now() - t)
      }
    }),
  )
  const seconds = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]
  return { perSecond: OPS / seconds, p50: at(0.5), p99: at(0.99) }
}

const admin = new pg.Client({ connectionString: server })
await admin.connect()
const name = `flowadmin_bench_${randomBytes(6).toString('hex')}`
await admin.query(`CREATE DATABASE ${name}`)
const url = new URL(server)
url.pathname = `/${name}`
try {
  const setup = new pg.Client({ connectionString: url.toString() })
  await setup.connect()
  await setup.query(SCHEMA)
  await setup.end()

  const results = {}
  for (let round = 1; round <= ROUNDS; round++) {
    for (const make of [pgDriver, postgresDriver]) {
      const driver = make(url.toString())
      for (const workload of ['save', 'find', 'transaction']) {
        await run((i) => driver[workload](i)) // warm-up: connections and prepared statements
        const result = await run((i) => driver[workload](i))
        const key = `${workload} ${driver.name}`
        results[key] ??= []
        results[key].push(result)
      }
      await driver.end()
    }
  }
  console.log(`${OPS} operations per run, ${CONCURRENCY} at once, ${ROUNDS} rounds (best round shown)`)
  console.log('workload     driver     ops/s   p50 ms  p99 ms')
  for (const [key, list] of Object.entries(results)) {
    const best = list.reduce((a, b) => (b.perSecond > a.perSecond ? b : a))
    const [workload, driver] = key.split(' ')
    console.log(
      `${workload.padEnd(12)} ${driver.padEnd(9)} ${best.perSecond.toFixed(0).padStart(7)} ${best.p50.toFixed(2).padStart(8)} ${best.p99.toFixed(2).padStart(7)}`,
    )
  }
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  await admin.end()
}
