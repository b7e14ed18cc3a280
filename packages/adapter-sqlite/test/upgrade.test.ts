import { describeUpgradeContract } from '@flowadmin/testkit'
import Database from 'better-sqlite3'
import { afterAll } from 'vitest'
import { createSqliteStores, MIGRATIONS } from '../src/index.js'
import { createTempFolder } from './temp.js'

const temp = createTempFolder()
afterAll(() => temp.remove())

/** The schema version the file at `path` records, read beside whatever else has it open. */
function versionOf(path: string): number {
  const raw = new Database(path, { readonly: true })
  try {
    return raw.pragma('user_version', { simple: true }) as number
  } finally {
    raw.close()
  }
}

/** A value as SQLite's schema keeps it: lists as JSON text, booleans as 0 or 1. */
const stored = (value: unknown) =>
  Array.isArray(value) ? JSON.stringify(value) : typeof value === 'boolean' ? Number(value) : value

// A file at an old version is that version's steps of MIGRATIONS, as that release left it; the
// stores open it by its path, as the server does.
describeUpgradeContract('sqlite', {
  migrations: MIGRATIONS,
  async createAt(version) {
    const path = temp.file()
    const raw = new Database(path)
    for (const step of MIGRATIONS.slice(0, version)) raw.exec(step)
    raw.pragma(`user_version = ${version}`)
    return {
      async insert(table, row) {
        const columns = Object.keys(row)
        raw
          .prepare(
            `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
          )
          .run(...Object.values(row).map(stored))
      },
      async upgrade() {
        raw.close()
        const from = versionOf(path)
        const stores = createSqliteStores(path)
        return { stores, from, to: versionOf(path) }
      },
      async close() {
        if (raw.open) raw.close()
      },
    }
  },
})
