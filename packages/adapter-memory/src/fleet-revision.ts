/**
 * The fleet's revision and `prune` setting, shared by the module, fleet, group and rollout stores that
 * createMemoryStores makes: a change of any store's part of the desired state bumps it.
 */
export interface FleetRevision {
  value: number
  prune: boolean
}

export const createFleetRevision = (): FleetRevision => ({ value: 1, prune: false })
