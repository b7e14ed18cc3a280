import { messageOf } from '@flowadmin/core'
import type { Log } from '../log.js'

/** How often expired tokens and ended throttle windows are deleted. */
export const SWEEP_INTERVAL_MS = 60_000

/** How often the groups' assignments are read again (another flowadmin sharing the store may change them). */
export const GROUP_REFRESH_MS = 5_000

/** Calls `run` every `everyMs` until the returned function is called; `run` settles when the run ends. */
export type Schedule = (run: () => Promise<void>, everyMs: number) => () => void

/** setInterval, not holding the process open. */
const onTimer: Schedule = (run, everyMs) => {
  const timer = setInterval(run, everyMs)
  timer.unref()
  return () => clearInterval(timer)
}

/**
 * Runs `sweep` on `schedule`, never two at once: while the store hangs (an outage waiting out its
 * timeout), an interval that passes finds the sweep before still running and skips, instead of
 * piling another one onto the store. A failure is logged as a warning. Returns what stops it.
 */
export function startSweeper(
  sweep: () => Promise<unknown>,
  log: Log,
  {
    everyMs = SWEEP_INTERVAL_MS,
    schedule = onTimer,
    what = 'expired tokens',
  }: { everyMs?: number; schedule?: Schedule; what?: string } = {},
): () => void {
  let running = false
  return schedule(async () => {
    if (running) return
    running = true
    try {
      await sweep()
    } catch (error) {
      log('warning', `sweeping ${what} failed`, { reason: messageOf(error) })
    } finally {
      running = false
    }
  }, everyMs)
}
