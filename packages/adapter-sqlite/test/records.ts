// What the SQLite store tests write: modules of one node set, and the throttle policy they count by.
import type { ModuleDescriptor, ThrottlePolicy } from '@flowadmin/core'

/** A module named `name` with one node set, `main`, of one type. */
export const module = (name: string): ModuleDescriptor => ({
  name,
  version: '1.0.0',
  sets: [{ name: 'main', types: [`${name}-node`] }],
})

/**
 * Five failures of a user from an address, or twenty from the address, within a minute; one attempt
 * in flight beyond them; in-flight counts and known pairs last a second.
 */
export const POLICY: ThrottlePolicy = {
  pairLimit: 5,
  addressLimit: 20,
  windowMs: 60_000,
  allowance: 1,
  leaseMs: 1_000,
  knownMs: 1_000,
}
