import type { SnapshotStore } from '@flowadmin/core'
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
import type { SqliteDatabase } from './driver.js'
import { createReader } from './reader.js'
import { prepareAll } from './statements.js'
import { createTransaction } from './transaction.js'

/** The statements of the snapshot store. */
export const SNAPSHOT_SQL = {
  // The next version of the name, in the same statement: the write lock keeps racing saves apart.
  create: `INSERT INTO flow_snapshots (${SNAPSHOT_META_COLUMNS}, flows)
           SELECT ?, ?, COALESCE(MAX(version), 0) + 1, ?, ?, ?, ?, ?, ?
           FROM flow_snapshots WHERE name = ?`,
  version: 'SELECT version FROM flow_snapshots WHERE id = ?',
  find: `SELECT ${SNAPSHOT_META_COLUMNS}, flows FROM flow_snapshots WHERE id = ?`,
  list: `SELECT ${SNAPSHOT_META_COLUMNS} FROM flow_snapshots ORDER BY name, version`,
  ask: `INSERT INTO fleet_snapshot_asks (${ASK_COLUMNS}) VALUES (?, ?, ?, ?)
        ON CONFLICT (instance) DO UPDATE SET name = excluded.name, asked_by = excluded.asked_by,
          asked_at = excluded.asked_at`,
  asked: `SELECT ${ASK_COLUMNS} FROM fleet_snapshot_asks WHERE instance = ?`,
  take: 'DELETE FROM fleet_snapshot_asks WHERE instance = ? AND name = ?',
} as const

const SNAPSHOTS = 'flow-snapshots'
const ASKS = 'snapshot-asks'

/** The snapshots of flows; each is written once, in one statement. */
export function createSnapshotStore(db: SqliteDatabase): SnapshotStore {
  const transaction = createTransaction(db)
  const reader = createReader(db)
  const sql = prepareAll(db, SNAPSHOT_SQL)
  const affected = (touched: string) => touched === SNAPSHOTS
  return {
    async create(snapshot) {
      return transaction(() => {
        sql.create.run(...snapshotValues(snapshot), snapshot.name)
        return Number((sql.version.get(snapshot.id) as { version: number | bigint }).version)
      }, [SNAPSHOTS])
    },
    async find(id) {
      return reader(() => {
        const row = sql.find.get(id) as SnapshotRow | undefined
        return row === undefined ? null : snapshotFromRow(row)
      }, affected)
    },
    async list() {
      return reader(() => (sql.list.all() as SnapshotMetaRow[]).map(snapshotMetaFromRow), affected)
    },
    async ask(ask) {
      await transaction(() => sql.ask.run(...askValues(ask)), [ASKS])
    },
    async asked(instance) {
      return reader(
        () => {
          const row = sql.asked.get(instance) as AskRow | undefined
          return row === undefined ? null : askFromRow(row)
        },
        (touched) => touched === ASKS,
      )
    },
    async take(instance, name) {
      return transaction(() => {
        const row = sql.asked.get(instance) as AskRow | undefined
        if (row === undefined || row.name !== name) return null
        sql.take.run(instance, name)
        return askFromRow(row)
      }, [ASKS])
    },
  }
}
