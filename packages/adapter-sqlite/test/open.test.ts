import { spawnSync } from 'node:child_process'
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  truncateSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { tokenRecord } from '@flowadmin/testkit'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import {
  BUSY_TIMEOUT_MS,
  createSqliteStores,
  MIGRATIONS,
  migrate,
  openDatabase,
  SCHEMA_VERSION,
  type SqliteDatabase,
  type SqliteDriver,
  SqliteStoreError,
} from '../src/index.js'
import { childScript } from './children.js'
import { POLICY } from './records.js'
import { createTempFolder } from './temp.js'

const temp = createTempFolder()
afterAll(() => temp.remove())

const pragma = (db: SqliteDatabase, name: string) =>
  Object.values(db.prepare(`PRAGMA ${name}`).get() as Record<string, unknown>)[0]

const T0 = Date.UTC(2026, 0, 1)
/** admin's login attempt from 10.0.0.1, as the throttle counts it. */
const ATTEMPT = { pairKey: 'user 10.0.0.1 admin', addressKey: 'addr 10.0.0.1', knownKey: 'known k' }
const record = (hash: string) => tokenRecord(hash, { expiresAt: T0 + 60_000 })

/** A database holding `count` tokens, closed, so its file is complete without a WAL. */
async function databaseWith(path: string, count: number): Promise<string> {
  const stores = createSqliteStores(path)
  for (let i = 0; i < count; i++) await stores.tokens.save(record(`${i}`.padStart(64, 'a')))
  await stores.close()
  return path
}

/** A new file at schema 1 (as that release left it) holding what `fill` writes, closed. */
function schema1File(fill: (raw: Database.Database) => void): string {
  const path = temp.file()
  const raw = new Database(path)
  raw.exec(MIGRATIONS[0] as string)
  raw.pragma('user_version = 1')
  fill(raw)
  raw.close()
  return path
}

/** Asserts that opening `path` fails with a SqliteStoreError of `code` naming the path. */
function expectRefused(path: string, code: SqliteStoreError['code'], options?: { readonly?: boolean }) {
  let caught: unknown
  try {
    openDatabase(path, options).close()
  } catch (error) {
    caught = error
  }
  expect(caught).toBeInstanceOf(SqliteStoreError)
  const error = caught as SqliteStoreError
  expect(error).toMatchObject({ name: 'SqliteStoreError', code, path })
  expect(error.message).toContain(path)
  return error
}

const siblings = (path: string) =>
  readdirSync(join(path, '..')).filter((name) => name.startsWith(`${path.split('/').pop()}-`))

describe('openDatabase: settings and migrations', () => {
  it('creates a fresh file at the current schema with the durable settings', () => {
    const path = temp.file()
    const db = openDatabase(path)
    expect(pragma(db, 'user_version')).toBe(SCHEMA_VERSION)
    expect(pragma(db, 'journal_mode')).toBe('wal')
    expect(pragma(db, 'synchronous')).toBe(2) // FULL
    expect(pragma(db, 'foreign_keys')).toBe(1)
    expect(pragma(db, 'busy_timeout')).toBe(5000)
    // The integrity check at open runs with a small page cache; the connection gets its own back.
    expect(pragma(db, 'cache_size')).toBe(pragma(new Database(':memory:'), 'cache_size'))
    const tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").all()
    expect(tables).toEqual([
      { name: 'access_group_assignments' },
      { name: 'fleet_credentials' },
      { name: 'fleet_enrolments' },
      { name: 'fleet_flow_modes' },
      { name: 'fleet_flow_variables' },
      { name: 'fleet_installs' },
      { name: 'fleet_instance_flows' },
      { name: 'fleet_instances' },
      { name: 'fleet_reported' },
      { name: 'fleet_rollout_outcomes' },
      { name: 'fleet_rollouts' },
      { name: 'fleet_snapshot_asks' },
      { name: 'fleet_state' },
      { name: 'flow_snapshots' },
      { name: 'known_clients' },
      { name: 'modules' },
      { name: 'node_sets' },
      { name: 'passkeys' },
      { name: 'pending_signins' },
      { name: 'recovery_codes' },
      { name: 'sign_in_key' },
      { name: 'spent_challenges' },
      { name: 'sso_codes' },
      { name: 'sso_logouts' },
      { name: 'sso_names' },
      { name: 'throttle' },
      { name: 'tokens' },
      { name: 'totp_factors' },
      { name: 'trail' },
      { name: 'trail_reporters' },
    ])
    db.close()
  })

  it('switches a new file to write-ahead logging though SQLite refuses the switch at once, as it does to processes switching together', () => {
    /** better-sqlite3, refusing the switch `refusals` times as SQLite refuses a deadlocked one. */
    const refusing =
      (refusals: number): SqliteDriver =>
      (file, { readonly }) => {
        const db = new Database(file, { readonly })
        const prepare = db.prepare.bind(db)
        let left = refusals
        return Object.assign(db, {
          prepare: (sql: string) => {
            if (sql !== 'PRAGMA journal_mode = WAL' || left === 0) return prepare(sql)
            left -= 1
            throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' })
          },
        })
      }
    const db = openDatabase(temp.file(), { driver: refusing(3) })
    expect(pragma(db, 'journal_mode')).toBe('wal')
    expect(pragma(db, 'user_version')).toBe(SCHEMA_VERSION)
    db.close()
    // Refused for longer than the busy timeout: locked, as any other lock held too long.
    const path = temp.file()
    const started = Date.now()
    expect(() => openDatabase(path, { driver: refusing(Number.POSITIVE_INFINITY) })).toThrow(
      expect.objectContaining({
        code: 'locked',
        message: `Cannot open the database ${path}: another process kept it locked for too long (database is locked).`,
      }),
    )
    expect(Date.now() - started).toBeGreaterThanOrEqual(BUSY_TIMEOUT_MS)
  })

  it('brings a version 1 file up to date, keeping its failure counters', async () => {
    const path = schema1File((raw) =>
      raw
        .prepare('INSERT INTO throttle (key, count, reset_at) VALUES (?, ?, ?)')
        .run('user 10.0.0.1 admin', 5, T0 + 60_000),
    )
    const stores = createSqliteStores(path)
    expect(await stores.throttle.begin(ATTEMPT, POLICY, T0)).toEqual({
      outcome: 'throttled',
      retryAt: T0 + 60_000,
    })
    expect(await stores.throttle.begin(ATTEMPT, POLICY, T0 + 60_000)).toEqual({
      outcome: 'proceed',
      known: false,
    })
    await stores.close()
  })

  it('keeps synchronous=FULL for every other write: the throttle relaxes it for its own transactions only', async () => {
    const db = openDatabase(temp.file())
    const mine = createSqliteStores(db)
    expect(await mine.throttle.begin(ATTEMPT, POLICY, T0)).toEqual({ outcome: 'proceed', known: false })
    await mine.throttle.finish(ATTEMPT, 'succeeded', POLICY, T0)
    expect(pragma(db, 'synchronous')).toBe(2)
    db.close()
  })

  it('reopens idempotently: same version, data kept, the file not rewritten', async () => {
    const path = await databaseWith(temp.file(), 3)
    const before = readFileSync(path)
    const db = openDatabase(path)
    migrate(db, path)
    expect(pragma(db, 'user_version')).toBe(SCHEMA_VERSION)
    expect(db.prepare('SELECT count(*) AS n FROM tokens').get()).toEqual({ n: 3 })
    db.close()
    expect(readFileSync(path).equals(before)).toBe(true)
  })

  it('refuses a file written by a newer schema and leaves it byte for byte', async () => {
    const path = await databaseWith(temp.file(), 2)
    const raw = new Database(path)
    raw.pragma(`user_version = ${SCHEMA_VERSION + 1}`)
    raw.close()
    const before = readFileSync(path)
    const error = expectRefused(path, 'newer_schema')
    expect(error.message).toContain(`schema ${SCHEMA_VERSION + 1}`)
    expect(() => createSqliteStores(path)).toThrow(SqliteStoreError)
    expect(readFileSync(path).equals(before)).toBe(true)
    expect(siblings(path)).toEqual([])
  })

  it('refuses a newer schema handed in as an open database, too', async () => {
    const path = await databaseWith(temp.file(), 0)
    const raw = new Database(path)
    raw.pragma(`user_version = ${SCHEMA_VERSION + 5}`)
    expect(() => createSqliteStores(raw)).toThrow(expect.objectContaining({ code: 'newer_schema' }))
    expect(raw.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION + 5)
    raw.close()
  })

  it('upgrades a schema 1 file: its tokens, which carry no credential fingerprint, end; modules stay', async () => {
    const path = schema1File((raw) => {
      raw
        .prepare('INSERT INTO tokens VALUES (?, ?, ?, ?, ?, ?)')
        .run('a'.repeat(64), 'admin', 'service-admin', '["*"]', T0, T0 + 60_000)
      raw.prepare("INSERT INTO modules VALUES ('greeting', '1.0.0')").run()
    })
    const stores = createSqliteStores(path)
    expect(await stores.tokens.findByHash('a'.repeat(64))).toBeNull()
    expect(await stores.modules.find('greeting')).toMatchObject({ version: '1.0.0' })
    await stores.tokens.save(record('h1'))
    expect(await stores.tokens.findById('id-h1')).toEqual(record('h1'))
    await stores.close()
  })

  it('takes a database opened by the caller, migrates it, and leaves it open on close', async () => {
    const raw = new Database(temp.file())
    const db: SqliteDatabase = raw // better-sqlite3's type fits the structural one
    const stores = createSqliteStores(db)
    await stores.tokens.save(record('h1'))
    await stores.close()
    expect(raw.open).toBe(true)
    expect(raw.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION)
    expect(raw.prepare('SELECT hash FROM tokens').all()).toEqual([{ hash: 'h1' }])
    raw.close()
  })

  it('opens read-only: reads work, writes fail, nothing is created', async () => {
    const path = await databaseWith(temp.file(), 1)
    const stores = createSqliteStores(openDatabase(path, { readonly: true }))
    expect(await stores.tokens.findByHash('0'.padStart(64, 'a'))).not.toBeNull()
    await expect(stores.tokens.save(record('h2'))).rejects.toThrow(/readonly/)
    expectRefused(temp.file('absent.db'), 'missing', { readonly: true })
    expect(existsSync(temp.file('absent.db'))).toBe(false)
  })

  it('opens an in-memory database', async () => {
    const stores = createSqliteStores(':memory:')
    await stores.tokens.save(record('h1'))
    expect(await stores.tokens.findByHash('h1')).toEqual(record('h1'))
    await stores.close()
  })
})

describe('openDatabase: broken files are refused and left as they are', () => {
  it('a file that is not a database', () => {
    const path = temp.file('notes.db')
    writeFileSync(path, 'these are my notes, not a database\n')
    const error = expectRefused(path, 'corrupt')
    expect(error.message).toMatch(/not a SQLite database/)
    expect(() => createSqliteStores(path)).toThrow(expect.objectContaining({ code: 'corrupt', path }))
    expect(readFileSync(path, 'utf8')).toBe('these are my notes, not a database\n')
    expect(siblings(path)).toEqual([])
  })

  it('a truncated database', async () => {
    const path = await databaseWith(temp.file(), 800)
    const size = readFileSync(path).length
    expect(size).toBeGreaterThan(8 * 4096)
    truncateSync(path, Math.floor(size / 2))
    const before = readFileSync(path)
    expectRefused(path, 'corrupt')
    expect(readFileSync(path).equals(before)).toBe(true)
    expect(siblings(path)).toEqual([])
  })

  it('a database with a garbled page', async () => {
    const path = await databaseWith(temp.file(), 800)
    const bytes = readFileSync(path)
    const page = 4096 * Math.floor(bytes.length / 4096 / 2)
    bytes.fill(0xa5, page, page + 4096)
    writeFileSync(path, bytes)
    const error = expectRefused(path, 'corrupt')
    expect(error.message).toMatch(/damaged/)
    expect(readFileSync(path).equals(bytes)).toBe(true)
  })

  it('a folder that does not exist, or a path that is a folder', () => {
    expectRefused(join(temp.path, 'no-such-folder', 'flowadmin.db'), 'missing')
    expect(existsSync(join(temp.path, 'no-such-folder'))).toBe(false)
    const folder = join(temp.path, 'a-folder.db')
    mkdirSync(folder)
    expectRefused(folder, 'unreadable')
  })
})

describe('openDatabase: file permissions, as an unprivileged user', () => {
  it('says which file or folder is read-only or unreadable, and creates nothing', async () => {
    const folder = join(temp.path, 'perm')
    const locked = join(folder, 'locked')
    mkdirSync(locked, { recursive: true })
    const writable = await databaseWith(join(folder, 'writable.db'), 1)
    const readOnly = await databaseWith(join(folder, 'read-only.db'), 1)
    const secret = await databaseWith(join(folder, 'secret.db'), 1)
    const inLocked = await databaseWith(join(locked, 'inside.db'), 1)
    chmodSync(temp.path, 0o755)
    chmodSync(folder, 0o777)
    chmodSync(writable, 0o666)
    chmodSync(readOnly, 0o444)
    chmodSync(secret, 0o000)
    chmodSync(inLocked, 0o666)
    chmodSync(locked, 0o555)
    const cases = [
      { path: writable, readonly: false },
      { path: readOnly, readonly: false },
      { path: readOnly, readonly: true },
      { path: secret, readonly: false },
      { path: inLocked, readonly: false },
      { path: join(locked, 'new.db'), readonly: false },
    ]
    const child = spawnSync(process.execPath, [childScript('open-as-user.mjs'), JSON.stringify(cases)], {
      encoding: 'utf8',
    })
    chmodSync(locked, 0o755) // so the folder can be removed afterwards
    expect(child.stderr).toBe('')
    const results = child.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(results).toMatchObject([
      { ok: true, tokens: 1 },
      { ok: false, name: 'SqliteStoreError', code: 'read_only', errorPath: readOnly },
      { ok: true, tokens: 1 },
      { ok: false, code: 'unreadable', errorPath: secret },
      { ok: false, code: 'read_only', errorPath: inLocked },
      { ok: false, code: 'read_only', errorPath: join(locked, 'new.db') },
    ])
    expect(results[0].uid).not.toBe(0) // file modes bind the child, as they bind a service account
    expect(results[1].message).toContain(readOnly)
    expect(results[1].message).toMatch(/read-only/)
    expect(results[4].message).toContain(locked)
    expect(existsSync(join(locked, 'new.db'))).toBe(false)
  })
})
