// The module store: installed node modules and the persisted `enabled` flag of each node set.

/** What discovery found of an installed module: the store keeps it with an `enabled` flag per set. */
export interface ModuleDescriptor {
  name: string
  version: string
  /** `enabled`: the flag of a set new to the store (default true); a set it knows keeps its own. */
  sets: Array<{ name: string; types: string[]; enabled?: boolean | undefined }>
}

export interface NodeSetRecord {
  /** `<module>/<set name>` */
  id: string
  name: string
  module: string
  types: string[]
  enabled: boolean
}

export interface ModuleRecord {
  name: string
  version: string
  /** In the order discovery listed them. */
  sets: NodeSetRecord[]
}

/**
 * Every write that changes a module (its version, sets, types or flags, or its removal) bumps the
 * fleet's revision (FleetStore.revision) in the same transaction: the module store holds the
 * fleet's decided modules in fleet mode. A write that changes nothing bumps nothing.
 */
export interface ModuleStore {
  /**
   * Records a discovered module: its version and node sets (order and types as given). Sets the
   * store already knows keep their `enabled` flag, new sets start enabled (or as their `enabled`
   * says), sets no longer listed are dropped. Atomic. Returns the stored module.
   */
  upsert(module: ModuleDescriptor): Promise<ModuleRecord>
  /** The module, or null. */
  find(name: string): Promise<ModuleRecord | null>
  /** Every module, sorted by name. */
  list(): Promise<ModuleRecord[]>
  /**
   * Sets the `enabled` flag of these node sets of one module, all of them or none. Returns the
   * module afterwards, or null when the module is unknown. Set names it does not have are ignored.
   */
  setEnabled(module: string, sets: string[], enabled: boolean): Promise<ModuleRecord | null>
  /** Forgets a module and its sets; true when it was there. */
  remove(name: string): Promise<boolean>
}
