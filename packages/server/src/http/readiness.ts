import type { TokenStore } from '@flowadmin/core'

/** What the service is doing, as readiness sees it. */
export type ServiceState = 'running' | 'closing'

/** A token hash no token has: readiness looks it up to prove the storage answers. */
const PROBE = 'readiness-probe'

/**
 * The readiness check behind `GET /readyz`: null when ready, else a reason code. Ready means not
 * stopping and the storage answering a read through its port (one primary-key lookup, cheap
 * enough for every second). The store is migrated when it opens, and node modules are discovered
 * before the server listens, so a server that answers has done both.
 */
export function createReadiness(tokens: Pick<TokenStore, 'findByHash'>, state: () => ServiceState) {
  return async (): Promise<string | null> => {
    if (state() === 'closing') return 'shutting_down'
    try {
      await tokens.findByHash(PROBE)
    } catch {
      return 'storage_unavailable'
    }
    return null
  }
}
