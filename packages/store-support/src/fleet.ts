import type { FleetInstall, InstanceRecord, InstanceReport } from '@flowadmin/core'
import { type Integer, integerOrNull } from './values.js'

/** An instance as a row; its report as JSON text (SQLite) or an object (PostgreSQL's jsonb). */
export interface InstanceRow {
  id: string
  resource_server: string
  seen_at: Integer
  reported_at: Integer | null
  report: string | InstanceReport | null
}

export const instanceFromRow = (row: InstanceRow): InstanceRecord => ({
  id: row.id,
  resourceServer: row.resource_server,
  seenAt: Number(row.seen_at),
  reportedAt: integerOrNull(row.reported_at),
  report: typeof row.report === 'string' ? (JSON.parse(row.report) as InstanceReport) : row.report,
})

/** A module installed or removed across the fleet, as a row. */
export interface InstallRow {
  module: string
  action: FleetInstall['action']
  version: string | null
  at: Integer
}

export const installFromRow = (row: InstallRow): FleetInstall => ({
  module: row.module,
  action: row.action,
  version: row.version,
  at: Number(row.at),
})
