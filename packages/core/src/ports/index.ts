// Every port the core needs, one file per concern. Adapters implement these; the core never reaches
// past them. Times are milliseconds since the Unix epoch, always passed in: adapters never read a clock.

import type { EnrolmentStore } from './enrolments.js'
import type { FactorStore } from './factors.js'
import type { FleetStore } from './fleet.js'
import type { GroupStore } from './groups.js'
import type { ModuleStore } from './modules.js'
import type { PasskeyStore } from './passkeys.js'
import type { RolloutStore } from './rollouts.js'
import type { SnapshotStore } from './snapshots.js'
import type { SsoStore } from './sso.js'
import type { ThrottleStore } from './throttle.js'
import type { TokenStore } from './tokens.js'
import type { TrailStore } from './trail.js'

export type * from './directory.js'
export type * from './enrolments.js'
export type * from './events.js'
export type * from './factors.js'
export type * from './fleet.js'
export type * from './groups.js'
export type * from './identity.js'
export type * from './modules.js'
export type * from './node-modules.js'
export type * from './passkeys.js'
export type * from './rollouts.js'
export type * from './snapshots.js'
export type * from './sso.js'
export type * from './system.js'
export type * from './throttle.js'
export type * from './tokens.js'
export type * from './totp.js'
export type * from './trail.js'
export type * from './verifier.js'

/** The stores, as one adapter provides them. */
export interface Stores {
  tokens: TokenStore
  modules: ModuleStore
  throttle: ThrottleStore
  /** What single sign-on keeps: names bound to identities, logout tokens seen. */
  sso: SsoStore
  /** flowadmin's own audit events and its instances', in one trail. */
  trail: TrailStore
  /** What the fleet's instances report; used in fleet mode. */
  fleet: FleetStore
  /** The fleet's enrolment tokens and each enrolled instance's credential. */
  enrolments: EnrolmentStore
  /** Instances put in groups of instances over the API. */
  groups: GroupStore
  /** Snapshots of flows: named, versioned, never changed once made. */
  snapshots: SnapshotStore
  /** Rollouts of snapshots to groups, each instance's flows, groups' modes and flow variables. */
  rollouts: RolloutStore
  /** People's second factors: TOTP secrets (sealed), last used steps, recovery codes (hashed). */
  factors: FactorStore
  /** People's passkeys (public keys, counters) and the challenges of their ceremonies. */
  passkeys: PasskeyStore
}
