import { createHash } from 'node:crypto'
import { tokenRecord } from '@flowadmin/testkit'
import { expect, it } from 'vitest'
import { createPostgresStores, MIGRATIONS, PostgresStoreError, SCHEMA_VERSION } from '../src/index.js'
import { ADDRESS, adminLogin, openInstance } from './core.js'
import { createTestDatabase, useTestDatabase } from './pg-server.js'

const database = useTestDatabase()
const T0 = Date.UTC(2026, 0, 1)

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

it('upgrades a database from before sessions recorded how they signed in: its tokens keep everything, with no method', async () => {
  const fresh = await createTestDatabase(database.server())
  try {
    const before = MIGRATIONS.findIndex((step) => step.includes('ADD COLUMN sign_in'))
    expect(before).toBeGreaterThan(0)
    await fresh.query(
      'CREATE TABLE flowadmin_schema (only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row), version integer NOT NULL)',
    )
    for (const step of MIGRATIONS.slice(0, before)) await fresh.query(step)
    await fresh.query('INSERT INTO flowadmin_schema (version) VALUES ($1)', [before])
    const old = tokenRecord('h1', { agent: 'curl 8.5.0', signIn: null })
    await fresh.query(
      `INSERT INTO flowadmin_tokens (hash, id, kind, name, username, client_id, scope, fingerprint, created_at,
         expires_at, last_used_at, last_address, agent, audience)
       VALUES ($1, $2, 'session', NULL, $3, $4, $5, $6, $7, $8, NULL, NULL, $9, $10)`,
      [
        old.hash,
        old.id,
        old.username,
        old.clientId,
        old.scope,
        old.fingerprint,
        old.createdAt,
        old.expiresAt,
        old.agent,
        old.audience,
      ],
    )
    const stores = await createPostgresStores({ url: fresh.url })
    try {
      expect(stores.schema).toEqual({ from: before, to: SCHEMA_VERSION })
      expect(await stores.tokens.findById(old.id)).toEqual(old)
      await stores.tokens.save(tokenRecord('h2', { createdAt: old.createdAt + 1, signIn: 'password_totp' }))
      expect((await stores.tokens.list(old.username)).map((token) => token.signIn)).toEqual([
        null,
        'password_totp',
      ])
    } finally {
      await stores.close()
    }
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

it('upgrades a database from before passkey challenges kept their address: its challenges serve, and count in the total', async () => {
  const fresh = await createTestDatabase(database.server())
  try {
    const before = MIGRATIONS.findIndex((step) => step.includes('passkey_challenges ADD COLUMN address'))
    expect(before).toBe(SCHEMA_VERSION - 1)
    await fresh.query(
      'CREATE TABLE flowadmin_schema (only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row), version integer NOT NULL)',
    )
    for (const step of MIGRATIONS.slice(0, before)) await fresh.query(step)
    await fresh.query('INSERT INTO flowadmin_schema (version) VALUES ($1)', [before])
    const insert =
      'INSERT INTO flowadmin_passkey_challenges (key, purpose, username, expires_at) VALUES ($1, $2, $3, $4)'
    await fresh.query(insert, ['old-sign-in', 'sign_in', null, T0 + 60_000])
    await fresh.query(insert, ['old-register', 'register', 'alice', T0 + 60_000])
    const stores = await createPostgresStores({ url: fresh.url })
    try {
      expect(stores.schema).toEqual({ from: before, to: SCHEMA_VERSION })
      const bounds = { perAddress: 1, total: 2 }
      const signIn = (address: string) => ({
        purpose: 'sign_in' as const,
        username: null,
        address,
        expiresAt: T0 + 60_000,
      })
      expect(await stores.passkeys.saveChallenge('new', signIn('10.0.0.1'), bounds, T0)).toBe('saved')
      expect(await stores.passkeys.saveChallenge('full', signIn('10.0.0.2'), bounds, T0)).toBe('full')
      expect(await stores.passkeys.takeChallenge('old-sign-in', T0)).toEqual({
        ...signIn('x'),
        address: null,
      })
      expect(await stores.passkeys.takeChallenge('old-register', T0)).toEqual({
        purpose: 'register',
        username: 'alice',
        address: null,
        expiresAt: T0 + 60_000,
      })
      expect(await stores.passkeys.takeChallenge('new', T0)).toEqual(signIn('10.0.0.1'))
    } finally {
      await stores.close()
    }
  } finally {
    await fresh.drop()
  }
})
