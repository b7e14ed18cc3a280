// Single-row token store rates on a temporary file with the real durability settings (WAL,
// synchronous=FULL): each issue and revoke is its own committed transaction.
// Usage: node bench/store-rates.mjs [operations=2000] [rows already stored=100000]
// Runs the built package: `pnpm build` first.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSqliteStores, openDatabase } from '../dist/index.js'

const operations = Number(process.argv[2] ?? 2000)
const prefilled = Number(process.argv[3] ?? 100_000)
const folder = mkdtempSync(join(tmpdir(), 'flowadmin-bench-'))
const now = Date.now()
const record = (hash) => ({
  hash,
  username: 'admin',
  clientId: 'service-admin',
  scope: ['*'],
  createdAt: now,
  expiresAt: now + 604_800_000,
})
const newHash = () => randomBytes(32).toString('hex')

async function measure(name, hashes, step) {
  const times = []
  const started = process.hrtime.bigint()
  for (const hash of hashes) {
    const t = process.hrtime.bigint()
    await step(hash)
    times.push(Number(process.hrtime.bigint() - t) / 1000)
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  times.sort((a, b) => a - b)
  const at = (q) => times[Math.min(times.length - 1, Math.floor(q * times.length))].toFixed(0)
  console.log(
    `${name.padEnd(22)} ${String(Math.round(hashes.length / seconds)).padStart(8)} ops/s` +
      `   p50 ${at(0.5).padStart(6)} µs   p99 ${at(0.99).padStart(6)} µs`,
  )
}

try {
  const db = openDatabase(join(folder, 'bench.db'))
  const stores = createSqliteStores(db)
  // Fill in one transaction: only the measured operations below commit one by one.
  db.exec('BEGIN')
  for (let i = 0; i < prefilled; i++) stores.tokens.save(record(newHash()))
  db.exec('COMMIT')
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)') // start measuring from an empty log

  const hashes = Array.from({ length: operations }, newHash)
  const version = db.prepare('SELECT sqlite_version() AS v').get().v
  console.log(
    `SQLite ${version}, Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}; ` +
      `${operations} operations each on ${prefilled} stored tokens; WAL, synchronous=FULL`,
  )
  await measure('issue (save)', hashes, (hash) => stores.tokens.save(record(hash)))
  await measure('lookup (findByHash)', hashes, async (hash) => {
    if ((await stores.tokens.findByHash(hash)) === null) throw new Error('lost a token')
  })
  await measure('revoke (delete)', hashes, async (hash) => {
    if (!(await stores.tokens.delete(hash))) throw new Error('lost a token')
  })
  await stores.close()
  db.close()
} finally {
  rmSync(folder, { recursive: true, force: true })
}
