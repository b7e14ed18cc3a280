import type { Actor } from '../ports/events.js'
import type { Rollouts } from './rollouts.js'

/**
 * The fleet and its identities, where an instance removed or revoked is also no longer waited for
 * by the rollouts that reached it (see membershipChanged).
 */
export function leaving<
  F extends { remove(id: string, actor: Actor): Promise<boolean> },
  I extends { revoke(id: string, actor: Actor): Promise<string | null> },
>(fleet: F, identities: I, rollouts: Pick<Rollouts, 'membershipChanged'>): F & { identities: I } {
  return {
    ...fleet,
    async remove(id: string, actor: Actor) {
      const removed = await fleet.remove(id, actor)
      if (removed) await rollouts.membershipChanged()
      return removed
    },
    identities: {
      ...identities,
      async revoke(id: string, actor: Actor) {
        const revoked = await identities.revoke(id, actor)
        if (revoked !== null) await rollouts.membershipChanged()
        return revoked
      },
    },
  }
}
