// flowadmin's own events in the trail: appended off the request, kept while the store is away,
// the oldest dropped past the bound; and the retention the sweeper applies.
import { createMemoryStores } from '@flowadmin/adapter-memory'
import { type DomainEvent, storeUnavailable, type TrailEntry } from '@flowadmin/core'
import { createCoreWithDoubles, ownEntry, trailEntry, waitFor } from '@flowadmin/testkit'
import { describe, expect, it } from 'vitest'
import { createTrailRecorder } from '../src/adapters/trail-recorder.js'
import { logTo } from '../src/log.js'
import { captureLog } from './log-capture.js'

const failed = (n: number): DomainEvent => ({
  type: 'login.failed',
  at: 1_000 + n,
  username: `user-${n}`,
  clientId: 'service-admin',
  address: '203.0.113.7',
})

/** Memory stores whose trail refuses appends while `down` is true. */
function flakyStores() {
  const stores = createMemoryStores()
  const state = { down: false }
  const append = stores.trail.append
  stores.trail.append = async (entries: readonly TrailEntry[]) => {
    if (state.down) throw storeUnavailable('the database is restarting', 1)
    return append(entries)
  }
  return { stores, state }
}

const all = (stores: ReturnType<typeof createMemoryStores>) => stores.trail.search({}, 1000, null)

describe('the trail recorder', () => {
  it('adds each event as flowadmin’s own: the actor, a failure, the address it saw, no token', async () => {
    const { stores } = flakyStores()
    const recorder = createTrailRecorder(stores.trail, logTo(captureLog().logger), { delayMs: 0 })
    recorder.emit(failed(1))
    recorder.emit({
      type: 'token.revoked',
      at: 2_000,
      owner: 'bob',
      id: 't1',
      username: 'admin',
      clientId: 'service-admin',
      address: '::1',
    })
    await recorder.close()
    const events = await all(stores)
    expect(events.map(({ seq: _, ...event }) => event)).toEqual([
      {
        time: 2_000,
        received: 2_000,
        reporter: null,
        server: null,
        instance: null,
        actor: 'admin',
        event: 'token.revoked',
        outcome: 'success',
        address: '::1',
        addressReported: false,
        details: { owner: 'bob', id: 't1', client: 'service-admin' },
      },
      {
        time: 1_001,
        received: 1_001,
        reporter: null,
        server: null,
        instance: null,
        actor: 'user-1',
        event: 'login.failed',
        outcome: 'failure',
        address: '203.0.113.7',
        addressReported: false,
        details: { client: 'service-admin' },
      },
    ])
  })

  it('keeps events while the store is away and adds them once it is back; past its bound drops the oldest and says how many', async () => {
    const { stores, state } = flakyStores()
    const log = captureLog()
    const recorder = createTrailRecorder(stores.trail, logTo(log.logger), {
      delayMs: 0,
      maxPending: 5,
      retryMs: 5,
    })
    state.down = true
    for (let n = 0; n < 8; n++) recorder.emit(failed(n))
    await waitFor(
      () => log.said().some((line) => line.startsWith('warn: audit events cannot be added to the trail now')),
      () => log.said().join('\n'),
    )
    state.down = false
    await waitFor(
      () => log.said().includes('info: audit events are added to the trail again'),
      () => log.said().join('\n'),
    )
    expect((await all(stores)).map((event) => event.actor)).toEqual([
      'user-7',
      'user-6',
      'user-5',
      'user-4',
      'user-3',
    ])
    expect(
      log.entries().find((entry) => entry.msg === 'audit events are added to the trail again'),
    ).toMatchObject({
      dropped: 3,
    })
    await recorder.close()
  })
})

describe('an event the store refuses', () => {
  it('is dropped alone; an outage met while the others are added one by one makes them wait', async () => {
    const stores = createMemoryStores()
    const log = captureLog()
    const append = stores.trail.append
    let outages = 1
    stores.trail.append = async (entries: readonly TrailEntry[]) => {
      if (entries.some((entry) => entry.actor === 'user-2')) throw new Error('invalid byte sequence')
      if (entries.length === 1 && entries[0]?.actor === 'user-3' && outages-- > 0)
        throw storeUnavailable('the database is restarting', 1)
      return append(entries)
    }
    const recorder = createTrailRecorder(stores.trail, logTo(log.logger), { delayMs: 0, retryMs: 5 })
    for (let n = 1; n <= 4; n++) recorder.emit(failed(n))
    await waitFor(
      () => log.said().includes('info: audit events are added to the trail again'),
      () => log.said().join('\n'),
    )
    expect((await all(stores)).map((event) => event.actor)).toEqual(['user-4', 'user-3', 'user-1'])
    expect(
      log
        .entries()
        .filter((entry) => entry.msg === 'an audit event cannot be added to the trail; it is dropped'),
    ).toMatchObject([{ event: 'login.failed', time: 1_002, reason: 'invalid byte sequence' }])
    await recorder.close()
  })
})

describe('retention', () => {
  it('deletes flowadmin’s own events and each reporter’s apart: older than their age, then the first received beyond their count', async () => {
    const stores = createMemoryStores()
    const DAY = 86_400_000
    const { core } = createCoreWithDoubles({
      stores,
      adminAuth: () => ({ users: [] }),
      trail: {
        retention: {
          own: { maxAgeMs: 20 * DAY, maxEvents: 12 },
          reported: { maxAgeMs: 10 * DAY, maxEvents: 5 },
        },
        reportedPerMinute: 6000,
      },
    })
    const now = 100 * DAY
    // Received oldest first, as events are; what they claim changes nothing.
    const days = Array.from({ length: 30 }, (_, i) => 29 - i)
    await stores.trail.append(days.map((i) => ownEntry({ received: now - i * DAY, time: 0 })))
    await stores.trail.append(days.map((i) => trailEntry({ received: now - i * DAY, time: now + DAY })))
    expect(await core.trail.sweep(now, { batchSize: 4 })).toBe(9 + 9 + 19 + 6)
    const ages = async (server: string | null) =>
      (await stores.trail.search({ source: { server } }, 100, null)).map(
        (event) => (now - event.received) / DAY,
      )
    expect(await ages(null)).toEqual([...Array(12).keys()])
    expect(await ages('node-red')).toEqual([...Array(5).keys()])
  })
})
