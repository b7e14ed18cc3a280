// Fleet mode on two flowadmin instances sharing one database: each hears the other's revisions
// and reports at once, and an instance's connection and disconnection are each told once.
import { createCoreWithDoubles, instanceReport } from '@flowadmin/testkit'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createPostgresStores, type PostgresStores } from '../src/index.js'
import { EMPTY_TABLES, useTestDatabase } from './pg-server.js'

const database = useTestDatabase()

describe('fleet mode on two instances sharing one database', () => {
  const open: PostgresStores[] = []
  const openOne = async () => {
    const stores = await createPostgresStores({ url: database.current().url, pool: 4 })
    open.push(stores)
    const world = createCoreWithDoubles({ stores, adminAuth: () => null, fleet: { holdSeconds: 15 } })
    return { ...world, stores, fleet: world.core.fleet as NonNullable<typeof world.core.fleet> }
  }
  let a: Awaited<ReturnType<typeof openOne>>
  let b: Awaited<ReturnType<typeof openOne>>
  beforeEach(async () => {
    a = await openOne()
    await database.current().query(EMPTY_TABLES)
    b = await openOne()
  })
  afterEach(async () => {
    for (const stores of open.splice(0)) await stores.close()
  })

  it('B hears each revision A makes and each report A saves, by the announcement alone', async () => {
    const heard: string[] = []
    const watch = b.stores.watchFleet({
      revision: (revision) => heard.push(`revision ${revision}`),
      report: (id) => heard.push(`report ${id}`),
      listening: () => heard.push('listening'),
    })
    await watch.ready
    await a.stores.modules.upsert({ name: 'kit', version: '1.0.0', sets: [{ name: 's', types: ['s'] }] })
    const revision = await a.stores.fleet.revision()
    expect(await a.fleet.report('edge-1', 'fleet', instanceReport(), 1, null)).toEqual({
      ok: true,
      value: 'saved',
    })
    await a.stores.modules.setEnabled('kit', ['s'], false)
    await vi.waitFor(
      () =>
        expect(heard).toEqual([
          'listening',
          `revision ${revision}`,
          'report edge-1',
          `revision ${revision + 1}`,
        ]),
      {
        timeout: 2000,
        interval: 10,
      },
    )
    // B answers with what A wrote.
    expect((await b.fleet.desired()).version).toBe(String(revision + 1))
  })

  it('an instance’s connection and disconnection are each one event, whichever instance sees them', async () => {
    const edge = [{ id: 'edge-1', resourceServer: 'fleet' }]
    await Promise.all([a.fleet.touch(edge), b.fleet.touch(edge), a.fleet.touch(edge), b.fleet.touch(edge)])
    a.clock.advance(26_000)
    b.clock.advance(26_000)
    await Promise.all([a.fleet.expire(), b.fleet.expire(), a.fleet.expire(), b.fleet.expire()])
    const types = [...a.events.events, ...b.events.events].map((event) => event.type)
    expect(types.sort()).toEqual(['fleet.connected', 'fleet.disconnected'])
  })

  it('a report older than the one another instance saved changes nothing', async () => {
    expect(await a.fleet.report('edge-1', 'fleet', instanceReport({ applied: '9' }), 9, null)).toEqual({
      ok: true,
      value: 'saved',
    })
    expect(await b.fleet.report('edge-1', 'fleet', instanceReport({ applied: '8' }), 8, null)).toEqual({
      ok: true,
      value: 'stale',
    })
    expect((await b.fleet.instances())[0]?.applied).toBe('9')
  })

  it('a group assignment at A is one revision B hears; one whose bump fails is not kept', async () => {
    const heard: number[] = []
    const watch = b.stores.watchFleet({
      revision: (r) => heard.push(r),
      report: () => {},
      listening: () => {},
    })
    await watch.ready
    const revision = await a.stores.fleet.revision()
    const assignment = { group: 'line-1', instance: 'press-1', by: 'admin', at: 1 }
    expect(await a.stores.groups.assign(assignment)).toBe(true)
    await vi.waitFor(() => expect(heard).toEqual([revision + 1]), { timeout: 2000, interval: 10 })

    const db = database.current()
    await db.query(`CREATE FUNCTION refuse_bump() RETURNS trigger LANGUAGE plpgsql AS
      $$ BEGIN RAISE EXCEPTION 'revision refused'; END $$`)
    await db.query(`CREATE TRIGGER refuse_bump BEFORE UPDATE ON flowadmin_fleet_state
      FOR EACH ROW EXECUTE FUNCTION refuse_bump()`)
    try {
      await expect(a.stores.groups.unassign('line-1', 'press-1')).rejects.toThrow()
      await expect(a.stores.groups.assign({ ...assignment, group: 'line-2' })).rejects.toThrow()
    } finally {
      await db.query('DROP TRIGGER refuse_bump ON flowadmin_fleet_state; DROP FUNCTION refuse_bump()')
    }
    expect(await b.stores.groups.assignments()).toEqual([assignment])
    expect(await b.stores.fleet.revision()).toBe(revision + 1)
    expect(heard).toEqual([revision + 1])
  })
})
