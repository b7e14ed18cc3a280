import { spawnSync } from 'node:child_process'
import { createServer, type Server } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { waitFor } from '@flowadmin/testkit'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { SECRET_KEY as CORE_SECRET_KEY } from '../../core/src/trail/trail.js'
import type { FlowadminOptions, NodeRedLogMessage } from '../index.js'
import { flowadmin } from './load.js'

const require = createRequire(import.meta.url)
const AUDIT = 98

interface Reported {
  time: number
  instance: string
  actor: string | null
  event: string
  address: string | null
  details: Record<string, unknown>
}

/** A flowadmin stand-in for `POST /audit/events`: takes reports while up, refuses connections while down. */
async function startTrail() {
  const received: Reported[] = []
  const authorizations: string[] = []
  let status = 200
  /** Largest body taken, in bytes, as flowadmin's 1 MiB; larger ones are answered 413. */
  let maxBytes = 1024 * 1024
  const sockets = new Set<import('node:net').Socket>()
  let server: Server
  const listen = (port = 0) =>
    new Promise<number>((resolve) => {
      server = createServer((req, res) => {
        const chunks: Buffer[] = []
        req.on('data', (chunk: Buffer) => {
          chunks.push(chunk)
        })
        req.on('end', () => {
          const body = Buffer.concat(chunks)
          const answer = body.length > maxBytes ? 413 : status
          if (req.url === '/audit/events' && answer === 200) {
            authorizations.push(String(req.headers.authorization))
            received.push(...(JSON.parse(body.toString()) as { events: Reported[] }).events)
          }
          res.writeHead(answer, { 'Content-Type': 'application/json' })
          res.end(JSON.stringify({ accepted: 0 }))
        })
      })
      server.on('connection', (socket) => {
        sockets.add(socket)
        socket.on('close', () => sockets.delete(socket))
      })
      server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port))
    })
  const port = await listen()
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy()
      server.close(() => resolve())
    })
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    authorizations,
    setStatus(next: number) {
      status = next
    },
    setMaxBytes(next: number) {
      maxBytes = next
    },
    /** Stops listening: connections are refused until `start`. */
    stop,
    start: () => listen(port),
  }
}

type Trail = Awaited<ReturnType<typeof startTrail>>
let trail: Trail
beforeEach(async () => {
  trail = await startTrail()
})
afterEach(async () => {
  await trail.stop().catch(() => {})
})

function logger(audit: FlowadminOptions['audit'] = {}) {
  const lines: string[] = []
  const options: FlowadminOptions = {
    url: trail.url,
    clientId: 'fleet',
    clientSecret: 's3cret',
    timeoutMs: 1000,
    log: (line) => lines.push(line),
    audit: { instance: 'line-1', delayMs: 0, maxRetryMs: 200, ...audit },
  }
  const setting = flowadmin.auditLogger(options)
  const handle = setting.handler({})
  return { setting, handle, lines }
}

const event = (name: string, extra: Partial<NodeRedLogMessage> = {}): NodeRedLogMessage => ({
  level: AUDIT,
  event: name,
  timestamp: 1_798_156_800_000,
  ...extra,
})

describe('auditLogger: Node-RED’s audit events to flowadmin', () => {
  test('is a custom logger for audit messages only, as Node-RED 4.1 reads one', () => {
    const { setting } = logger()
    expect(setting.level).toBe('off')
    expect(setting.audit).toBe(true)
    expect(typeof setting.handler).toBe('function')
  })

  test('sends the username and the instance, never a password or token, and drops read noise', async () => {
    const { handle } = logger()
    handle({ level: 40, msg: 'Started flows' })
    handle(event('flows.get', { user: { username: 'alice' } }))
    handle(event('comms.auth', { user: { username: 'alice' } }))
    handle(
      event('flows.set', {
        user: { username: 'alice', permissions: '*', token: 'secret-token' },
        ip: '10.0.0.7',
        path: '/flows',
        type: 'full',
        headers: { authorization: 'Bearer x', accept: '*/*' },
      }),
    )
    handle(
      event('auth.login.fail.credentials', {
        username: 'mallory',
        password: 'guess',
        client: 'node-red-editor',
      }),
    )
    await waitFor(
      () => trail.received.length === 2,
      () => `reports: ${trail.received.length}`,
    )
    expect(trail.received).toEqual([
      {
        time: 1_798_156_800_000,
        instance: 'line-1',
        actor: 'alice',
        event: 'flows.set',
        address: '10.0.0.7',
        details: { path: '/flows', type: 'full', headers: { accept: '*/*' } },
      },
      {
        time: 1_798_156_800_000,
        instance: 'line-1',
        actor: 'mallory',
        event: 'auth.login.fail.credentials',
        address: null,
        details: { username: 'mallory', client: 'node-red-editor' },
      },
    ])
    expect(trail.authorizations[0]).toBe(`Basic ${Buffer.from('fleet:s3cret').toString('base64')}`)
  })

  test('keeps numbers and booleans under secret-looking keys: only text and objects are dropped', async () => {
    const { handle } = logger()
    handle(
      event('users.update', {
        sessionsEnded: 2,
        tokenExpired: false,
        sessionId: 'abc',
        session: { id: 'abc' },
        tokens: ['t1'],
      }),
    )
    await waitFor(
      () => trail.received.length === 1,
      () => `reports: ${trail.received.length}`,
    )
    expect(trail.received[0]?.details).toEqual({ sessionsEnded: 2, tokenExpired: false })
  })

  test('forwards reads too when told to ignore nothing', async () => {
    const { handle } = logger({ ignore: [] })
    handle(event('flows.get'))
    handle(event('comms.auth'))
    await waitFor(
      () => trail.received.length === 2,
      () => `reports: ${trail.received.length}`,
    )
  })

  test('never throws into Node-RED, whatever the message', () => {
    const { handle } = logger()
    const circular: Record<string, unknown> = { level: AUDIT, event: 'library.set' }
    circular.self = circular
    const hostile = { level: AUDIT, event: 'nodes.install' }
    Object.defineProperty(hostile, 'module', {
      enumerable: true,
      get: () => {
        throw new Error('boom')
      },
    })
    for (const msg of [
      null,
      undefined,
      42,
      'text',
      {},
      circular,
      hostile,
      { level: AUDIT, event: 7 },
      { level: AUDIT, event: 'x', big: 10n },
    ]) {
      expect(handle(msg as NodeRedLogMessage)).toBeUndefined()
    }
  })

  test('keeps events while flowadmin is away and sends every one, in order, once it is back', async () => {
    const { handle, lines, setting } = logger()
    await trail.stop()
    for (let i = 0; i < 30; i++) handle(event('flows.set', { user: { username: 'alice' }, n: i }))
    await waitFor(
      () => lines.some((line) => line.includes('is unreachable')),
      () => `reports: ${JSON.stringify(trail.received.map((r) => r.event))}, log: ${JSON.stringify(lines)}`,
    )
    expect(setting.forwarder?.pending()).toEqual({ events: 30, dropped: 0 })
    await trail.start()
    await waitFor(
      () => trail.received.length === 30,
      () => `reports: ${trail.received.length}`,
    )
    expect(trail.received.map((report) => report.details.n)).toEqual([...Array(30).keys()])
    await waitFor(
      () => lines.some((line) => line.includes('takes audit events again')),
      () => `reports: ${JSON.stringify(trail.received.map((r) => r.event))}, log: ${JSON.stringify(lines)}`,
    )
  })

  test('when the buffer is full, drops the oldest and tells flowadmin and the log how many', async () => {
    const { handle, lines } = logger({ bufferSize: 10 })
    await trail.stop()
    for (let i = 0; i < 25; i++) handle(event('nodes.install', { n: i }))
    await trail.start()
    await waitFor(
      () => trail.received.length === 11,
      () => `reports: ${trail.received.length}`,
    )
    const [note, ...kept] = trail.received
    expect(note).toMatchObject({
      event: 'audit.dropped',
      instance: 'line-1',
      actor: null,
      details: { dropped: 15 },
    })
    expect(kept.map((report) => report.details.n)).toEqual([15, 16, 17, 18, 19, 20, 21, 22, 23, 24])
    await waitFor(
      () => lines.some((line) => line.includes('15 audit events were dropped (the oldest first)')),
      () => `log: ${JSON.stringify(lines)}`,
    )
  })

  test('retries while flowadmin answers 503, and drops a batch flowadmin refuses as malformed', async () => {
    const { handle, lines } = logger()
    trail.setStatus(503)
    handle(event('flows.set', { n: 1 }))
    await waitFor(
      () => lines.some((line) => line.includes('HTTP 503')),
      () => `reports: ${JSON.stringify(trail.received.map((r) => r.event))}, log: ${JSON.stringify(lines)}`,
    )
    trail.setStatus(200)
    await waitFor(
      () => trail.received.length === 1,
      () => `reports: ${trail.received.length}`,
    )
    trail.setStatus(400)
    handle(event('flows.set', { n: 2 }))
    await waitFor(
      () => lines.some((line) => line.includes('refused 1 audit events (HTTP 400)')),
      () => `reports: ${JSON.stringify(trail.received.map((r) => r.event))}, log: ${JSON.stringify(lines)}`,
    )
    trail.setStatus(200)
    handle(event('flows.set', { n: 3 }))
    await waitFor(
      () => trail.received.length === 2,
      () => `reports: ${trail.received.length}`,
    )
    expect(trail.received.map((report) => report.details.n)).toEqual([1, 3])
  })

  test('keeps each report under flowadmin’s 1 MiB, however large the events’ details', async () => {
    const { handle, lines } = logger({ batchSize: 500 })
    // Each event near the largest details kept (16 KiB of JSON), twice that in UTF-8 bytes.
    for (let i = 0; i < 200; i++) handle(event('flows.set', { n: i, text: 'é'.repeat(8000) }))
    await waitFor(
      () => trail.received.length === 200,
      () => `reports: ${trail.received.length}, log: ${JSON.stringify(lines)}`,
    )
    expect(trail.received.map((report) => report.details.n)).toEqual([...Array(200).keys()])
    expect(lines.filter((line) => line.includes('refused'))).toEqual([])
  })

  test('on 413 sends the batch again in smaller ones, and drops only an event too large alone', async () => {
    const { handle, lines } = logger({ batchSize: 500 })
    // A proxy in front of flowadmin that takes less than flowadmin does: 10 events of ~1 kB pass
    // only in smaller batches, and one of ~12 kB never passes.
    trail.setMaxBytes(10_000)
    for (let i = 0; i < 10; i++)
      handle(event('flows.set', { n: i, text: 'x'.repeat(i === 4 ? 12_000 : 1_000) }))
    await waitFor(
      () => lines.some((line) => line.includes('as too large (HTTP 413')),
      () => `reports: ${trail.received.length}, log: ${JSON.stringify(lines)}`,
    )
    await waitFor(
      () => trail.received.length === 9,
      () => `reports: ${trail.received.length}, log: ${JSON.stringify(lines)}`,
    )
    expect(trail.received.map((report) => report.details.n)).toEqual([0, 1, 2, 3, 5, 6, 7, 8, 9])
    expect(lines.filter((line) => line.includes('refused'))).toEqual([
      expect.stringMatching(
        /refused an audit event "flows\.set" as too large \(HTTP 413, \d+ bytes\); it is dropped \(1 so far\)$/,
      ),
    ])
  })

  test('sends what still waits when the process exits', async () => {
    await trail.stop()
    await trail.start()
    // A process that logs and exits at once, as Node-RED exits once stopped.
    const script = `
      const flowadmin = require(${JSON.stringify(require.resolve('../index.js'))})
      const setting = flowadmin.auditLogger({ url: ${JSON.stringify(trail.url)}, clientId: 'fleet', clientSecret: 's3cret',
        audit: { instance: 'line-9', delayMs: 60000 } })
      const handle = setting.handler({})
      for (let i = 0; i < 3; i++) handle({ level: 98, event: 'flows.set', n: i, timestamp: Date.now() })
      process.exit(0)`
    const run = spawnSync(process.execPath, ['-e', script], { timeout: 20_000 })
    expect(run.status).toBe(0)
    await waitFor(
      () => trail.received.length === 3,
      () => `reports: ${trail.received.length}`,
    )
    expect(trail.received.map((report) => [report.instance, report.details.n])).toEqual([
      ['line-9', 0],
      ['line-9', 1],
      ['line-9', 2],
    ])
  })

  test('drops the same keys as flowadmin does: its copy of the secret-key pattern is the core’s', () => {
    const { SECRET_KEY } = require('../lib/audit.js') as { SECRET_KEY: RegExp }
    expect(SECRET_KEY.source).toBe(CORE_SECRET_KEY.source)
    expect(SECRET_KEY.flags).toBe(CORE_SECRET_KEY.flags)
  })

  test('refuses bad audit options when Node-RED loads its settings', () => {
    const base = { url: trail.url, clientId: 'fleet', clientSecret: 's3cret' }
    expect(() => flowadmin.auditLogger({ ...base, audit: { bufferSize: 0 } })).toThrow(
      '@flowadmin/node-red: audit.bufferSize must be a whole number from 10 to 1000000',
    )
    expect(() => flowadmin.auditLogger({ ...base, audit: { instance: 'a\nb' } })).toThrow(
      'audit.instance must be a name of 1 to 128 printable characters',
    )
    expect(() => flowadmin.auditLogger({ ...base, audit: { instance: 'hall/line-1' } })).toThrow(
      'audit.instance must be a name of 1 to 128 printable characters, without "/"',
    )
    expect(() => flowadmin.auditLogger({ ...base, audit: { colour: 1 } as never })).toThrow(
      'unknown option audit.colour',
    )
  })
})
