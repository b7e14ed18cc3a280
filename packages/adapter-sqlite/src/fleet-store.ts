import type { FleetStore } from '@flowadmin/core'
import {
  desiredFromRows,
  digestFromRow,
  type FleetStateRow,
  INSTANCE_COLUMNS,
  type InstallRow,
  type InstanceRow,
  instanceFromRow,
} from '@flowadmin/store-support'
import type { SqliteDatabase } from './driver.js'
import { FLEET_STATE_KEY, prepareBump } from './fleet-state.js'
import { createReader } from './reader.js'
import { prepareAll } from './statements.js'
import { createTransaction } from './transaction.js'

/** The statements of the fleet store. */
export const FLEET_SQL = {
  claim: `INSERT INTO fleet_instances (id, resource_server, seen_at) VALUES (?, ?, ?)
          ON CONFLICT (id) DO NOTHING`,
  owner: 'SELECT resource_server, connected, sequence FROM fleet_instances WHERE id = ?',
  lease: `UPDATE fleet_instances SET lease_until = max(lease_until, ?), seen_at = max(seen_at, ?), connected = 1
          WHERE id = ?`,
  release: 'UPDATE fleet_instances SET lease_until = min(lease_until, ?), connected = 0 WHERE id = ?',
  expire: `UPDATE fleet_instances SET connected = 0 WHERE connected = 1 AND lease_until <= ?
           RETURNING id, resource_server`,
  save: `UPDATE fleet_instances SET report = ?, sequence = ?, reported_at = ?, seen_at = max(seen_at, ?)
         WHERE id = ?`,
  find: `SELECT ${INSTANCE_COLUMNS}, report FROM fleet_instances WHERE id = ?`,
  // The ids arrive as one JSON array, so any number of them is one statement.
  reports: `SELECT ${INSTANCE_COLUMNS}, report FROM fleet_instances
            WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id`,
  digests: `SELECT ${INSTANCE_COLUMNS} FROM fleet_instances ORDER BY id`,
  remove: 'DELETE FROM fleet_instances WHERE id = ?',
  setInstall: `INSERT INTO fleet_installs (module, action, version, integrity, tarball, at)
               VALUES (?, ?, ?, ?, ?, ?)
               ON CONFLICT (module) DO UPDATE SET action = excluded.action, version = excluded.version,
                 integrity = excluded.integrity, tarball = excluded.tarball, at = excluded.at`,
  installs: 'SELECT module, action, version, integrity, tarball, at FROM fleet_installs ORDER BY module',
  state: 'SELECT revision, prune FROM fleet_state',
  setPrune: 'UPDATE fleet_state SET prune = ?, revision = revision + 1 WHERE prune <> ?',
  note: 'INSERT INTO fleet_reported (module, at) VALUES (?, ?) ON CONFLICT (module) DO NOTHING',
} as const

type Owner = { resource_server: string; connected: number | bigint; sequence: number | bigint | null }

/**
 * The fleet's instances, installs and revision. Leases are relaxed changes (a lease lost to a
 * power cut is taken again at the next poll); reports and the desired state are durable.
 */
export function createFleetStore(db: SqliteDatabase): FleetStore {
  const transaction = createTransaction(db)
  const reader = createReader(db)
  const sql = prepareAll(db, FLEET_SQL)
  const bump = prepareBump(db)
  const key = (id: string) => `fleet:${id}`
  const anyFleet = (touched: string) => touched.startsWith('fleet:')
  const stateOrInstalls = (touched: string) => touched === FLEET_STATE_KEY || touched === 'fleet-installs'
  /** The instance's owner and lease state, after creating it as `resourceServer`'s when unknown. */
  const own = (id: string, resourceServer: string, now: number): Owner | null => {
    sql.claim.run(id, resourceServer, now)
    const owner = sql.owner.get(id) as Owner
    return owner.resource_server === resourceServer ? owner : null
  }
  const state = () => sql.state.get() as FleetStateRow
  return {
    async claim(id, resourceServer, now) {
      return transaction(() => own(id, resourceServer, now) !== null, [key(id)])
    },
    async touch(instances, until, now) {
      return transaction(
        () => {
          const connected: string[] = []
          for (const { id, resourceServer } of instances) {
            const owner = own(id, resourceServer, now)
            if (owner === null) continue
            if (Number(owner.connected) === 0 && !connected.includes(id)) connected.push(id)
            sql.lease.run(until, now, id)
          }
          return connected
        },
        instances.map(({ id }) => key(id)),
        'relaxed',
      )
    },
    async release(id, now) {
      return transaction(
        () => {
          const owner = sql.owner.get(id) as Owner | undefined
          if (owner === undefined) return false
          sql.release.run(now, id)
          return Number(owner.connected) === 1
        },
        [key(id)],
        'relaxed',
      )
    },
    async expire(now) {
      // The ids are known once it ran: every reader waits for it.
      return transaction(
        () =>
          (sql.expire.all(now) as Array<{ id: string; resource_server: string }>)
            .map((row) => ({ id: row.id, resourceServer: row.resource_server }))
            .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
        undefined,
        'relaxed',
      )
    },
    async saveReport(id, resourceServer, report, sequence, now) {
      return transaction(() => {
        const owner = own(id, resourceServer, now)
        if (owner === null) return 'conflict'
        const stored = owner.sequence === null ? null : Number(owner.sequence)
        if (sequence !== null && stored !== null && sequence <= stored) return 'stale'
        sql.save.run(JSON.stringify(report), sequence ?? (stored ?? 0) + 1, now, now, id)
        return 'saved'
      }, [key(id)])
    },
    async find(id) {
      return reader(
        () => {
          const row = sql.find.get(id) as InstanceRow | undefined
          return row === undefined ? null : instanceFromRow(row)
        },
        (touched) => touched === key(id),
      )
    },
    async reports(ids) {
      return reader(
        () => (sql.reports.all(JSON.stringify(ids)) as InstanceRow[]).map(instanceFromRow),
        anyFleet,
      )
    },
    async digests() {
      return reader(() => (sql.digests.all() as InstanceRow[]).map(digestFromRow), anyFleet)
    },
    async remove(id) {
      return transaction(() => sql.remove.run(id).changes > 0, [key(id)])
    },
    async setInstall(entry) {
      await transaction(() => {
        sql.setInstall.run(
          entry.module,
          entry.action,
          entry.version,
          entry.integrity ?? null,
          entry.tarball ?? null,
          entry.at,
        )
        bump.run()
      }, ['fleet-installs', FLEET_STATE_KEY])
    },
    async desired() {
      return reader(() => desiredFromRows(state(), sql.installs.all() as InstallRow[]), stateOrInstalls)
    },
    async revision() {
      return reader(
        () => Number(state().revision),
        (touched) => touched === FLEET_STATE_KEY,
      )
    },
    async bump() {
      transaction(() => {
        bump.run()
      }, [FLEET_STATE_KEY])
    },
    async setPrune(prune) {
      const flag = prune ? 1 : 0
      return transaction(() => sql.setPrune.run(flag, flag).changes > 0, [FLEET_STATE_KEY])
    },
    async noteReported(modules, now) {
      return transaction(
        () => modules.filter((module) => sql.note.run(module, now).changes > 0),
        ['fleet-reported'],
      )
    },
  }
}
