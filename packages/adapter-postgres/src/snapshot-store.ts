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
import { FLEET_CHANNEL } from './fleet-state.js'
import { createHeardCache, type HeardCache } from './heard-cache.js'
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
  // Each change of an ask is announced when it commits (`ask:<instance>`): whoever kept it forgets.
  ask: `WITH changed AS (
          INSERT INTO ${ASKS} (${ASK_COLUMNS}) VALUES ($1, $2, $3, $4)
          ON CONFLICT (instance) DO UPDATE SET name = excluded.name, asked_by = excluded.asked_by,
            asked_at = excluded.asked_at
          RETURNING instance)
        SELECT pg_notify('${FLEET_CHANNEL}', 'ask:' || instance) FROM changed`,
  asked: `SELECT ${ASK_COLUMNS} FROM ${ASKS} WHERE instance = $1`,
  take: `WITH taken AS (DELETE FROM ${ASKS} WHERE instance = $1 AND name = $2 RETURNING ${ASK_COLUMNS})
         SELECT ${ASK_COLUMNS}, pg_notify('${FLEET_CHANNEL}', 'ask:' || instance) FROM taken`,
} as const

// Who made a snapshot, and who asked, are usernames: any text, stored as storedKey writes it.
const storedBy = (by: string | null) => (by === null ? null : storedKey(by))
const byOf = (by: string | null) => (by === null ? null : fromStored(by))
const metaOf = (row: SnapshotMetaRow) => ({ ...snapshotMetaFromRow(row), createdBy: byOf(row.created_by) })
const askOf = (row: AskRow): SnapshotAsk => ({ ...askFromRow(row), by: byOf(row.asked_by) })

/** Tries a save makes before it gives up: each one lost to a racing save of the same name. */
const ATTEMPTS = 50

/** What the store keeps of the asks it read: an instance's ask, or that it has none. */
export type AskCache = HeardCache<SnapshotAsk | null>

/** An ask cache that keeps nothing until its channel is heard (see watchFleet). */
export const createAskCache = (): AskCache =>
  createHeardCache<SnapshotAsk | null>({ copy: (ask) => (ask === null ? null : { ...ask }) })

/**
 * The snapshots of flows, each written once, in one statement; and the asks for an instance's
 * flows, which `cache` answers from memory while the fleet's channel is heard (every instance's
 * polls look for one).
 */
export function createSnapshotStore(db: Database, cache: AskCache = createAskCache()): SnapshotStore {
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
      try {
        await db.query(SNAPSHOT_SQL.ask, askValues({ ...ask, by: storedBy(ask.by) }))
      } finally {
        cache.forget(ask.instance)
      }
    },
    async asked(instance) {
      const kept = cache.get(instance)
      if (kept !== undefined) return kept.value
      const generation = cache.generation
      const row = (await db.query<AskRow>(SNAPSHOT_SQL.asked, [instance])).rows[0]
      const ask = row === undefined ? null : askOf(row)
      cache.keep(instance, ask, generation)
      return ask
    },
    async take(instance, name) {
      try {
        const row = (await db.query<AskRow>(SNAPSHOT_SQL.take, [instance, name])).rows[0]
        return row === undefined ? null : askOf(row)
      } finally {
        cache.forget(instance)
      }
    },
  }
}
