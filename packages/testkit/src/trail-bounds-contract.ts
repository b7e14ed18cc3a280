// The trail store's bounds, part of its contract: what each source keeps (flowadmin's own events
// apart from each reporter's), and how fast a reporter may add events, across connections.
import type { TrailPace, TrailStore } from '@flowadmin/core'
import { expect, it } from 'vitest'
import { T0 } from './contract-part.js'
import { ownEntry, trailEntry } from './trail-entries.js'

const SECOND = 1000

/** Everything the store holds, newest first, as `<reporter> <details.i>`. */
async function held(store: TrailStore): Promise<string[]> {
  return (await store.search({}, 1000, null)).map((event) => `${event.reporter ?? 'own'} ${event.details.i}`)
}

/** The retention tests: `stores()` is the fresh store of the running test. */
export function trailRetentionTests(stores: () => TrailStore): void {
  it('deletes one source’s events received before a time, whatever they claim, no more than the limit at once', async () => {
    // Received one a second; each claims 1970 or 2100, which changes nothing.
    const at = (i: number) => ({ received: T0 + i * SECOND, time: i % 2 === 0 ? 0 : Date.UTC(2100, 0, 1) })
    await stores().append(Array.from({ length: 10 }, (_, i) => trailEntry({ ...at(i), details: { i } })))
    await stores().append(Array.from({ length: 3 }, (_, i) => ownEntry({ ...at(i), details: { i } })))
    await stores().append([trailEntry({ ...at(0), reporter: 'edge', server: 'edge', details: { i: 0 } })])
    const before = T0 + 6 * SECOND
    expect(await stores().deleteBefore('node-red', before, 4)).toBe(4)
    expect(await stores().deleteBefore('node-red', before, 4)).toBe(2)
    expect(await stores().deleteBefore('node-red', before, 4)).toBe(0)
    expect(await held(stores())).toEqual([
      'edge 0',
      'own 2',
      'own 1',
      'own 0',
      'node-red 9',
      'node-red 8',
      'node-red 7',
      'node-red 6',
    ])
    // flowadmin's own, then another reporter's: each alone.
    expect(await stores().deleteBefore(null, T0 + 2 * SECOND, 10)).toBe(2)
    expect(await stores().deleteBefore('edge', T0 + SECOND, 10)).toBe(1)
    expect(await held(stores())).toEqual(['own 2', 'node-red 9', 'node-red 8', 'node-red 7', 'node-red 6'])
  })

  it('keeps the last received of one source beyond a count, whatever they claim: a flood never deletes flowadmin’s own', async () => {
    // flowadmin's own first; then a flood from one reporter, claiming times far back and ahead,
    // a few of another's between.
    await stores().append(Array.from({ length: 4 }, (_, i) => ownEntry({ details: { i } })))
    for (let batch = 0; batch < 3; batch++) {
      await stores().append(
        Array.from({ length: 4 }, (_, i) =>
          trailEntry({
            time: i % 2 === 0 ? 0 : T0 + 1e12,
            received: T0 + batch * SECOND,
            details: { i: batch * 4 + i },
          }),
        ),
      )
      await stores().append([
        trailEntry({ reporter: 'edge', server: 'edge', received: T0 + batch, details: { i: batch } }),
      ])
    }
    expect(await stores().deleteBeyond('node-red', 3, 5)).toBe(5)
    expect(await stores().deleteBeyond('node-red', 3, 5)).toBe(4)
    expect(await stores().deleteBeyond('node-red', 3, 5)).toBe(0)
    expect(await held(stores())).toEqual([
      'edge 2',
      'node-red 11',
      'node-red 10',
      'node-red 9',
      'edge 1',
      'edge 0',
      'own 3',
      'own 2',
      'own 1',
      'own 0',
    ])
    // Received last is what stays, not taken last: an event received earlier but taken later goes first.
    await stores().append([ownEntry({ received: T0 - SECOND, details: { i: 'late' } })])
    expect(await stores().deleteBeyond(null, 2, 10)).toBe(3)
    expect(await held(stores())).toEqual([
      'edge 2',
      'node-red 11',
      'node-red 10',
      'node-red 9',
      'edge 1',
      'edge 0',
      'own 3',
      'own 2',
    ])
    expect(await stores().deleteBeyond('nobody', 0, 10)).toBe(0)
  })
}

/** A pace of 10 ms an event, a burst of 100 ms: ten events at once, then one each 10 ms. */
const pace = (events: number): TrailPace => ({ costMs: events * 10, burstMs: 100 })

/**
 * The pace tests: `stores()` is the fresh store of the running test; `racing()` gives `racing(i)`,
 * one of two connections to it, taking turns.
 */
export function trailPaceTests(
  stores: () => TrailStore,
  racing: () => Promise<(i: number) => TrailStore>,
): void {
  const batch = (reporter: string, n: number, first = 0) =>
    Array.from({ length: n }, (_, i) => trailEntry({ reporter, details: { i: first + i } }))

  it('appends a reporter’s batch while its allowance takes it, and nothing of one it does not', async () => {
    const trail = stores()
    expect(await trail.appendReport('node-red', batch('node-red', 6), pace(6), T0)).toEqual({
      appended: true,
    })
    expect(await trail.appendReport('node-red', batch('node-red', 4, 6), pace(4), T0)).toEqual({
      appended: true,
    })
    // Spent up to T0 + 100: one more event fits at T0 + 10, five at T0 + 50.
    expect(await trail.appendReport('node-red', batch('node-red', 5, 10), pace(5), T0)).toEqual({
      appended: false,
      retryAt: T0 + 50,
    })
    expect(await trail.appendReport('node-red', batch('node-red', 5, 10), pace(5), T0 + 49)).toEqual({
      appended: false,
      retryAt: T0 + 50,
    })
    // Another reporter has an allowance of its own.
    expect(await trail.appendReport('edge', batch('edge', 10), pace(10), T0)).toEqual({ appended: true })
    expect((await trail.search({}, 100, null)).map((event) => event.details.i)).toEqual([
      ...[9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
      ...[9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
    ])
    expect(await trail.appendReport('node-red', batch('node-red', 5, 10), pace(5), T0 + 50)).toEqual({
      appended: true,
    })
    // An allowance unused for a while is full again, never more.
    expect(await trail.appendReport('node-red', batch('node-red', 10), pace(10), T0 + 10_000)).toEqual({
      appended: true,
    })
    expect(await trail.appendReport('node-red', batch('node-red', 1), pace(1), T0 + 10_000)).toEqual({
      appended: false,
      retryAt: T0 + 10_010,
    })
  })

  it('knows every reporter whose events it holds, any text, each once', async () => {
    const trail = stores()
    expect(await trail.reporters()).toEqual([])
    const odd = 'ü \\u0041 \\ \u0000 🙂'
    await trail.append([ownEntry(), trailEntry({ reporter: 'fleet' }), trailEntry({ reporter: 'fleet' })])
    expect(await trail.appendReport(odd, batch(odd, 2), pace(2), T0)).toEqual({ appended: true })
    expect(await trail.appendReport(odd, batch(odd, 1), pace(1), T0)).toEqual({ appended: true })
    expect((await trail.reporters()).sort()).toEqual(['fleet', odd].sort())
    expect((await trail.search({}, 10, null)).map((event) => event.reporter)).toEqual([
      odd,
      odd,
      odd,
      'fleet',
      'fleet',
      null,
    ])
  })

  it('spends a reporter’s allowance once across connections: racing batches never pass its burst', async () => {
    const racer = await racing()
    const outcomes = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        racer(i).appendReport('node-red', batch('node-red', 1, i), pace(1), T0),
      ),
    )
    // Ten fill the burst, whichever connection each came by; the others wait until T0 + 10.
    expect(outcomes.filter((outcome) => outcome.appended)).toHaveLength(10)
    expect(outcomes.filter((outcome) => !outcome.appended)).toEqual(
      Array(14).fill({ appended: false, retryAt: T0 + 10 }),
    )
    expect(await racer(0).search({}, 100, null)).toHaveLength(10)
    expect(await racer(1).appendReport('node-red', batch('node-red', 1), pace(1), T0 + 1)).toEqual({
      appended: false,
      retryAt: T0 + 10,
    })
  })
}
