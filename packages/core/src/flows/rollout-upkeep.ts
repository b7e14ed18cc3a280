import type { Actor } from '../ports/events.js'
import type { Rollouts } from './rollouts.js'

/**
 * The fleet and its identities, where an instance removed or revoked is also no longer waited for
 * by the rollouts that reached it (see Rollouts.settle).
 */
export function leaving<
  F extends { remove(id: string, actor: Actor): Promise<boolean> },
  I extends { revoke(id: string, actor: Actor): Promise<string | null> },
>(fleet: F, identities: I, rollouts: Pick<Rollouts, 'settle'>): F & { identities: I } {
  return {
    ...fleet,
    async remove(id: string, actor: Actor) {
      const removed = await fleet.remove(id, actor)
      if (removed) await rollouts.settle()
      return removed
    },
    identities: {
      ...identities,
      async revoke(id: string, actor: Actor) {
        const revoked = await identities.revoke(id, actor)
        if (revoked !== null) await rollouts.settle()
        return revoked
      },
    },
  }
}
