// The lookups every poll of an instance makes (its credential, an ask for its flows) answered from
// memory while the fleet's channel is heard: a change made at either flowadmin instance is seen at
// the other once announced, and nothing is kept without a listening connection.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createPostgresStores, FLEET_LISTENER_NAME, type PostgresStores } from '../src/index.js'
import { connectionsNamed, EMPTY_TABLES, useTestDatabase } from './pg-server.js'

const database = useTestDatabase()

const credential = (instance: string, revokedAt: number | null = null) => ({
  instance,
  resourceServer: 'fleet',
  secretHash: 'a'.repeat(64),
  nextHash: null,
  enrolledAt: 1000,
  enrolledBy: 'admin',
  rotateAsked: false,
  rotatedAt: null,
  revokedAt,
})

/** Writes a credential behind every instance's back: in the database, announcing nothing. */
const insertSilently = (instance: string) =>
  database.current().query(
    `INSERT INTO flowadmin_fleet_credentials (instance, resource_server, secret_hash, next_hash, enrolled_at,
         enrolled_by, rotate_asked, rotated_at, revoked_at) VALUES ($1, 'fleet', $2, NULL, 1000, 'admin', false, NULL, NULL)`,
    [instance, 'b'.repeat(64)],
  )
const deleteAsksSilently = () => database.current().query('DELETE FROM flowadmin_fleet_snapshot_asks')

const quiet = { revision: () => {}, report: () => {}, listening: () => {} }

describe('instance lookups kept in memory while the fleet is heard', () => {
  const open: PostgresStores[] = []
  const openOne = async (watch: boolean) => {
    const stores = await createPostgresStores({ url: database.current().url, pool: 2, timeoutMs: 2000 })
    open.push(stores)
    if (watch) await stores.watchFleet(quiet, { heartbeatMs: 200, retryMs: 50 }).ready
    return stores
  }
  const listeners = () => connectionsNamed(database, FLEET_LISTENER_NAME)
  beforeEach(() => database.current().query(EMPTY_TABLES))
  afterEach(async () => {
    for (const stores of open.splice(0)) await stores.close()
  })

  it('answers a credential lookup from memory, and sees each change another instance announces', async () => {
    const a = await openOne(true)
    const b = await openOne(true)
    expect(await b.enrolments.credential('edge-1')).toBeNull()
    // Kept: a row written without an announcement is not seen.
    await insertSilently('edge-1')
    expect(await b.enrolments.credential('edge-1')).toBeNull()

    // A revocation at A (of an instance B had seen without a credential) reaches B.
    expect(await b.enrolments.credential('edge-2')).toBeNull()
    expect(await a.enrolments.revoke('edge-2', 'fleet', 5000)).toBe(true)
    await vi.waitFor(
      async () => expect(await b.enrolments.credential('edge-2')).toMatchObject({ revokedAt: 5000 }),
      { timeout: 3000, interval: 20 },
    )
    // An enrolment at A.
    expect(await b.enrolments.credential('edge-3')).toBeNull()
    await a.enrolments.saveEnrolment({
      id: 'e1',
      hash: 'c'.repeat(64),
      resourceServer: 'fleet',
      uses: 1,
      left: 1,
      createdAt: 1000,
      expiresAt: 10_000_000,
      instance: null,
      groups: [],
      createdBy: 'admin',
    })
    expect(await a.enrolments.enrol('c'.repeat(64), credential('edge-3'), 100, 2000)).toBe('enrolled')
    await vi.waitFor(
      async () => expect(await b.enrolments.credential('edge-3')).toEqual(credential('edge-3')),
      {
        timeout: 3000,
        interval: 20,
      },
    )
    // A rotation asked at A, then its revocation.
    expect(await a.enrolments.askRotate('edge-3')).toBe(true)
    await vi.waitFor(async () => expect((await b.enrolments.credential('edge-3'))?.rotateAsked).toBe(true), {
      timeout: 3000,
      interval: 20,
    })
    expect(await a.enrolments.revoke('edge-3', 'fleet', 6000)).toBe(true)
    await vi.waitFor(async () => expect((await b.enrolments.credential('edge-3'))?.revokedAt).toBe(6000), {
      timeout: 3000,
      interval: 20,
    })
    // The instance that wrote sees its own change at once.
    expect((await a.enrolments.credential('edge-3'))?.revokedAt).toBe(6000)
  })

  it('answers an ask lookup from memory, and sees each ask and take another instance announces', async () => {
    const a = await openOne(true)
    const b = await openOne(true)
    expect(await b.snapshots.asked('edge-1')).toBeNull()
    const ask = { instance: 'edge-1', name: 'line', by: 'admin', at: 1000 }
    await a.snapshots.ask(ask)
    await vi.waitFor(async () => expect(await b.snapshots.asked('edge-1')).toEqual(ask), {
      timeout: 3000,
      interval: 20,
    })
    // Kept: gone behind everyone's back, still said.
    await deleteAsksSilently()
    expect(await b.snapshots.asked('edge-1')).toEqual(ask)
    // Asked again at A, then taken at A: B follows each.
    await a.snapshots.ask({ ...ask, name: 'press', at: 2000 })
    await vi.waitFor(async () => expect((await b.snapshots.asked('edge-1'))?.name).toBe('press'), {
      timeout: 3000,
      interval: 20,
    })
    expect(await a.snapshots.take('edge-1', 'press')).toMatchObject({ name: 'press' })
    await vi.waitFor(async () => expect(await b.snapshots.asked('edge-1')).toBeNull(), {
      timeout: 3000,
      interval: 20,
    })
  })

  it('keeps nothing without a fleet watch', async () => {
    const b = await openOne(false)
    expect(await b.enrolments.credential('edge-1')).toBeNull()
    await insertSilently('edge-1')
    expect(await b.enrolments.credential('edge-1')).toMatchObject({ instance: 'edge-1' })
  })

  it('reads the database while its listening connection is lost, and keeps again once it is back', async () => {
    const b = await openOne(true)
    expect(await b.snapshots.asked('edge-1')).toBeNull()
    expect(await b.enrolments.credential('edge-1')).toBeNull()
    const [listener] = await listeners()
    await database.current().query('SELECT pg_terminate_backend($1)', [listener])
    await insertSilently('edge-1')
    await database
      .current()
      .query(
        `INSERT INTO flowadmin_fleet_snapshot_asks (instance, name, asked_by, asked_at) VALUES ('edge-1', 'line', NULL, 1)`,
      )
    // Lost, then listening again on a new connection: either way, what was kept is gone.
    await vi.waitFor(
      async () => {
        expect(await b.enrolments.credential('edge-1')).toMatchObject({ instance: 'edge-1' })
        expect(await b.snapshots.asked('edge-1')).toMatchObject({ name: 'line' })
      },
      { timeout: 5000, interval: 20 },
    )
    await vi.waitFor(async () => expect((await listeners()).length).toBe(1), { timeout: 5000, interval: 50 })
    // Heard again: kept again.
    await b.snapshots.asked('edge-1')
    await deleteAsksSilently()
    expect(await b.snapshots.asked('edge-1')).toMatchObject({ name: 'line' })
  })
})
