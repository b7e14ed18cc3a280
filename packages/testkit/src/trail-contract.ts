import type { TrailEvent, TrailFilter, TrailStore } from '@flowadmin/core'
import { describe, expect, it } from 'vitest'
import { type ContractPart, T0 } from './contract-part.js'
import { trailPaceTests, trailRetentionTests } from './trail-bounds-contract.js'
import { ownEntry, trailEntry } from './trail-entries.js'

const SECOND = 1000

/** Every match of `filter`, newest first, read in pages of `size`. */
async function everything(store: TrailStore, filter: TrailFilter, size: number): Promise<TrailEvent[]> {
  const all: TrailEvent[] = []
  let after: TrailEvent | null = null
  for (;;) {
    const page: TrailEvent[] = await store.search(filter, size, after)
    all.push(...page)
    if (page.length < size) return all
    after = page.at(-1) as TrailEvent
  }
}

const stripSeq = ({ seq: _, ...entry }: TrailEvent) => entry

/** The trail store's part of the store contract. */
export const describeTrailContract: ContractPart = (stores, twoConnections) => {
  describe('trail', () => {
    const trail = () => stores().trail
    const other = async () => (await twoConnections())(1).trail
    trailTests(trail, other)
    trailRetentionTests(trail)
    trailPaceTests(trail, async () => {
      const racing = await twoConnections()
      return (i: number) => racing(i).trail
    })
  })
}

/** The trail's tests: `stores()` is the fresh store of the running test, `other()` a second connection to it. */
function trailTests(stores: () => TrailStore, other: () => Promise<TrailStore>): void {
  it('keeps every field of an event as appended, nested details and all', async () => {
    const own = ownEntry({ actor: null, address: null, details: {} })
    const reported = trailEntry({
      time: T0 + 1,
      received: T0 + 2,
      reporter: 'ü \\ \u0000 🙂',
      details: { type: 'full', nested: { list: [1, 'two', null, true], text: 'ü 🙂 "quoted"' } },
    })
    // Claimed times far from their receipt, both ways.
    const early = trailEntry({ time: 0, received: T0 + 3 })
    const late = trailEntry({ time: Date.UTC(2100, 0, 1), received: T0 + 4 })
    await stores().append([own, reported, early, late])
    const found = await stores().search({}, 10, null)
    expect(found.map(stripSeq)).toEqual([late, early, reported, own])
    expect(found[0]?.seq).toBeGreaterThan(found[1]?.seq as number)
  })

  it('answers the last taken first, whatever time the events report', async () => {
    await stores().append([trailEntry({ time: T0 + 5 * SECOND, event: 'late' })])
    await stores().append([
      trailEntry({ time: T0, event: 'first' }),
      trailEntry({ time: T0 + 99 * SECOND, event: 'future' }),
      trailEntry({ time: T0, event: 'second' }),
    ])
    const found = await stores().search({}, 10, null)
    expect(found.map((event) => event.event)).toEqual(['second', 'future', 'first', 'late'])
  })

  it('filters by source, actor, event prefix, outcome and time, each alone and together', async () => {
    await stores().append([
      ownEntry({ actor: 'alice', event: 'login.succeeded', outcome: 'success' }),
      trailEntry({ instance: 'line-1', actor: 'alice', event: 'flows.set', time: T0 + 1 * SECOND }),
      trailEntry({ instance: 'line-2', actor: 'bob', event: 'flows.set', time: T0 + 2 * SECOND }),
      trailEntry({
        server: 'edge',
        instance: 'line-1',
        actor: 'bob',
        event: 'nodes.install',
        time: T0 + 3 * SECOND,
      }),
      trailEntry({
        instance: 'line-2',
        actor: 'mallory',
        event: 'auth.login.fail.credentials',
        outcome: 'failure',
        time: T0 + 4 * SECOND,
      }),
      trailEntry({ instance: 'line-1', actor: 'alice', event: 'Flows.setX', time: T0 + 5 * SECOND }),
      trailEntry({ instance: 'line-1', actor: 'alice', event: 'flows_set', time: T0 + 6 * SECOND }),
    ])
    const events = async (filter: TrailFilter) =>
      (await stores().search(filter, 100, null)).map((event) => `${event.actor} ${event.event}`)
    expect(await events({ source: { server: null } })).toEqual(['alice login.succeeded'])
    expect(await events({ source: { server: 'edge' } })).toEqual(['bob nodes.install'])
    expect(await events({ source: { server: 'node-red', instance: 'line-2' } })).toEqual([
      'mallory auth.login.fail.credentials',
      'bob flows.set',
    ])
    expect(await events({ actor: 'bob' })).toEqual(['bob nodes.install', 'bob flows.set'])
    // A prefix is literal and case-sensitive: `_` and `%` are no wildcards, `Flows.` is not `flows.`.
    expect(await events({ eventPrefix: 'flows.' })).toEqual(['bob flows.set', 'alice flows.set'])
    expect(await events({ eventPrefix: 'flows_' })).toEqual(['alice flows_set'])
    expect(await events({ eventPrefix: 'flows%' })).toEqual([])
    expect(await events({ outcome: 'failure' })).toEqual(['mallory auth.login.fail.credentials'])
    // since is inclusive, until exclusive.
    expect(await events({ since: T0 + 2 * SECOND, until: T0 + 4 * SECOND })).toEqual([
      'bob nodes.install',
      'bob flows.set',
    ])
    // Every event here was received at T0, whatever it claims.
    expect(await events({ receivedSince: T0 + 1, outcome: 'failure' })).toEqual([])
    expect(await events({ receivedSince: T0, receivedUntil: T0 + 1, outcome: 'failure' })).toEqual([
      'mallory auth.login.fail.credentials',
    ])
    expect(
      await events({
        actor: 'alice',
        eventPrefix: 'flows',
        source: { server: 'node-red', instance: 'line-1' },
      }),
    ).toEqual(['alice flows_set', 'alice flows.set'])
  })

  it('pages through every match once, in the order taken, ties in time included', async () => {
    const entries = Array.from({ length: 25 }, (_, i) =>
      trailEntry({
        time: T0 + Math.floor(i / 4) * SECOND,
        actor: i % 2 === 0 ? 'even' : 'odd',
        details: { i },
      }),
    )
    await stores().append(entries)
    const all = await everything(stores(), {}, 7)
    expect(all).toHaveLength(25)
    expect(new Set(all.map((event) => event.details.i)).size).toBe(25)
    expect(all.map((event) => event.details.i)).toEqual([...entries.keys()].reverse())
    const even = await everything(stores(), { actor: 'even' }, 4)
    expect(even.map((event) => event.details.i)).toEqual([24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0])
  })

  it('shows what another connection appended, and keeps both connections’ batches', async () => {
    const second = await other()
    await Promise.all([
      stores().append(Array.from({ length: 50 }, (_, i) => trailEntry({ actor: 'one', details: { i } }))),
      second.append(Array.from({ length: 50 }, (_, i) => trailEntry({ actor: 'two', details: { i } }))),
    ])
    expect(await everything(second, {}, 30)).toHaveLength(100)
    expect(await everything(stores(), { actor: 'two' }, 30)).toHaveLength(50)
  })
}
