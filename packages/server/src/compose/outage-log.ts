import { messageOf } from '@flowadmin/core'
import type { Log } from '../log.js'

/** How often at most an outage of the store is logged while requests keep meeting it. */
const OUTAGE_LOG_INTERVAL_MS = 10_000

/** Logs an unreachable store once per interval, however many requests meet it. */
export function createOutageLog(log: Log): (error: unknown) => void {
  let last = Number.NEGATIVE_INFINITY
  let missed = 0
  return (error) => {
    const now = Date.now()
    if (now - last < OUTAGE_LOG_INTERVAL_MS) {
      missed++
      return
    }
    // `missed`: requests answered 503 since the last report.
    log('warning', 'the store cannot be reached, requests answer 503', { reason: messageOf(error), missed })
    last = now
    missed = 0
  }
}
