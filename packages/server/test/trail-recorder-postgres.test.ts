// flowadmin's own events on PostgreSQL: text PostgreSQL cannot hold (a NUL, a lone surrogate, as a
// failed sign-in's username may carry) is stored escaped, and an event the store refuses anyway
// is dropped and logged instead of holding back every event after it.
import { createPostgresStores } from '@flowadmin/adapter-postgres'
import type { DomainEvent, TrailEntry } from '@flowadmin/core'
import { afterEach, describe, expect, it } from 'vitest'
import { EMPTY_TABLES, useTestDatabase } from '../../adapter-postgres/test/pg-server.js'
import { createTrailRecorder } from '../src/adapters/trail-recorder.js'
import { logTo } from '../src/log.js'
import { captureLog } from './log-capture.js'

const database = useTestDatabase()
const opened: { close(): Promise<void> }[] = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((stores) => stores.close()))
})

async function open() {
  const stores = await createPostgresStores({ url: database.current().url, pool: 2 })
  opened.push(stores)
  await database.current().query(EMPTY_TABLES)
  return stores
}

const failed = (username: string, n: number): DomainEvent => ({
  type: 'login.failed',
  at: 1_000 + n,
  username,
  clientId: null,
  address: '203.0.113.7',
})

describe('the trail recorder on PostgreSQL', () => {
  it('keeps a username with a NUL or a lone surrogate, escaped, and the events after it', async () => {
    const stores = await open()
    const recorder = createTrailRecorder(stores.trail, logTo(captureLog().logger), { delayMs: 0 })
    recorder.emit(failed('ev\u0000il', 1))
    recorder.emit(failed('half\uD800', 2))
    recorder.emit(failed('alice', 3))
    await recorder.close()
    const events = await stores.trail.search({}, 10, null)
    expect(events.map((event) => event.actor)).toEqual(['alice', 'half\\ud800', 'ev\\u0000il'])
    expect((await stores.trail.search({ actor: 'ev\u0000il' }, 10, null)).map((e) => e.time)).toEqual([1_001])
  })

  it('keeps details with a NUL as they were', async () => {
    const stores = await open()
    const entry: TrailEntry = {
      time: 1,
      received: 1,
      reporter: 'node-red',
      server: 'node-red',
      instance: 'line\u00001',
      actor: null,
      event: 'flows.set',
      outcome: 'success',
      address: '\u0000',
      addressReported: true,
      details: { 'k\u0000': 'v\u0000', lone: '\uDC00' },
    }
    await stores.trail.append([entry])
    const [found] = await stores.trail.search(
      { source: { server: 'node-red', instance: 'line\u00001' } },
      10,
      null,
    )
    expect(found).toMatchObject({ instance: 'line\\u00001', address: '\\u0000', details: entry.details })
  })

  it('drops and logs an event the store refuses for good, and adds the others', async () => {
    const stores = await open()
    const log = captureLog()
    const append = stores.trail.append
    stores.trail.append = async (entries: readonly TrailEntry[]) => {
      if (entries.some((entry) => entry.actor === 'refused'))
        throw new Error('value too long for this column')
      return append(entries)
    }
    const recorder = createTrailRecorder(stores.trail, logTo(log.logger), { delayMs: 0, retryMs: 5 })
    recorder.emit(failed('before', 1))
    recorder.emit(failed('refused', 2))
    recorder.emit(failed('after', 3))
    await recorder.close()
    expect((await stores.trail.search({}, 10, null)).map((event) => event.actor)).toEqual(['after', 'before'])
    expect(
      log
        .entries()
        .filter((entry) => entry.msg === 'an audit event cannot be added to the trail; it is dropped'),
    ).toMatchObject([{ event: 'login.failed', time: 1_002, reason: 'value too long for this column' }])
  })
})
