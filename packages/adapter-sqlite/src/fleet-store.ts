import type { FleetStore } from '@flowadmin/core'
import { type InstallRow, type InstanceRow, installFromRow, instanceFromRow } from '@flowadmin/store-support'
import type { SqliteDatabase } from './driver.js'
import { createReader } from './reader.js'
import { prepareAll } from './statements.js'
import { createTransaction } from './transaction.js'

/** The statements of the fleet store. */
export const FLEET_SQL = {
  seen: `INSERT INTO fleet_instances (id, resource_server, seen_at) VALUES (?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at
         WHERE fleet_instances.resource_server = excluded.resource_server`,
  save: `INSERT INTO fleet_instances (id, resource_server, seen_at, reported_at, report) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET
           seen_at = excluded.seen_at, reported_at = excluded.reported_at, report = excluded.report
         WHERE fleet_instances.resource_server = excluded.resource_server`,
  find: 'SELECT id, resource_server, seen_at, reported_at, report FROM fleet_instances WHERE id = ?',
  list: 'SELECT id, resource_server, seen_at, reported_at, report FROM fleet_instances ORDER BY id',
  remove: 'DELETE FROM fleet_instances WHERE id = ?',
  setInstall: `INSERT INTO fleet_installs (module, action, version, at) VALUES (?, ?, ?, ?)
               ON CONFLICT (module) DO UPDATE SET action = excluded.action, version = excluded.version,
                 at = excluded.at`,
  installs: 'SELECT module, action, version, at FROM fleet_installs ORDER BY module',
} as const

/** The fleet's instances and installs. A contact (`seen`) is a relaxed change: it is only a time. */
export function createFleetStore(db: SqliteDatabase): FleetStore {
  const transaction = createTransaction(db)
  const reader = createReader(db)
  const sql = prepareAll(db, FLEET_SQL)
  const key = (id: string) => `fleet:${id}`
  const anyFleet = (touched: string) => touched.startsWith('fleet:')
  const findRow = (id: string) => {
    const row = sql.find.get(id) as InstanceRow | undefined
    return row === undefined ? null : instanceFromRow(row)
  }
  return {
    async seen(id, resourceServer, now) {
      return transaction(
        () => {
          return sql.seen.run(id, resourceServer, now).changes > 0 ? findRow(id) : null
        },
        [key(id)],
        'relaxed',
      )
    },
    async saveReport(id, resourceServer, report, now) {
      return transaction(
        () => sql.save.run(id, resourceServer, now, now, JSON.stringify(report)).changes > 0,
        [key(id)],
      )
    },
    async find(id) {
      return reader(
        () => findRow(id),
        (touched) => touched === key(id),
      )
    },
    async list() {
      return reader(() => (sql.list.all() as InstanceRow[]).map(instanceFromRow), anyFleet)
    },
    async remove(id) {
      return transaction(() => sql.remove.run(id).changes > 0, [key(id)])
    },
    async setInstall(entry) {
      await transaction(() => {
        sql.setInstall.run(entry.module, entry.action, entry.version, entry.at)
      }, ['fleet-installs'])
    },
    async installs() {
      return reader(
        () => (sql.installs.all() as InstallRow[]).map(installFromRow),
        (touched) => touched === 'fleet-installs',
      )
    },
  }
}
