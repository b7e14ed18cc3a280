// What the audit logger puts in flowadmin's trail besides Node-RED's events as they come: not
// Node-RED's session lookup that misses every flowadmin token, not the fleet agent's own requests,
// but a token flowadmin refused; under the name the fleet knows the instance by; and at the pace
// flowadmin asks for (429 with Retry-After).
import { readFileSync } from 'node:fs'
import * as path from 'node:path'
import { waitFor } from '@flowadmin/testkit'
import { afterEach, describe, expect, test } from 'vitest'
import type { NodeRedLogMessage } from '../index.js'
import { type FakeNodeRed, startFakeNodeRed } from './fake-node-red.js'
import { desiredState, sleep, startFleetInstance } from './fleet-setup.js'
import { flowadmin } from './load.js'
import { agentOf, auditHandlerOf, loadSettingsModule } from './settings-module.js'
import { type StubFlowadmin, startStubFlowadmin } from './stub-flowadmin.js'

const AUDIT = 98
const closing: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const close of closing.splice(0)) await close()
})

async function stubFlowadmin() {
  const stub = await startStubFlowadmin()
  closing.push(() => stub.close())
  return stub
}

async function fleetInstance(...args: Parameters<typeof startFleetInstance>) {
  const fleet = await startFleetInstance(...args)
  closing.push(() => fleet.close())
  return fleet
}

/** An audit logger and adminAuth on one options object, as in a settings file. */
function loggerFor(stub: StubFlowadmin, audit: object = {}) {
  const lines: string[] = []
  const options = {
    url: stub.url,
    clientId: 'fleet',
    clientSecret: 's3cret',
    log: (line: string) => lines.push(line),
    audit: { instance: 'line-1', delayMs: 0, ...audit },
  }
  const logger = flowadmin.auditLogger(options)
  const handle = logger.handler(logger)
  return { handle, adminAuth: flowadmin.adminAuth(options), lines, logger }
}

const event = (name: string, extra: Partial<NodeRedLogMessage> = {}): NodeRedLogMessage => ({
  level: AUDIT,
  event: name,
  timestamp: Date.now(),
  ...extra,
})

describe('auth.invalid-token', () => {
  test('Node-RED’s own, without user or address, is its session lookup: dropped', async () => {
    const stub = await stubFlowadmin()
    const { handle } = loggerFor(stub)
    handle(event('auth.invalid-token'))
    handle(event('flows.set', { user: { username: 'alice' } }))
    await waitFor(() => stub.audit.events.length > 0, 'the deploy')
    await sleep(100)
    expect(stub.audit.events.map((e) => e.event)).toEqual(['flows.set'])
  })

  test('the helper’s own when flowadmin says a token is not active: once a minute per token; none for an active token', async () => {
    const stub = await stubFlowadmin()
    const { adminAuth } = loggerFor(stub)
    expect(await adminAuth.tokens('revoked-or-made-up')).toBeNull()
    expect(await adminAuth.tokens('revoked-or-made-up')).toBeNull()
    expect(await adminAuth.tokens('another')).toBeNull()
    expect(await adminAuth.tokens(stub.issue('alice', '*'))).toMatchObject({ username: 'alice' })
    await waitFor(
      () => stub.audit.events.length >= 2,
      () => `events: ${JSON.stringify(stub.audit.events)}`,
    )
    await sleep(100)
    expect(stub.audit.events).toEqual([
      {
        time: expect.any(Number),
        instance: 'line-1',
        actor: null,
        event: 'auth.invalid-token',
        address: null,
        details: { reason: 'inactive at flowadmin' },
      },
      expect.objectContaining({ event: 'auth.invalid-token' }),
    ])
    expect(JSON.stringify(stub.audit.events)).not.toContain('revoked-or-made-up')
  })
})

describe('a quiet fleet', () => {
  test('adds no trail event, even with nothing ignored: the agent’s own requests are no one’s', async () => {
    const fleet = await fleetInstance({ hold: 1, options: { audit: { delayMs: 0, ignore: [] } } })
    await waitFor(() => fleet.reports().length > 0, 'a first report')
    await sleep(3000)
    // Node-RED logged a session miss and a read for each of the agent's many requests.
    expect(fleet.nodeRed.calls.length).toBeGreaterThan(5)
    expect(fleet.stub.audit.events).toEqual([])
    // A person's deploy still goes.
    fleet.nodeRed.setFlows([{ id: 't', type: 'tab' }])
    await waitFor(() => fleet.stub.audit.events.length > 0, 'the deploy')
    expect(fleet.stub.audit.events.map((e) => [e.event, e.actor, e.instance])).toEqual([
      ['flows.set', 'alice', 'nr-1'],
    ])
  }, 30_000)
})

describe('one name', () => {
  test("an instance's own credential given as clientId and clientSecret names it, not the host", async () => {
    // A stub that takes this pair, as flowadmin takes an enrolled instance's.
    const stub = await startStubFlowadmin({ clientId: 'fleet/press-3', clientSecret: 'fai_secret' })
    closing.push(() => stub.close())
    const logger = flowadmin.auditLogger({
      url: stub.url,
      clientId: 'fleet/press-3',
      clientSecret: 'fai_secret',
      log: () => {},
      audit: { delayMs: 0 },
    })
    logger.handler(logger)(event('flows.set', { user: { username: 'alice' } }))
    await waitFor(() => stub.audit.events.length > 0, 'the event')
    expect(stub.audit.events.map((e) => [e.event, e.instance])).toEqual([['flows.set', 'press-3']])
  })

  test('in fleet mode the events go under the fleet’s id, the one its polls use', async () => {
    const fleet = await fleetInstance({ instanceId: 'line-7', desired: desiredState('1') })
    fleet.nodeRed.setFlows([{ id: 't', type: 'tab' }])
    await waitFor(() => fleet.stub.audit.events.length > 0, 'the deploy')
    expect(fleet.stub.audit.events.map((e) => e.instance)).toEqual(['line-7'])
    await waitFor(() => fleet.polls().length > 0, 'a poll')
    expect(fleet.polls()[0]?.path).toBe('/fleet/instances/line-7/desired')
  })

  test('a logger made before the agent knows its id keeps the events until it does: the id kept in the userDir', async () => {
    const stub = await stubFlowadmin()
    stub.fleet.setDesired(desiredState('1'))
    const nodeRed: FakeNodeRed = await startFakeNodeRed([])
    closing.push(() => nodeRed.close())
    // Loaded as before Node-RED listens: no serverPort yet.
    const settings = loadSettingsModule(stub.url, {
      options: { fleet: true, audit: { delayMs: 0 } },
      auditLogger: true,
    })
    closing.push(() => agentOf(settings).stop())
    const handle = auditHandlerOf(settings)
    handle(event('flows.set', { user: { username: 'alice' } }))
    await sleep(600)
    expect(stub.audit.events).toEqual([])
    expect(settings.logging?.flowadmin.forwarder?.pending()).toEqual({ events: 1, dropped: 0 })
    // Node-RED listens.
    nodeRed.authenticateWith(settings.adminAuth.tokens)
    ;(settings as unknown as { serverPort: number }).serverPort = nodeRed.port
    await waitFor(() => stub.audit.events.length > 0, 'the deploy')
    const id = readFileSync(path.join(settings.userDir, '.flowadmin-instance'), 'utf8').trim()
    expect(stub.audit.events.map((e) => e.instance)).toEqual([id])
    await waitFor(() => stub.fleet.pollsOf(id).length > 0, 'a poll')
  })

  test('audit.instance set to another name: used, and said once', async () => {
    const fleet = await fleetInstance({
      instanceId: 'line-8',
      options: { audit: { delayMs: 0, instance: 'press-8' } },
    })
    fleet.nodeRed.setFlows([{ id: 't', type: 'tab' }])
    await waitFor(() => fleet.stub.audit.events.length > 0, 'the deploy')
    expect(fleet.stub.audit.events.map((e) => e.instance)).toEqual(['press-8'])
    expect(fleet.settings.lines.filter((line) => line.startsWith('audit.instance'))).toEqual([
      'audit.instance "press-8" is not this instance\'s fleet id "line-8": its Node-RED events are filed under "press-8", which the fleet does not list; leave audit.instance out to use the fleet id',
    ])
  })
})

describe('429 from flowadmin', () => {
  test('waits as long as Retry-After says before the next batch, and keeps the events', async () => {
    const stub = await stubFlowadmin()
    stub.audit.answerNext({ status: 429, retryAfter: '2' })
    const { handle, lines } = loggerFor(stub, { maxRetryMs: 100 })
    handle(event('flows.set', { n: 1 }))
    await waitFor(
      () => lines.some((line) => line.includes('HTTP 429')),
      () => `log: ${JSON.stringify(lines)}`,
    )
    handle(event('flows.set', { n: 2 }))
    await waitFor(
      () => stub.audit.events.length === 2 && lines.length === 2,
      () => `events: ${stub.audit.events.length}, log: ${JSON.stringify(lines)}`,
    )
    const posts = stub.to('/audit/events')
    expect(posts).toHaveLength(2)
    expect((posts[1]?.at ?? 0) - (posts[0]?.answeredAt ?? 0)).toBeGreaterThanOrEqual(1990)
    expect(stub.audit.events.map((e) => (e.details as { n: number }).n)).toEqual([1, 2])
    expect(lines).toEqual([
      `flowadmin at ${stub.url} asks audit events to wait 2 s (HTTP 429): they wait (at most 10000) and are sent then`,
      `flowadmin at ${stub.url} takes audit events again`,
    ])
  })
})
