import { tokenRecord } from '@flowadmin/testkit'
import { afterAll, describe, expect, it } from 'vitest'
import { createSqliteStores, openDatabase, type SqliteDatabase } from '../src/index.js'
import { MODULE_SQL } from '../src/module-store.js'
import { THROTTLE_SQL } from '../src/throttle-store.js'
import { TOKEN_SQL } from '../src/token-store.js'
import { TRAIL_SQL } from '../src/trail-store.js'
import { openCore } from './core.js'
import { createTempFolder } from './temp.js'

const temp = createTempFolder()
afterAll(() => temp.remove())

const T0 = Date.UTC(2026, 0, 1)
const WINDOW = 15 * 60_000
const POLICY = {
  pairLimit: 5,
  addressLimit: 20,
  windowMs: WINDOW,
  allowance: 4,
  leaseMs: 30_000,
  knownMs: WINDOW,
}

const count = (db: SqliteDatabase, table: string) =>
  (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n

/** Runs the stores' calls in one caller's transaction, so filling thousands of rows is quick. */
async function inOneTransaction(db: SqliteDatabase, fill: () => Array<Promise<unknown>>) {
  db.exec('BEGIN')
  const pending = fill()
  db.exec('COMMIT')
  await Promise.all(pending)
}

/** A database with `expired` tokens and throttle windows that ended at or before T0, and `live` ones. */
async function filled(expired: number, live: number) {
  const db = openDatabase(temp.file())
  const stores = createSqliteStores(db)
  await inOneTransaction(db, () =>
    Array.from({ length: expired + live }, (_, i) => {
      const over = i < expired
      return Promise.all([
        stores.tokens.save(
          tokenRecord(`${i}`.padStart(64, '0'), {
            username: `user${i % 7}`,
            createdAt: T0 - 10 * WINDOW,
            expiresAt: over ? T0 - (i % 1000) : T0 + 1 + i,
          }),
        ),
        // One counter per attempt: pair and address share a key here.
        stores.throttle.finish(
          {
            pairKey: `addr 10.0.${i >> 8}.${i & 255}`,
            addressKey: `addr 10.0.${i >> 8}.${i & 255}`,
            knownKey: '',
          },
          'failed',
          POLICY,
          over ? T0 - WINDOW - i : T0,
        ),
      ])
    }),
  )
  return { db, stores }
}

describe('sweeping expired tokens and ended throttle windows', () => {
  it('removes them in batches no larger than the limit, and nothing live', async () => {
    const { db, stores } = await filled(2500, 300)
    const batches: number[] = []
    for (let removed = -1; removed !== 0; ) {
      removed = await stores.tokens.deleteExpired(T0, 1000)
      batches.push(removed)
    }
    expect(batches).toEqual([1000, 1000, 500, 0])
    expect(count(db, 'tokens')).toBe(300)

    expect(await stores.throttle.deleteExpired(T0, 1000)).toBe(1000)
    expect(await stores.throttle.deleteExpired(T0, 2000)).toBe(1500)
    expect(await stores.throttle.deleteExpired(T0, 2000)).toBe(0)
    expect(count(db, 'throttle')).toBe(300)
    db.close()
  })

  it('keeps the core sweep bounded however much has piled up', async () => {
    const path = temp.file()
    const seed = await filled(2500, 300)
    seed.db.exec(`VACUUM INTO '${path}'`)
    seed.db.close()
    const { core, stores, clock } = openCore(path)
    clock.set(T0)
    expect(await core.sweep({ batchSize: 400, maxBatches: 3 })).toEqual({
      tokens: 1200,
      throttle: 1200,
      logoutTokens: 0,
      signIns: 0,
      enrolments: 0,
    })
    expect(await core.sweep({ batchSize: 400, maxBatches: 3 })).toEqual({
      tokens: 1200,
      throttle: 1200,
      logoutTokens: 0,
      signIns: 0,
      enrolments: 0,
    })
    expect(await core.sweep({ batchSize: 400, maxBatches: 3 })).toEqual({
      tokens: 100,
      throttle: 100,
      logoutTokens: 0,
      signIns: 0,
      enrolments: 0,
    })
    await stores.close()
  })

  it('finds a bearer token, and sweeps, through an index: no statement scans a whole table', async () => {
    const { db } = await filled(2000, 2000)
    db.exec('ANALYZE')
    const plan = (sql: string) => {
      // Parameter values do not change the plan's shape; every statement gets ones of its kind.
      const named = [...sql.matchAll(/@(\w+)/g)].map((match) => [match[1], 1])
      const args = named.length > 0 ? [Object.fromEntries(named)] : Array(sql.split('?').length - 1).fill(1)
      return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as Array<{ detail: string }>).map(
        (row) => row.detail,
      )
    }
    expect(plan(TOKEN_SQL.findByHash)).toEqual(['SEARCH tokens USING PRIMARY KEY (hash=?)'])
    expect(plan(TOKEN_SQL.listAll)).toEqual(['SCAN tokens USING INDEX tokens_by_creation'])
    // One seek a user in the user index: the start asks this, and must not read every token's entry.
    expect(plan(TOKEN_SQL.usernames)).toContain(
      'SEARCH tokens USING COVERING INDEX tokens_by_user (username>?)',
    )
    expect(plan(TOKEN_SQL.usernames).filter((step) => step.startsWith('SCAN tokens'))).toEqual([])
    expect(plan(TOKEN_SQL.deleteExpired)).toContain(
      'SEARCH tokens USING COVERING INDEX tokens_by_expiry (expires_at<?)',
    )
    expect(plan(THROTTLE_SQL.deleteExpired)).toContain(
      'SEARCH throttle USING COVERING INDEX throttle_by_reset (reset_at<?)',
    )
    expect(plan(THROTTLE_SQL.deleteExpiredKnown)).toContain(
      'SEARCH known_clients USING COVERING INDEX known_clients_by_expiry (expires_at<?)',
    )
    const statements = { ...TOKEN_SQL, ...THROTTLE_SQL, ...MODULE_SQL }
    for (const [name, sql] of Object.entries(statements)) {
      if (sql === MODULE_SQL.list) continue // lists every module: reading them all is its job
      if (sql === TOKEN_SQL.listAll) continue // likewise every token, in the order of an index
      if (sql === TOKEN_SQL.countLive) continue // a metric read at each scrape: counting them all is its job
      if (sql === TOKEN_SQL.usernames) continue // walks its own list of users (SCAN users), checked above
      const scans = plan(sql).filter((step) => step.startsWith('SCAN') && !step.startsWith('SCAN json_each'))
      expect({ name, scans }).toEqual({ name, scans: [] })
    }
    db.close()
  })
})

describe('the trail’s bounds', () => {
  it('delete and count each source’s events through trail_by_reporter: a flood of one never makes another’s slow', async () => {
    const db = openDatabase(temp.file())
    const stores = createSqliteStores(db)
    const entry = (i: number) => ({
      time: 0,
      received: T0 + i,
      reporter: i % 10 === 0 ? null : `reporter-${i % 3}`,
      server: null,
      instance: null,
      actor: null,
      event: 'flows.set',
      outcome: 'success' as const,
      address: null,
      addressReported: false,
      details: {},
    })
    await stores.trail.append(Array.from({ length: 3000 }, (_, i) => entry(i)))
    db.exec('ANALYZE')
    const plan = (sql: string) =>
      (
        db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...Array(sql.split('?').length - 1).fill(1)) as Array<{
          detail: string
        }>
      ).map((row) => row.detail)
    for (const [name, sql] of Object.entries(TRAIL_SQL)) {
      // Walks the reporters, not their events: that is its job.
      if (sql === TRAIL_SQL.reporters) continue
      const scans = plan(sql).filter((step) => step.startsWith('SCAN'))
      expect({ name, scans }).toEqual({ name, scans: [] })
    }
    expect(plan(TRAIL_SQL.deleteBefore).join('\n')).toContain('trail_by_reporter (reporter=? AND received<?)')
    expect(plan(TRAIL_SQL.deleteFirstOwn).join('\n')).toContain('trail_by_reporter (reporter=?)')
    await stores.close()
  })
})
