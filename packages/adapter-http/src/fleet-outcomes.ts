import type { Fleet } from '@flowadmin/core'
import type { FleetPulse } from './fleet-pulse.js'

/**
 * The longest a change's answer waits without a report's notice before it looks at the outcomes
 * again (a report saved at another flowadmin sharing a SQLite file, a lease that ran out).
 */
const FALLBACK_MS = 1000
/** After a report's notice, how long a change's answer lets others come before it looks: one look for many. */
const BATCH_MS = 20

/**
 * Waits, up to the fleet's `answerWaitMs`, until every connected instance that has `module` (or
 * is to install it) applied or refused the change just made: it looks at that module only, when
 * reports were saved (those of BATCH_MS at once), and at least every FALLBACK_MS. Ends early when
 * `signal` aborts (the caller went away).
 */
export async function awaitOutcomes(
  fleet: Pick<Fleet, 'answerWaitMs' | 'settled'>,
  reports: FleetPulse,
  module: string,
  signal: AbortSignal,
): Promise<void> {
  if (fleet.answerWaitMs <= 0) return
  const deadline = Date.now() + fleet.answerWaitMs
  for (;;) {
    const since = reports.generation()
    if (await fleet.settled(module)) return
    const left = deadline - Date.now()
    if (left <= 0 || signal.aborted) return
    const news = await reports.next(since, Math.min(left, FALLBACK_MS), signal)
    if (news) await new Promise((resolve) => setTimeout(resolve, Math.min(BATCH_MS, left)))
  }
}
