import { createFleetSignals, type FleetSignals } from '@flowadmin/adapter-http'
import type { PostgresStores } from '@flowadmin/adapter-postgres'
import type { Fleet } from '@flowadmin/core'
import type { Log } from '../log.js'
import { startSweeper } from './sweeper.js'

/** How often leases that ran out are expired, and the store's fleet settings compared with these. */
export const FLEET_UPKEEP_MS = 1000

/** Fleet mode, running: the signals the HTTP app shares, and what stops them. */
export interface RunningFleet {
  signals: FleetSignals
  close(): Promise<void>
}

/**
 * Fleet mode's part of the start: this flowadmin's `prune` written to the store when it differs
 * (a warning names both values), the signals of the polls and changes (told on PostgreSQL of
 * revisions and reports at the other flowadmin instances), and every second the leases that ran
 * out expired and the store's settings compared with these (a warning when they start to differ).
 */
export async function startFleet(
  fleet: Fleet,
  postgres: PostgresStores | undefined,
  log: Log,
): Promise<RunningFleet> {
  const warn = (message: string) => log('warning', message)
  const change = await fleet.syncSettings()
  if (change !== null) {
    warn(
      `fleet.prune is ${change.to} now for every flowadmin sharing this store (it was ${change.from}): ` +
        'the last one started with another value decides; give them all the same',
    )
  }
  const signals = createFleetSignals(fleet)
  const watch = postgres?.watchFleet(
    {
      revision: (revision) => signals.changes.notify(String(revision)),
      report: () => signals.reports.notify(),
      // What was announced while no connection listened is lost: everyone looks again.
      listening: () => {
        signals.changes.notify()
        signals.reports.notify()
      },
    },
    { onError: warn },
  )
  await watch?.ready.catch(() => {})
  let agree = true
  const stop = startSweeper(
    async () => {
      await fleet.expire()
      const now = await fleet.settingsAgree()
      if (now === agree) return
      agree = now
      if (!now) {
        warn(
          'fleet.prune in the store is not this flowadmin’s setting: another flowadmin sharing it was started ' +
            'with another value, and the instances act on the store’s; give them all the same',
        )
      }
    },
    log,
    { everyMs: FLEET_UPKEEP_MS, what: 'fleet leases' },
  )
  return {
    signals,
    async close() {
      stop()
      signals.close()
      await watch?.close()
    },
  }
}
