import type { TrailEntry } from '@flowadmin/core'
import { T0 } from './contract-part.js'

// Trail entries for tests: an instance's report, and one of flowadmin's own events.

/** An entry for trail tests: an instance's `flows.set` at T0, reported by `node-red`, unless overridden. */
export const trailEntry = (overrides: Partial<TrailEntry> = {}): TrailEntry => ({
  time: T0,
  received: T0,
  reporter: 'node-red',
  server: 'node-red',
  instance: 'line-1',
  actor: 'alice',
  event: 'flows.set',
  outcome: 'success',
  address: '10.0.0.7',
  addressReported: true,
  details: { type: 'full' },
  ...overrides,
})

/** One of flowadmin's own events for trail tests: a `login.failed` at T0 unless overridden. */
export const ownEntry = (overrides: Partial<TrailEntry> = {}): TrailEntry =>
  trailEntry({
    reporter: null,
    server: null,
    instance: null,
    event: 'login.failed',
    outcome: 'failure',
    addressReported: false,
    ...overrides,
  })
