// The export of a large trail streams: flowadmin's memory stays bounded while a client reads
// 100,000 events as NDJSON and as CSV from the built command.
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import * as path from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { hashPassword } from '../src/adapters/argon2.js'
import { type BuiltServer, startBuiltServer, useServerFolder } from './cli-process.js'
import { logIn } from './password-grant.js'

const EVENTS = 100_000
const BATCH = 500
const SECRET = randomBytes(24).toString('base64url')
const PASSWORD = 'admin password'
/** Most the server's resident memory may grow while it streams the whole export. */
const MAX_GROWTH_BYTES = 48 * 1024 * 1024

const work = useServerFolder('export')
let flowadmin: BuiltServer
let admin: string

beforeAll(async () => {
  const settingsFile = path.join(work.dir, 'settings.json')
  const adminAuth = {
    type: 'credentials',
    users: [{ username: 'admin', password: await hashPassword(PASSWORD), permissions: '*' }],
    resourceServers: [{ id: 'fleet', secret: await hashPassword(SECRET) }],
  }
  // The fleet may send all of it at once: a minute's worth of a million a minute.
  const auditTrail = { reported: { eventsPerMinute: 1_000_000 } }
  flowadmin = await startBuiltServer(settingsFile, {
    settings: { storage: 'sqlite', auditLog: 'off', adminAuth, auditTrail },
  })
  const login = await logIn(flowadmin.url, PASSWORD)
  admin = ((await login.json()) as { access_token: string }).access_token
  const basic = `Basic ${Buffer.from(`fleet:${SECRET}`).toString('base64')}`
  const start = Date.UTC(2026, 10, 1)
  for (let sent = 0; sent < EVENTS; sent += BATCH) {
    const events = Array.from({ length: BATCH }, (_, i) => ({
      time: start + sent + i,
      instance: `line-${i % 7}`,
      actor: `user-${i % 50}`,
      event: i % 3 === 0 ? 'flows.set' : 'nodes.install',
      address: '10.0.0.7',
      details: { n: sent + i, type: 'full', module: 'node-red-contrib-example', version: '1.2.3' },
    }))
    const res = await fetch(`${flowadmin.url}/audit/events`, {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/json' },
      body: JSON.stringify({ events }),
    })
    expect(res.status).toBe(200)
  }
}, 300_000)

/** The server's resident memory now, from /proc. */
function residentBytes(): number {
  const status = readFileSync(`/proc/${flowadmin.run.child.pid}/status`, 'utf8')
  const kilobytes = /VmRSS:\s+(\d+) kB/.exec(status)?.[1]
  return Number(kilobytes) * 1024
}

/** Reads the whole answer a chunk at a time, counting lines, sampling the server's memory. */
async function streamed(accept: string) {
  const before = residentBytes()
  let peak = before
  const res = await fetch(`${flowadmin.url}/audit?instance=fleet`, {
    headers: { authorization: `Bearer ${admin}`, accept },
  })
  expect(res.status).toBe(200)
  const reader = (res.body as ReadableStream<Uint8Array>).getReader()
  const decoder = new TextDecoder()
  let lines = 0
  let first = ''
  let chunks = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    const text = decoder.decode(value, { stream: true })
    if (first.length < 400) first += text.slice(0, 400)
    for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) lines++
    if (++chunks % 20 === 0) peak = Math.max(peak, residentBytes())
  }
  peak = Math.max(peak, residentBytes())
  return { lines, first, growth: peak - before, type: res.headers.get('content-type') }
}

describe('exporting 100,000 events', () => {
  it('streams every one as NDJSON, newest first, in bounded memory', async () => {
    const { lines, first, growth, type } = await streamed('application/x-ndjson')
    expect(type).toBe('application/x-ndjson')
    expect(lines).toBe(EVENTS)
    expect(JSON.parse(first.slice(0, first.indexOf('\n')))).toMatchObject({ details: { n: EVENTS - 1 } })
    console.log(`NDJSON export of ${EVENTS} events: server memory grew ${(growth / 1048576).toFixed(1)} MiB`)
    expect(growth).toBeLessThan(MAX_GROWTH_BYTES)
  })

  it('streams every one as CSV, with its header, in bounded memory', async () => {
    const { lines, first, growth, type } = await streamed('text/csv')
    expect(type).toBe('text/csv; charset=utf-8')
    expect(lines).toBe(EVENTS + 1)
    expect(
      first.startsWith(
        'time,instance,actor,event,outcome,address,address_reported,details,received,time_suspect\r\n',
      ),
    ).toBe(true)
    console.log(`CSV export of ${EVENTS} events: server memory grew ${(growth / 1048576).toFixed(1)} MiB`)
    expect(growth).toBeLessThan(MAX_GROWTH_BYTES)
  })
})
