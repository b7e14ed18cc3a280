import type { FleetStore } from '@flowadmin/core'
import { type InstallRow, type InstanceRow, installFromRow, instanceFromRow } from '@flowadmin/store-support'
import type { Database } from './database.js'

/** The statements of the fleet store. */
export const FLEET_SQL = {
  seen: `INSERT INTO flowadmin_fleet_instances (id, resource_server, seen_at) VALUES ($1, $2, $3)
         ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at
         WHERE flowadmin_fleet_instances.resource_server = excluded.resource_server
         RETURNING id, resource_server, seen_at, reported_at, report`,
  save: `INSERT INTO flowadmin_fleet_instances (id, resource_server, seen_at, reported_at, report)
         VALUES ($1, $2, $3, $3, $4::jsonb)
         ON CONFLICT (id) DO UPDATE SET
           seen_at = excluded.seen_at, reported_at = excluded.reported_at, report = excluded.report
         WHERE flowadmin_fleet_instances.resource_server = excluded.resource_server`,
  find: 'SELECT id, resource_server, seen_at, reported_at, report FROM flowadmin_fleet_instances WHERE id = $1',
  list: 'SELECT id, resource_server, seen_at, reported_at, report FROM flowadmin_fleet_instances ORDER BY id',
  remove: 'DELETE FROM flowadmin_fleet_instances WHERE id = $1',
  setInstall: `INSERT INTO flowadmin_fleet_installs (module, action, version, at) VALUES ($1, $2, $3, $4)
               ON CONFLICT (module) DO UPDATE SET action = excluded.action, version = excluded.version,
                 at = excluded.at`,
  installs: 'SELECT module, action, version, at FROM flowadmin_fleet_installs ORDER BY module',
} as const

/** The fleet's instances and installs. */
export function createFleetStore(db: Database): FleetStore {
  return {
    async seen(id, resourceServer, now) {
      const rows = (await db.query<InstanceRow>(FLEET_SQL.seen, [id, resourceServer, now])).rows
      return rows[0] === undefined ? null : instanceFromRow(rows[0])
    },
    async saveReport(id, resourceServer, report, now) {
      return (
        ((await db.query(FLEET_SQL.save, [id, resourceServer, now, JSON.stringify(report)])).rowCount ?? 0) >
        0
      )
    },
    async find(id) {
      const row = (await db.query<InstanceRow>(FLEET_SQL.find, [id])).rows[0]
      return row === undefined ? null : instanceFromRow(row)
    },
    async list() {
      return (await db.query<InstanceRow>(FLEET_SQL.list)).rows.map(instanceFromRow)
    },
    async remove(id) {
      return ((await db.query(FLEET_SQL.remove, [id])).rowCount ?? 0) > 0
    },
    async setInstall(entry) {
      await db.query(FLEET_SQL.setInstall, [entry.module, entry.action, entry.version, entry.at])
    },
    async installs() {
      return (await db.query<InstallRow>(FLEET_SQL.installs)).rows.map(installFromRow)
    },
  }
}
