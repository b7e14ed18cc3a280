// A search of the trail for a caller who may read only some instances: the store is read on past
// the others, a page at most so far, and the cursor goes on from where it stopped.
import { createMemoryStores } from '@flowadmin/adapter-memory'
import { createFixedClock } from '@flowadmin/testkit'
import { describe, expect, it } from 'vitest'
import type { TrailEntry, TrailEvent } from '../src/ports/trail.js'
import { createTrail, decodeTrailCursor } from '../src/trail/trail.js'

const entry = (instance: string, i: number): TrailEntry => ({
  time: i,
  received: i,
  reporter: 'fleet',
  server: 'fleet',
  instance,
  actor: null,
  event: 'flows.set',
  outcome: 'success',
  address: null,
  addressReported: false,
  details: { i },
})

const visible = (event: TrailEvent) => event.instance === 'weld-1'
const numbers = (events: TrailEvent[]) => events.map((event) => (event.details as { i: number }).i)

describe('the trail, searched for a caller who may read some instances', () => {
  it('pages over the events they may read, past the others', async () => {
    const { trail: store } = createMemoryStores()
    await store.append([
      entry('weld-1', 0),
      ...Array.from({ length: 50 }, (_, i) => entry('press-1', 1 + i)),
      entry('weld-1', 51),
    ])
    const trail = createTrail(store, createFixedClock())
    const first = await trail.search({}, 1, null, visible)
    expect(numbers(first.events)).toEqual([51])
    expect(first.next).not.toBeNull()
    const second = await trail.search({}, 1, decodeTrailCursor(first.next ?? ''), visible)
    expect(numbers(second.events)).toEqual([0])
    expect(second.next).toBeNull()
  })

  it('stops looking after ten thousand events it may not read, with a cursor to go on from', async () => {
    const { trail: store } = createMemoryStores()
    await store.append([
      entry('weld-1', 0),
      ...Array.from({ length: 10_050 }, (_, i) => entry('press-1', 1 + i)),
    ])
    const trail = createTrail(store, createFixedClock())
    const first = await trail.search({}, 10, null, visible)
    expect(first.events).toEqual([])
    expect(first.next).not.toBeNull()
    const second = await trail.search({}, 10, decodeTrailCursor(first.next ?? ''), visible)
    expect(numbers(second.events)).toEqual([0])
    expect(second.next).toBeNull()
    // Without a caller's limits, the same search is the store's.
    expect((await trail.search({}, 10, null)).events).toHaveLength(10)
  })
})
