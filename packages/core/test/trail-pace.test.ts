// How fast a reporter may add events to the trail: its allowance in the store, a refusal noted so
// that a reporter told to wait is refused before its report is read.
import { createMemoryStores } from '@flowadmin/adapter-memory'
import { createCoreWithDoubles } from '@flowadmin/testkit'
import { describe, expect, it } from 'vitest'
import { createReporterPace } from '../src/trail/pace.js'
import { DEFAULT_TRAIL_OPTIONS, type TrailReport } from '../src/trail/trail.js'

const ADDRESS = '10.0.0.7'
const FLEET = { id: 'fleet', secret: 'fleet-secret' }

const reports = (n: number): TrailReport[] =>
  Array.from({ length: n }, (_, i) => ({
    time: 0,
    instance: 'line-1',
    actor: null,
    event: 'flows.set',
    address: null,
    details: { i },
  }))

describe('a reporter’s pace', () => {
  it('costs each event a share of a minute, a minute’s worth at most', () => {
    const pace = createReporterPace(600)
    expect(pace.of(1)).toEqual({ costMs: 100, burstMs: 60_000 })
    expect(pace.of(600)).toEqual({ costMs: 60_000, burstMs: 60_000 })
    expect(pace.of(5000)).toEqual({ costMs: 60_000, burstMs: 60_000 })
    for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => createReporterPace(bad)).toThrow(RangeError)
  })

  it('remembers a refusal until its time, in whole seconds', () => {
    const pace = createReporterPace(600)
    expect(pace.waitOf('fleet', 0)).toBeNull()
    expect(pace.refused('fleet', 40_001, 0)).toBe(41)
    expect(pace.waitOf('fleet', 38_999)).toBe(2)
    expect(pace.waitOf('edge', 39_999)).toBeNull()
    expect(pace.waitOf('fleet', 40_001)).toBeNull()
    expect(pace.refused('fleet', 5, 10)).toBe(1)
  })
})

describe('reports through the core', () => {
  function world() {
    return createCoreWithDoubles({
      stores: createMemoryStores(),
      adminAuth: (hasher) => ({ resourceServers: [{ id: 'fleet', secret: hasher.hash(FLEET.secret) }] }),
      trail: { ...DEFAULT_TRAIL_OPTIONS, reportedPerMinute: 600 },
    })
  }
  const report = async (core: ReturnType<typeof world>['core'], n: number) => {
    const reporter = await core.reporter(FLEET, ADDRESS)
    return reporter.ok ? reporter.value.report(reports(n)) : reporter
  }

  it('keeps what the allowance takes, refuses the rest whole, and refuses at once until the wait is over', async () => {
    const { core, clock, stores } = world()
    expect(await report(core, 500)).toEqual({ ok: true, value: 500 })
    // 500 more would run 40 s past the minute's burst: nothing of them is kept.
    expect(await report(core, 500)).toEqual({ ok: false, error: { code: 'too_many_events', retryAfter: 40 } })
    expect(await stores.trail.search({}, 1000, null)).toHaveLength(500)
    // Told to wait, it is refused before its report is read, however small.
    clock.advance(30_000)
    expect(await core.reporter(FLEET, ADDRESS)).toEqual({
      ok: false,
      error: { code: 'too_many_events', retryAfter: 10 },
    })
    clock.advance(10_000)
    expect(await report(core, 500)).toEqual({ ok: true, value: 500 })
    // Each event is received now, by flowadmin's clock, and counts in its resource server's budget.
    const [last] = await stores.trail.search({}, 1, null)
    expect(last).toMatchObject({ time: 0, received: clock.now(), reporter: 'fleet', server: 'fleet' })
    // Credentials first: a wrong secret is refused as such, waiting or not.
    expect(await core.reporter({ id: 'fleet', secret: 'wrong' }, ADDRESS)).toEqual({
      ok: false,
      error: { code: 'invalid_client' },
    })
  })
})
