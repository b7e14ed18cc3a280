// The sweeper of expired tokens while the store hangs: one sweep at a time, the next when it ends.
import { createMemoryStores } from '@flowadmin/adapter-memory'
import { storeUnavailable } from '@flowadmin/core'
import { createCoreWithDoubles, createSignal } from '@flowadmin/testkit'
import { describe, expect, it } from 'vitest'
import { type Schedule, startSweeper } from '../src/compose/sweeper.js'
import { logTo } from '../src/log.js'
import { type CapturedLog, captureLog } from './log-capture.js'

const logOf = (log: CapturedLog) => logTo(log.logger)

/** A core whose token store holds every `deleteExpired` until `release()`, counting them. */
function coreWithHangingSweep() {
  const stores = createMemoryStores()
  let calls = 0
  const held = createSignal()
  const { core } = createCoreWithDoubles({
    stores: {
      ...stores,
      tokens: {
        ...stores.tokens,
        async deleteExpired(now, limit) {
          calls++
          await held.given
          return stores.tokens.deleteExpired(now, limit)
        },
      },
    },
    adminAuth: () => ({ users: [] }),
  })
  return { core, calls: () => calls, release: held.give }
}

/** A schedule the test drives: `tick()` is one interval passing. */
function manualSchedule() {
  let run: (() => Promise<void>) | null = null
  let stopped = false
  const schedule: Schedule = (given) => {
    run = given
    return () => {
      stopped = true
    }
  }
  const tick = () => {
    if (run === null) throw new Error('nothing scheduled')
    return run()
  }
  return { schedule, tick, stopped: () => stopped }
}

describe('the expiry sweeper', () => {
  it('never starts a sweep while the one before still runs, however many intervals pass', async () => {
    const { core, calls, release } = coreWithHangingSweep()
    const log = captureLog()
    const { schedule, tick, stopped } = manualSchedule()
    const stop = startSweeper(() => core.sweep(), logOf(log), { schedule })
    const first = tick()
    const skipped = [tick(), tick(), tick()]
    expect(calls()).toBe(1)
    await Promise.all(skipped)

    release()
    await first
    await tick()
    expect(calls()).toBe(2)
    expect(log.said()).toEqual([])
    stop()
    expect(stopped()).toBe(true)
  })

  it('logs a failed sweep as a warning, and the next interval sweeps again', async () => {
    const log = captureLog()
    const { schedule, tick } = manualSchedule()
    let failures = 1
    let sweeps = 0
    startSweeper(
      async () => {
        sweeps++
        if (failures-- > 0) throw storeUnavailable('PostgreSQL cannot be reached: connect ECONNREFUSED', 2)
      },
      logOf(log),
      { schedule },
    )
    await tick()
    await tick()
    expect(sweeps).toBe(2)
    expect(log.entries()).toEqual([
      {
        level: 'warn',
        time: expect.any(String),
        reason: 'PostgreSQL cannot be reached: connect ECONNREFUSED',
        msg: 'sweeping expired tokens failed',
      },
    ])
  })
})
