import type { SnapshotAsk, SnapshotStore } from '@flowadmin/core'
import {
  ASK_COLUMNS,
  type AskRow,
  askFromRow,
  askValues,
  SNAPSHOT_META_COLUMNS,
  type SnapshotMetaRow,
  type SnapshotRow,
  snapshotFromRow,
  snapshotMetaFromRow,
  snapshotValues,
} from '@flowadmin/store-support'
import type { Database } from './database.js'
import { fromStored, storedKey } from './stored-text.js'

const SNAPSHOTS = 'flowadmin_flow_snapshots'
const ASKS = 'flowadmin_fleet_snapshot_asks'

/** The statements of the snapshot store. */
export const SNAPSHOT_SQL = {
  // The next version of the name; a racing save that took it first leaves this one with no row.
  create: `INSERT INTO ${SNAPSHOTS} (${SNAPSHOT_META_COLUMNS}, flows)
           SELECT $1::text, $2::text, COALESCE(MAX(version), 0) + 1, $3::text, $4::integer, $5::integer,
             $6::text, $7::bigint, $8::text
           FROM ${SNAPSHOTS} WHERE name = $2::text
           ON CONFLICT (name, version) DO NOTHING
           RETURNING version`,
  find: `SELECT ${SNAPSHOT_META_COLUMNS}, flows FROM ${SNAPSHOTS} WHERE id = $1`,
  // Byte order, as the other stores sort: the database's collation would not.
  list: `SELECT ${SNAPSHOT_META_COLUMNS} FROM ${SNAPSHOTS} ORDER BY name COLLATE "C", version`,
  ask: `INSERT INTO ${ASKS} (${ASK_COLUMNS}) VALUES ($1, $2, $3, $4)
        ON CONFLICT (instance) DO UPDATE SET name = excluded.name, asked_by = excluded.asked_by,
          asked_at = excluded.asked_at`,
  asked: `SELECT ${ASK_COLUMNS} FROM ${ASKS} WHERE instance = $1`,
  take: `DELETE FROM ${ASKS} WHERE instance = $1 AND name = $2 RETURNING ${ASK_COLUMNS}`,
} as const

// Who made a snapshot, and who asked, are usernames: any text, stored as storedKey writes it.
const storedBy = (by: string | null) => (by === null ? null : storedKey(by))
const byOf = (by: string | null) => (by === null ? null : fromStored(by))
const metaOf = (row: SnapshotMetaRow) => ({ ...snapshotMetaFromRow(row), createdBy: byOf(row.created_by) })
const askOf = (row: AskRow): SnapshotAsk => ({ ...askFromRow(row), by: byOf(row.asked_by) })

/** Tries a save makes before it gives up: each one lost to a racing save of the same name. */
const ATTEMPTS = 50

/** The snapshots of flows; each is written once, in one statement. */
export function createSnapshotStore(db: Database): SnapshotStore {
  return {
    async create(snapshot) {
      for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
        const saved = await db.query<{ version: number }>(
          SNAPSHOT_SQL.create,
          snapshotValues({ ...snapshot, createdBy: storedBy(snapshot.createdBy) }),
        )
        const row = saved.rows[0]
        if (row !== undefined) return Number(row.version)
      }
      throw new Error(`snapshot ${snapshot.name}: every version it tried was taken by a racing save`)
    },
    async find(id) {
      const row = (await db.query<SnapshotRow>(SNAPSHOT_SQL.find, [id])).rows[0]
      return row === undefined ? null : { ...snapshotFromRow(row), createdBy: byOf(row.created_by) }
    },
    async list() {
      return (await db.query<SnapshotMetaRow>(SNAPSHOT_SQL.list)).rows.map(metaOf)
    },
    async ask(ask) {
      await db.query(SNAPSHOT_SQL.ask, askValues({ ...ask, by: storedBy(ask.by) }))
    },
    async asked(instance) {
      const row = (await db.query<AskRow>(SNAPSHOT_SQL.asked, [instance])).rows[0]
      return row === undefined ? null : askOf(row)
    },
    async take(instance, name) {
      const row = (await db.query<AskRow>(SNAPSHOT_SQL.take, [instance, name])).rows[0]
      return row === undefined ? null : askOf(row)
    },
  }
}
