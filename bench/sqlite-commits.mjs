// The disk's floor for durable writes, measured in this process: a raw better-sqlite3 loop of
// commits on the built store's connection settings (WAL, synchronous=FULL), each commit carrying
// `perCommit` single-row changes, for `durationMs`.
import { join } from 'node:path'

export async function measureSqliteCommits({ root, folder, durationMs, perCommit }) {
  const { openDatabase } = await import(new URL('packages/adapter-sqlite/dist/index.js', root).href)
  const db = openDatabase(join(folder, `commits-${perCommit}-${Date.now()}.db`))
  try {
    db.exec('CREATE TABLE flags (id INTEGER PRIMARY KEY, enabled INTEGER NOT NULL)')
    const insert = db.prepare('INSERT INTO flags (id, enabled) VALUES (?, 1)')
    for (let id = 0; id < perCommit; id++) insert.run(id)
    const flip = db.prepare('UPDATE flags SET enabled = 1 - enabled WHERE id = ?')
    const begin = db.prepare('BEGIN IMMEDIATE')
    const commit = db.prepare('COMMIT')
    let commits = 0
    const start = performance.now()
    const end = start + durationMs
    while (performance.now() < end) {
      begin.run()
      for (let id = 0; id < perCommit; id++) flip.run(id)
      commit.run()
      commits++
    }
    const elapsedMs = performance.now() - start
    return {
      perCommit,
      commits,
      elapsedMs,
      commitsPerSecond: (commits * 1000) / elapsedMs,
      changesPerSecond: (commits * perCommit * 1000) / elapsedMs,
    }
  } finally {
    db.close()
  }
}
