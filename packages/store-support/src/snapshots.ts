// Rows of the snapshots of flows, as SQLite and PostgreSQL give them (numbers may come as bigint or
// text), and their records. The modules are kept as a JSON array, the flows as the JSON text given.
import type { NewSnapshot, SnapshotAsk, SnapshotMeta, SnapshotRecord } from '@flowadmin/core'

/** The columns of a snapshot without its flows, in the order of snapshotValues. */
export const SNAPSHOT_META_COLUMNS = 'id, name, version, modules, nodes, bytes, created_by, created_at'

export interface SnapshotMetaRow {
  id: string
  name: string
  version: number | bigint | string
  modules: string
  nodes: number | bigint | string
  bytes: number | bigint | string
  created_by: string | null
  created_at: number | bigint | string
}

export type SnapshotRow = SnapshotMetaRow & { flows: string }

export const snapshotMetaFromRow = (row: SnapshotMetaRow): SnapshotMeta => ({
  id: row.id,
  name: row.name,
  version: Number(row.version),
  modules: JSON.parse(row.modules) as SnapshotMeta['modules'],
  nodes: Number(row.nodes),
  bytes: Number(row.bytes),
  createdBy: row.created_by,
  createdAt: Number(row.created_at),
})

export const snapshotFromRow = (row: SnapshotRow): SnapshotRecord => ({
  ...snapshotMetaFromRow(row),
  flows: row.flows,
})

/** A new snapshot's values for `id, name, modules, nodes, bytes, created_by, created_at, flows`. */
export const snapshotValues = (snapshot: NewSnapshot): unknown[] => [
  snapshot.id,
  snapshot.name,
  JSON.stringify(snapshot.modules),
  snapshot.nodes,
  snapshot.bytes,
  snapshot.createdBy,
  snapshot.createdAt,
  snapshot.flows,
]

/** The columns of an instance's ask, in the order of askValues. */
export const ASK_COLUMNS = 'instance, name, asked_by, asked_at'

export interface AskRow {
  instance: string
  name: string
  asked_by: string | null
  asked_at: number | bigint | string
}

export const askFromRow = (row: AskRow): SnapshotAsk => ({
  instance: row.instance,
  name: row.name,
  by: row.asked_by,
  at: Number(row.asked_at),
})

export const askValues = (ask: SnapshotAsk): unknown[] => [ask.instance, ask.name, ask.by, ask.at]
