import { createHash } from 'node:crypto'
import { tokenRecord } from '@flowadmin/testkit'
import { expect, it } from 'vitest'
import { createPostgresStores, PostgresStoreError, SCHEMA_VERSION } from '../src/index.js'
import { ADDRESS, adminLogin, openInstance } from './core.js'
import { createTestDatabase, useTestDatabase } from './pg-server.js'

const database = useTestDatabase()

it('applies the schema once when several instances start at the same moment', async () => {
  const fresh = await createTestDatabase(database.server())
  try {
    const all = await Promise.all(
      Array.from({ length: 4 }, () => createPostgresStores({ url: fresh.url, pool: 1 })),
    )
    for (const stores of all) await stores.close()
    expect(all.map((stores) => stores.schema.from).sort()).toEqual([0, ...Array(3).fill(SCHEMA_VERSION)])
    expect(all.every((stores) => stores.schema.to === SCHEMA_VERSION)).toBe(true)
    const { rows } = await fresh.query('SELECT version FROM flowadmin_schema')
    expect(rows).toEqual([{ version: SCHEMA_VERSION }])
  } finally {
    await fresh.drop()
  }
})

it('refuses a database written by a newer version, and leaves it as it was', async () => {
  const fresh = await createTestDatabase(database.server())
  try {
    const stores = await createPostgresStores({ url: fresh.url })
    await stores.tokens.save(tokenRecord('h'))
    await stores.close()
    await fresh.query('UPDATE flowadmin_schema SET version = $1', [SCHEMA_VERSION + 1])
    const error = await createPostgresStores({ url: fresh.url }).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(PostgresStoreError)
    expect(error).toMatchObject({ code: 'newer_schema' })
    expect((error as Error).message).toContain(
      `newer version (schema ${SCHEMA_VERSION + 1}; this version knows up to ${SCHEMA_VERSION})`,
    )
    expect((await fresh.query('SELECT version FROM flowadmin_schema')).rows).toEqual([
      { version: SCHEMA_VERSION + 1 },
    ])
    expect((await fresh.query('SELECT hash FROM flowadmin_tokens')).rows).toEqual([{ hash: 'h' }])
  } finally {
    await fresh.drop()
  }
})

it('stores tokens as hashes only: no issued token is anywhere in the database', async () => {
  const { core, stores } = await openInstance({ url: database.current().url })
  try {
    const tokens: string[] = []
    for (let i = 0; i < 3; i++) {
      const issued = await core.login(adminLogin(), ADDRESS)
      if (!issued.ok) throw new Error(`login failed: ${issued.error.code}`)
      tokens.push(issued.value.accessToken)
    }
    // Every row of every table of the store, as text.
    const { rows } = await database.current().query(
      `SELECT string_agg(t::text, ' ') AS text FROM (
           SELECT row_to_json(x)::text AS t FROM flowadmin_tokens x
           UNION ALL SELECT row_to_json(x)::text FROM flowadmin_throttle x
           UNION ALL SELECT row_to_json(x)::text FROM flowadmin_node_sets x) everything`,
    )
    const text = String(rows[0]?.text)
    for (const token of tokens) {
      expect(text).toContain(createHash('sha256').update(token).digest('hex'))
      expect(text.toLowerCase()).not.toContain(token.toLowerCase())
    }
  } finally {
    await stores.close()
  }
})
