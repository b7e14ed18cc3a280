import type {
  FleetDesired,
  FleetInstall,
  InstanceDigest,
  InstanceRecord,
  InstanceReport,
} from '@flowadmin/core'
import { booleanOf, type Integer, integerOrNull } from './values.js'

/** The columns of an instance without its report, in the order both dialects name them. */
export const INSTANCE_COLUMNS = 'id, resource_server, seen_at, lease_until, connected, sequence, reported_at'

/** An instance as a row (without `report`: a digest); its report as JSON text (SQLite) or an object (PostgreSQL's jsonb). */
export interface InstanceRow {
  id: string
  resource_server: string
  seen_at: Integer
  lease_until: Integer
  connected: boolean | Integer
  sequence: Integer | null
  reported_at: Integer | null
  report?: string | InstanceReport | null
}

export const digestFromRow = (row: InstanceRow): InstanceDigest => ({
  id: row.id,
  resourceServer: row.resource_server,
  lastSeen: Number(row.seen_at),
  leaseUntil: Number(row.lease_until),
  connected: booleanOf(row.connected),
  sequence: integerOrNull(row.sequence),
  reportedAt: integerOrNull(row.reported_at),
})

export const instanceFromRow = (row: InstanceRow): InstanceRecord => ({
  ...digestFromRow(row),
  report: typeof row.report === 'string' ? (JSON.parse(row.report) as InstanceReport) : (row.report ?? null),
})

/** A module installed or removed across the fleet, as a row. */
export interface InstallRow {
  module: string
  action: FleetInstall['action']
  version: string | null
  /** The tarball flowadmin installed; null in rows written before it was recorded. */
  integrity?: string | null
  tarball?: string | null
  at: Integer
}

export const installFromRow = (row: InstallRow): FleetInstall => ({
  module: row.module,
  action: row.action,
  version: row.version,
  ...(typeof row.integrity === 'string' &&
    typeof row.tarball === 'string' && { integrity: row.integrity, tarball: row.tarball }),
  at: Number(row.at),
})

/** The fleet's state row: its revision and settings. */
export interface FleetStateRow {
  revision: Integer
  prune: boolean | Integer
}

export const desiredFromRows = (state: FleetStateRow, installs: readonly InstallRow[]): FleetDesired => ({
  revision: Number(state.revision),
  prune: booleanOf(state.prune),
  installs: installs.map(installFromRow),
})
