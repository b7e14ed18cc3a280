// The snapshots of flows: immutable, named, versioned copies of a set of flows and the node modules
// their types need. Kept durably; every flowadmin sharing the store reads them.

/** A node module a snapshot's flows need: its name and version. */
export interface SnapshotModule {
  name: string
  version: string
}

/** What a snapshot is, without its flows (what a list shows). */
export interface SnapshotMeta {
  /** Its public id. */
  id: string
  name: string
  /** 1 for the first snapshot of its name, then one more each time. */
  version: number
  /** Sorted by name. */
  modules: SnapshotModule[]
  /** How many nodes its flows hold (tabs, subflows and config nodes included). */
  nodes: number
  /** The size of its file, as a download gives it, in bytes. */
  bytes: number
  /** Who made it: a username, or null (the command line, or an open API). */
  createdBy: string | null
  /** When (ms since the epoch). */
  createdAt: number
}

/** A snapshot with its flows: the flows array as JSON text, as it was kept. */
export interface SnapshotRecord extends SnapshotMeta {
  flows: string
}

/** A snapshot to save: everything but its version, which the store gives. */
export type NewSnapshot = Omit<SnapshotRecord, 'version'>

/** An operator's ask that an instance send the flows it runs, to be kept as a snapshot of `name`. */
export interface SnapshotAsk {
  instance: string
  name: string
  /** Who asked: a username, or null (the command line, or an open API). */
  by: string | null
  /** When (ms since the epoch). */
  at: number
}

export interface SnapshotStore {
  /**
   * Saves the snapshot as the next version of its name: one more than the greatest saved of that
   * name, or 1. Racing saves of one name get distinct versions. Returns the version given.
   */
  create(snapshot: NewSnapshot): Promise<number>
  /** The snapshot with its flows, or null. */
  find(id: string): Promise<SnapshotRecord | null>
  /** Every snapshot without its flows, sorted by name (byte order), then version. */
  list(): Promise<SnapshotMeta[]>
  /** Saves the ask, in place of the instance's earlier one. */
  ask(ask: SnapshotAsk): Promise<void>
  /** The instance's ask, or null. */
  asked(instance: string): Promise<SnapshotAsk | null>
  /**
   * Deletes the instance's ask when it is for `name`, and returns it; null (nothing changes)
   * otherwise. Of racing calls, exactly one gets it.
   */
  take(instance: string, name: string): Promise<SnapshotAsk | null>
}
