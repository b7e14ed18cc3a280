// The fleet agent's three parts: the poll loop always polls, with a pause between rounds; the
// applier runs beside it (a long install never stops the polls); the watcher reads Node-RED's
// modules every second and its flows every five, at once on its audit events; and reports go only
// when what they say changed.
import { createRequire } from 'node:module'
import { waitFor } from '@flowadmin/testkit'
import { afterEach, describe, expect, test } from 'vitest'
import { desiredState, type FleetInstance, sleep, startFleetInstance } from './fleet-setup.js'

const require = createRequire(import.meta.url)
let fleet: FleetInstance | undefined
afterEach(async () => {
  await fleet?.close()
  fleet = undefined
})

const kit = { name: 'kit', version: '1.0.0', sets: [{ name: 'a', types: ['a'], enabled: true }] }

describe('the poll loop', () => {
  test('pauses 250 to 750 ms between rounds, however fast flowadmin answers', async () => {
    // A flowadmin that holds nothing: every poll is answered at once.
    fleet = await startFleetInstance({ hold: 0 })
    await sleep(3000)
    const polls = fleet.polls()
    expect(polls.length).toBeGreaterThanOrEqual(4)
    expect(polls.length).toBeLessThanOrEqual(13)
    const gaps = polls.slice(1).map((poll, i) => poll.at - (polls[i]?.answeredAt ?? 0))
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(245)
    expect(Math.max(...gaps)).toBeLessThanOrEqual(800)
  })

  test('backs off with full jitter while flowadmin fails: never zero, at most 30 s', () => {
    const { backoff, roundPause } = require('../lib/timing.js') as {
      backoff(failures: number, random?: () => number): number
      roundPause(random?: () => number): number
    }
    expect([0, 0.5, 0.999].map((r) => roundPause(() => r))).toEqual([250, 500, 749])
    expect([1, 2, 3, 6, 30].map((n) => backoff(n, () => 0.999))).toEqual([999, 1998, 3996, 29970, 29970])
    expect(backoff(1, () => 0.5)).toBe(500)
    expect(backoff(5, () => 0)).toBe(250)
  })

  test('asks for the hold flowadmin says it gives', async () => {
    fleet = await startFleetInstance({ hold: 3 })
    await waitFor(
      () => (fleet?.polls().length ?? 0) >= 2,
      () => `polls ${fleet?.polls().length}`,
    )
    expect(fleet.polls().map((poll) => poll.headers.prefer)).toEqual(['wait=25', 'wait=3'])
  })
})

describe('the applier beside the poll loop', () => {
  test('a long install: the polls go on, the report says applying meanwhile, then what it applied', async () => {
    fleet = await startFleetInstance({ hold: 1, installMs: 4000 })
    const instance = fleet
    await waitFor(
      () => instance.reports().length > 0,
      () => 'a first report',
    )
    instance.stub.fleet.setDesired(desiredState('2', { installs: [{ module: 'wave', version: '1.0.0' }] }))
    await waitFor(instance.nodeRed.isInstalling, 'the install to start')
    const installing = Date.now()
    await waitFor(() => !instance.nodeRed.isInstalling(), 'the install to end')
    const polledMeanwhile = instance.polls().filter((poll) => poll.at > installing && poll.at < Date.now())
    expect(polledMeanwhile.length).toBeGreaterThanOrEqual(2)
    await waitFor(
      () => instance.reports().some((report) => report.applied === '2'),
      () => JSON.stringify(instance.reports()),
    )
    const reports = instance.reports()
    expect(reports.map((report) => [report.applied, report.applying])).toEqual([
      ['1', false],
      ['1', true],
      ['2', false],
    ])
    expect(reports[2]?.modules).toEqual([
      {
        name: 'wave',
        version: '1.0.0',
        sets: [{ name: 'wave', types: ['wave'], enabled: true, loaded: true }],
      },
    ])
  }, 30_000)
})

describe('the watcher and the reports', () => {
  test('reports only when something changed, each with a greater sequence; a deploy is read at once', async () => {
    fleet = await startFleetInstance({ hold: 1, modules: [kit] })
    const instance = fleet
    await waitFor(
      () => instance.reports().length > 0,
      () => 'a first report',
    )
    // Quiet: polls and readings go on, no report.
    await sleep(3000)
    expect(instance.polls().length).toBeGreaterThanOrEqual(3)
    expect(instance.reports()).toHaveLength(1)
    expect(instance.reports()[0]).toMatchObject({
      typesInUse: ['tab'],
      applied: '1',
      changes: [],
      reverted: [],
    })
    // A deploy: its audit event has the flows read at once, not at the next five seconds.
    const deployed = Date.now()
    instance.nodeRed.setFlows([
      { id: 't', type: 'tab' },
      { id: 'n', type: 'a' },
    ])
    await waitFor(
      () => instance.reports().length === 2,
      () => JSON.stringify(instance.reports()),
    )
    const reported = instance.stub.fleet.reports.at(-1)?.at ?? 0
    expect(reported - deployed).toBeLessThan(1000)
    const [first, second] = instance.reports()
    expect(second).toMatchObject({ typesInUse: ['a', 'tab'] })
    expect(Number(second?.sequence)).toBeGreaterThan(Number(first?.sequence))
    expect(Number(first?.sequence)).toBeGreaterThan(Date.now() - 60_000)
  }, 30_000)

  test('reads GET /nodes every second and GET /flows every five', async () => {
    fleet = await startFleetInstance({ hold: 15, modules: [kit] })
    const instance = fleet
    await waitFor(
      () => instance.reports().length > 0,
      () => 'a first report',
    )
    const from = instance.nodeRed.calls.length
    await sleep(5500)
    const calls = instance.nodeRed.calls.slice(from)
    const nodes = calls.filter((call) => call === 'GET /nodes').length
    const flows = calls.filter((call) => call === 'GET /flows').length
    expect(nodes).toBeGreaterThanOrEqual(4)
    expect(nodes).toBeLessThanOrEqual(7)
    expect(flows).toBeGreaterThanOrEqual(1)
    expect(flows).toBeLessThanOrEqual(2)
  }, 30_000)
})
