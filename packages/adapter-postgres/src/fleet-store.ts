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
import type { Database } from './database.js'
import { bumpRevision, FLEET_CHANNEL } from './fleet-state.js'

const TABLE = 'flowadmin_fleet_instances'
/** Pairs of ids and resource servers, as two arrays. */
const PAIRS = 'unnest($1::text[], $2::text[]) AS pairs (id, resource_server)'

/** The statements of the fleet store. */
export const FLEET_SQL = {
  claim: `INSERT INTO ${TABLE} (id, resource_server, seen_at) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING`,
  owner: `SELECT resource_server FROM ${TABLE} WHERE id = $1`,
  claimAll: `INSERT INTO ${TABLE} (id, resource_server, seen_at) SELECT id, resource_server, $3 FROM ${PAIRS}
             ON CONFLICT (id) DO NOTHING`,
  lease: `UPDATE ${TABLE} t SET lease_until = GREATEST(t.lease_until, $3), seen_at = GREATEST(t.seen_at, $4)
          FROM ${PAIRS} WHERE t.id = pairs.id AND t.resource_server = pairs.resource_server`,
  connect: `UPDATE ${TABLE} t SET connected = true FROM ${PAIRS}
            WHERE t.id = pairs.id AND t.resource_server = pairs.resource_server AND NOT t.connected
            RETURNING t.id`,
  disconnect: `UPDATE ${TABLE} SET connected = false, lease_until = LEAST(lease_until, $2)
               WHERE id = $1 AND connected RETURNING id`,
  release: `UPDATE ${TABLE} SET lease_until = LEAST(lease_until, $2) WHERE id = $1`,
  expire: `UPDATE ${TABLE} SET connected = false WHERE connected AND lease_until <= $1
           RETURNING id, resource_server`,
  lockReport: `SELECT resource_server, sequence FROM ${TABLE} WHERE id = $1 FOR UPDATE`,
  save: `UPDATE ${TABLE} SET report = $2::jsonb, sequence = $3, reported_at = $4, seen_at = GREATEST(seen_at, $4)
         WHERE id = $1`,
  // Delivered to every listening instance when the transaction commits.
  announceReport: `SELECT pg_notify('${FLEET_CHANNEL}', 'report:' || $1)`,
  find: `SELECT ${INSTANCE_COLUMNS}, report FROM ${TABLE} WHERE id = $1`,
  reports: `SELECT ${INSTANCE_COLUMNS}, report FROM ${TABLE} WHERE id = ANY($1) ORDER BY id`,
  digests: `SELECT ${INSTANCE_COLUMNS} FROM ${TABLE} ORDER BY id`,
  remove: `DELETE FROM ${TABLE} WHERE id = $1`,
  setInstall: `INSERT INTO flowadmin_fleet_installs (module, action, version, integrity, tarball, at)
               VALUES ($1, $2, $3, $4, $5, $6)
               ON CONFLICT (module) DO UPDATE SET action = excluded.action, version = excluded.version,
                 integrity = excluded.integrity, tarball = excluded.tarball, at = excluded.at`,
  // One statement, so one snapshot: the revision and the installs it counts.
  desired: `SELECT s.revision, s.prune, COALESCE((
              SELECT json_agg(json_build_object('module', module, 'action', action, 'version', version,
                                                'integrity', integrity, 'tarball', tarball, 'at', at)
                              ORDER BY module)
              FROM flowadmin_fleet_installs), '[]') AS installs
            FROM flowadmin_fleet_state s`,
  revision: 'SELECT revision FROM flowadmin_fleet_state',
  setPrune: `WITH changed AS (
               UPDATE flowadmin_fleet_state SET prune = $1, revision = revision + 1 WHERE prune <> $1
               RETURNING revision)
             SELECT pg_notify('${FLEET_CHANNEL}', 'revision:' || revision) FROM changed`,
  note: `INSERT INTO flowadmin_fleet_reported (module, at) SELECT unnest($1::text[]), $2
         ON CONFLICT (module) DO NOTHING RETURNING module`,
} as const

/** The fleet's instances, installs and revision; a change of the desired state is announced on FLEET_CHANNEL. */
export function createFleetStore(db: Database): FleetStore {
  const pairs = (instances: ReadonlyArray<{ id: string; resourceServer: string }>) => {
    // Each id once, in one order, so concurrent batches lock rows alike.
    const unique = new Map(instances.map((instance) => [instance.id, instance.resourceServer]))
    const ids = [...unique.keys()].sort()
    return [ids, ids.map((id) => unique.get(id) as string)]
  }
  return {
    async claim(id, resourceServer, now) {
      await db.query(FLEET_SQL.claim, [id, resourceServer, now])
      const row = (await db.query<{ resource_server: string }>(FLEET_SQL.owner, [id])).rows[0]
      return row?.resource_server === resourceServer
    },
    async touch(instances, until, now) {
      if (instances.length === 0) return []
      const [ids, servers] = pairs(instances)
      return db.transaction(async (client) => {
        await client.query(FLEET_SQL.claimAll, [ids, servers, now])
        await client.query(FLEET_SQL.lease, [ids, servers, until, now])
        return (await client.query<{ id: string }>(FLEET_SQL.connect, [ids, servers])).rows.map(
          (row) => row.id,
        )
      })
    },
    async release(id, now) {
      if (((await db.query(FLEET_SQL.disconnect, [id, now])).rowCount ?? 0) > 0) return true
      await db.query(FLEET_SQL.release, [id, now])
      return false
    },
    async expire(now) {
      const rows = (await db.query<{ id: string; resource_server: string }>(FLEET_SQL.expire, [now])).rows
      return rows
        .map((row) => ({ id: row.id, resourceServer: row.resource_server }))
        .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    },
    async saveReport(id, resourceServer, report, sequence, now) {
      return db.transaction(async (client) => {
        await client.query(FLEET_SQL.claim, [id, resourceServer, now])
        const row = (
          await client.query<{ resource_server: string; sequence: string | null }>(FLEET_SQL.lockReport, [id])
        ).rows[0]
        if (row === undefined || row.resource_server !== resourceServer) return 'conflict'
        const stored = row.sequence === null ? null : Number(row.sequence)
        if (sequence !== null && stored !== null && sequence <= stored) return 'stale'
        await client.query(FLEET_SQL.save, [id, JSON.stringify(report), sequence ?? (stored ?? 0) + 1, now])
        await client.query(FLEET_SQL.announceReport, [id])
        return 'saved'
      })
    },
    async find(id) {
      const row = (await db.query<InstanceRow>(FLEET_SQL.find, [id])).rows[0]
      return row === undefined ? null : instanceFromRow(row)
    },
    async reports(ids) {
      if (ids.length === 0) return []
      return (await db.query<InstanceRow>(FLEET_SQL.reports, [[...ids]])).rows.map(instanceFromRow)
    },
    async digests() {
      return (await db.query<InstanceRow>(FLEET_SQL.digests)).rows.map(digestFromRow)
    },
    async remove(id) {
      return ((await db.query(FLEET_SQL.remove, [id])).rowCount ?? 0) > 0
    },
    async setInstall(entry) {
      await db.transaction(async (client) => {
        await client.query(FLEET_SQL.setInstall, [
          entry.module,
          entry.action,
          entry.version,
          entry.integrity ?? null,
          entry.tarball ?? null,
          entry.at,
        ])
        await bumpRevision(client)
      })
    },
    async desired() {
      const row = (await db.query<FleetStateRow & { installs: InstallRow[] }>(FLEET_SQL.desired)).rows[0]
      if (row === undefined) throw new Error('flowadmin_fleet_state has no row')
      return desiredFromRows(row, row.installs)
    },
    async revision() {
      const row = (await db.query<{ revision: string }>(FLEET_SQL.revision)).rows[0]
      return Number(row?.revision)
    },
    async bump() {
      await bumpRevision(db)
    },
    async setPrune(prune) {
      return ((await db.query(FLEET_SQL.setPrune, [prune])).rowCount ?? 0) > 0
    },
    async noteReported(modules, now) {
      if (modules.length === 0) return []
      const first = new Set(
        (await db.query<{ module: string }>(FLEET_SQL.note, [[...modules], now])).rows.map(
          (row) => row.module,
        ),
      )
      return modules.filter((module) => first.has(module))
    },
  }
}
