import { describeUpgradeContract } from '@flowadmin/testkit'
import { createPostgresStores, MIGRATIONS } from '../src/index.js'
import { createTestDatabase, useTestDatabase } from './pg-server.js'

const database = useTestDatabase()

// A database at an old version is that version's steps of MIGRATIONS in a database of its own,
// with the version recorded as that release recorded it.
describeUpgradeContract('postgres', {
  migrations: MIGRATIONS,
  async createAt(version) {
    const fresh = await createTestDatabase(database.server())
    await fresh.query(
      'CREATE TABLE flowadmin_schema (only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row), version integer NOT NULL)',
    )
    for (const step of MIGRATIONS.slice(0, version)) await fresh.query(step)
    await fresh.query('INSERT INTO flowadmin_schema (version) VALUES ($1)', [version])
    return {
      async insert(table, row) {
        const columns = Object.keys(row)
        const placeholders = columns.map((_, i) => `$${i + 1}`)
        await fresh.query(
          `INSERT INTO flowadmin_${table} (${columns.join(', ')}) VALUES (${placeholders.join(', ')})`,
          Object.values(row),
        )
      },
      async upgrade() {
        const stores = await createPostgresStores({ url: fresh.url })
        return { stores, ...stores.schema }
      },
      close: () => fresh.drop(),
    }
  },
})
