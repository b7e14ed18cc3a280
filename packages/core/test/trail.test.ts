// How flowadmin's own events enter the trail: their outcome, their source, their details.
import { describe, expect, test } from 'vitest'
import type { Actor, DomainEvent } from '../src/ports/events.js'
import { EVENT_OUTCOMES } from '../src/ports/events.js'
import { trailEntryOf } from '../src/trail/trail.js'

const actor: Actor = { username: 'alice', clientId: null, address: '203.0.113.7' }
const instance: Actor = { username: null, clientId: 'fleet', address: '10.0.0.9' }

/** One event of each type that records something refused or failed. */
const failures: DomainEvent[] = [
  { type: 'login.failed', at: 1, ...actor },
  { type: 'login.mfa_required', at: 1, ...actor },
  { type: 'login.throttled', at: 1, retryAfter: 5, ...actor },
  { type: 'login.shed', at: 1, retryAfter: 5, ...actor },
  { type: 'permission.denied', at: 1, permission: 'flows.write', ...actor },
  { type: 'client.failed', at: 1, ...instance },
  { type: 'client.throttled', at: 1, retryAfter: 5, ...instance },
  { type: 'client.shed', at: 1, retryAfter: 5, ...instance },
  { type: 'sso.refused', at: 1, provider: 'idp', reason: 'refused', detail: 'no', ...actor },
  { type: 'directory.refused', at: 1, directory: 'AD', reason: 'disabled', detail: 'no', ...actor },
  { type: 'mfa.failed', at: 1, factor: 'totp', reason: 'wrong', ...actor },
  { type: 'mfa.throttled', at: 1, retryAfter: 30, ...actor },
  { type: 'passkey.failed', at: 1, id: 'credential', reason: 'counter', ...actor },
  {
    type: 'fleet.refused',
    at: 1,
    instance: 'line-1',
    module: 'node-red-contrib-x',
    action: 'install',
    message: 'npm refused',
    ...instance,
  },
  {
    type: 'fleet.restart_needed',
    at: 1,
    instance: 'line-1',
    module: 'node-red-contrib-x',
    version: '2.0.0',
    running: '1.0.0',
    ...instance,
  },
  {
    type: 'fleet.version_mismatch',
    at: 1,
    instance: 'line-1',
    module: 'node-red-contrib-x',
    version: '2.0.0',
    running: '1.0.1',
    ...instance,
  },
  { type: 'fleet.enrol_refused', at: 1, reason: 'expired', instance: null, enrolment: 'e1', ...instance },
  {
    type: 'fleet.instance_mismatch',
    at: 1,
    instance: 'nr-2',
    resourceServer: 'fleet',
    requested: 'nr-1',
    ...instance,
  },
  {
    type: 'access.refused',
    at: 1,
    resourceServer: 'fleet',
    instance: 'weld-1',
    username: 'otto',
    clientId: 'fleet/weld-1',
    address: '10.0.0.9',
  },
  {
    type: 'fleet.snapshot_refused',
    at: 1,
    instance: 'nr-1',
    name: 'line-1',
    message: 'flows: …',
    sender: { client: 'fleet/nr-1', address: null },
    ...actor,
  },
]

describe('trailEntryOf', () => {
  test('every event that records a refusal or failure has the outcome failure', () => {
    for (const event of failures)
      expect([event.type, trailEntryOf(event).outcome]).toEqual([event.type, 'failure'])
  })

  test('every other event has the outcome success', () => {
    const failing = new Set(failures.map((event) => event.type))
    for (const type of Object.keys(EVENT_OUTCOMES) as DomainEvent['type'][]) {
      if (!failing.has(type)) expect([type, EVENT_OUTCOMES[type]]).toEqual([type, 'success'])
    }
    expect(trailEntryOf({ type: 'mfa.succeeded', at: 1, factor: 'totp', ...actor }).outcome).toBe('success')
  })

  test('keeps numbers and booleans under secret-looking keys, drops text and objects there', () => {
    const enrolled = trailEntryOf({
      type: 'mfa.enrolled',
      at: 1,
      factor: 'totp',
      atSignIn: true,
      sessionsEnded: 3,
      ...actor,
    })
    expect(enrolled.details).toEqual({ factor: 'totp', atSignIn: true, sessionsEnded: 3 })
    const removed = trailEntryOf({
      type: 'mfa.removed',
      at: 1,
      owner: 'bob',
      factors: 'all',
      sessionsEnded: 0,
      ...actor,
    })
    expect(removed.details).toEqual({ owner: 'bob', factors: 'all', sessionsEnded: 0 })
    const leaky = {
      type: 'module.enabled',
      at: 1,
      module: 'm',
      sets: [],
      sessionId: 'abc',
      extra: { tokenCount: 2, apiKey: { value: 'k' }, password: 'p', hasPassword: true },
      ...actor,
    } as DomainEvent
    expect(trailEntryOf(leaky).details).toEqual({
      module: 'm',
      sets: [],
      extra: { tokenCount: 2, hasPassword: true },
    })
  })

  test('a fleet instance’s events name its resource server and instance, as its reports do', () => {
    const applied = trailEntryOf({
      type: 'fleet.applied',
      at: 7,
      instance: 'line-1',
      version: '4',
      ...instance,
    })
    expect(applied).toEqual({
      time: 7,
      received: 7,
      // What an instance told the fleet counts in its resource server's budget, not flowadmin's own.
      reporter: 'fleet',
      server: 'fleet',
      instance: 'line-1',
      actor: 'fleet',
      event: 'fleet.applied',
      outcome: 'success',
      address: '10.0.0.9',
      addressReported: false,
      details: { version: '4' },
    })
    const refused = trailEntryOf(failures.find((event) => event.type === 'fleet.refused') as DomainEvent)
    expect([refused.server, refused.instance, refused.outcome]).toEqual(['fleet', 'line-1', 'failure'])
    expect(refused.details).toEqual({
      module: 'node-red-contrib-x',
      action: 'install',
      message: 'npm refused',
    })
    const gone = trailEntryOf({
      type: 'fleet.disconnected',
      at: 8,
      instance: 'line-1',
      resourceServer: 'fleet',
      ...instance,
      address: null,
    })
    expect([gone.server, gone.instance, gone.actor, gone.details]).toEqual(['fleet', 'line-1', 'fleet', {}])
    const byHand = trailEntryOf({
      type: 'fleet.changed_by_hand',
      at: 9,
      instance: 'line-1',
      module: 'm',
      action: 'disable',
      version: null,
      by: 'alice',
      changedAt: 5,
      ...instance,
    })
    expect([byHand.server, byHand.instance, byHand.details]).toEqual([
      'fleet',
      'line-1',
      { module: 'm', action: 'disable', version: null, by: 'alice', changedAt: 5 },
    ])
    const own = trailEntryOf({ type: 'login.failed', at: 1, ...actor })
    expect([own.server, own.instance, own.reporter, own.received]).toEqual([null, null, null, 1])
  })
})
