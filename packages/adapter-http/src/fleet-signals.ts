import type { Fleet } from '@flowadmin/core'
import { createFleetChanges, type FleetChanges } from './fleet-changes.js'
import { createFleetLeases, type FleetLeases } from './fleet-leases.js'
import { createFleetPulse, type FleetPulse } from './fleet-pulse.js'

/**
 * What fleet mode's routes share in one process: the held polls waiting for a new revision, the
 * answers of changes waiting for the instances' reports, and the instances' leases. The server
 * tells `changes` of revisions and `reports` of reports made at other flowadmin instances.
 */
export interface FleetSignals {
  changes: FleetChanges
  reports: FleetPulse
  leases: FleetLeases
  /** Ends every wait, and writes no more leases. */
  close(): void
}

/** The signals over this core's fleet. */
export function createFleetSignals(fleet: Pick<Fleet, 'revision' | 'touch' | 'release'>): FleetSignals {
  const changes = createFleetChanges(async () => String(await fleet.revision()))
  const reports = createFleetPulse()
  const leases = createFleetLeases(fleet)
  return {
    changes,
    reports,
    leases,
    close() {
      changes.close()
      reports.close()
      leases.close()
    },
  }
}
