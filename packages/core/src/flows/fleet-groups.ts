// The fleet as the rollouts see it: for a group, the instances it holds now.
import type { EnrolmentStore, FleetStore } from '../ports/index.js'

/** Which groups there are and which an instance is in (the access rights' membership). */
export interface GroupMembership {
  has(group: string): boolean
  groupsOf(instance: string): readonly string[]
}

/** The instances of a group now: known to the fleet, not revoked, and in the group. */
export type FleetGroups = (group: string) => Set<string>

/** The fleet's groups, read at the first call and kept for the calls after it. */
export type FleetOnce = () => Promise<FleetGroups>

/**
 * Reads the fleet (its instances and their credentials) when first asked, once for every caller
 * that shares the result: a settle over many rollouts, or one rollout's view. Never read when no
 * caller asks (every rollout finished).
 */
export function fleetOnce(deps: {
  fleet: Pick<FleetStore, 'digests'>
  enrolments: Pick<EnrolmentStore, 'credentials'>
  membership: GroupMembership
}): FleetOnce {
  let read: Promise<FleetGroups> | undefined
  const now = async (): Promise<FleetGroups> => {
    const revoked = new Set(
      (await deps.enrolments.credentials()).filter((c) => c.revokedAt !== null).map((c) => c.instance),
    )
    const known = (await deps.fleet.digests()).map((digest) => digest.id).filter((id) => !revoked.has(id))
    return (group) => new Set(known.filter((instance) => deps.membership.groupsOf(instance).includes(group)))
  }
  return () => {
    read ??= now()
    return read
  }
}
