import type { Stores } from '@flowadmin/core'
import { createEnrolmentStore } from './enrolment-store.js'
import { createFactorStore } from './factor-store.js'
import { createFleetRevision } from './fleet-revision.js'
import { createFleetStore } from './fleet-store.js'
import { createGroupStore } from './group-store.js'
import { createModuleStore } from './module-store.js'
import { createPasskeyStore } from './passkey-store.js'
import { createRolloutStore } from './rollout-store.js'
import { createSnapshotStore } from './snapshot-store.js'
import { createSsoStore } from './sso-store.js'
import { createThrottleStore } from './throttle-store.js'
import { createTokenStore } from './token-store.js'
import { createTrailStore } from './trail-store.js'

export interface MemoryStores extends Stores {
  /** Nothing to release; present so every adapter closes alike. */
  close(): Promise<void>
}

/** Options of {@link createMemoryStores}. */
export interface MemoryStoresOptions {
  /**
   * Most throttle counters kept at once (and, apart, most known pairs), so memory stays bounded
   * under a spray of usernames or addresses. When full, counters whose window ended make room,
   * oldest first; a live one is never dropped, so a spray cannot wipe the failures of the key it
   * targets: an attempt that needs a new counter is answered busy until a window ends. The oldest
   * known pairs are forgotten. Default 100 000.
   */
  maxThrottleEntries?: number
}

export const DEFAULT_MAX_THROTTLE_ENTRIES = 100_000

/** Every store port over Maps: fast, ephemeral, for tests and embedders. */
export function createMemoryStores(options: MemoryStoresOptions = {}): MemoryStores {
  const maxThrottleEntries = options.maxThrottleEntries ?? DEFAULT_MAX_THROTTLE_ENTRIES
  if (!Number.isSafeInteger(maxThrottleEntries) || maxThrottleEntries < 1) {
    throw new RangeError('maxThrottleEntries must be a whole number from 1')
  }
  // The module, fleet, group and rollout stores change one desired state, under one revision.
  const revision = createFleetRevision()
  return {
    tokens: createTokenStore(),
    modules: createModuleStore(revision),
    throttle: createThrottleStore(maxThrottleEntries),
    sso: createSsoStore(),
    trail: createTrailStore(),
    fleet: createFleetStore(revision),
    enrolments: createEnrolmentStore(),
    groups: createGroupStore(revision),
    snapshots: createSnapshotStore(),
    factors: createFactorStore(),
    passkeys: createPasskeyStore(),
    rollouts: createRolloutStore(revision),
    async close() {},
  }
}
