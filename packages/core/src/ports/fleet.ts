// The fleet's store: the desired state's revision and settings, the modules flowadmin installed or
// removed across the fleet, and what each Node-RED instance reported of itself. The decided
// modules and their enablement live in the module store, whose changes bump the same revision.

/** A node set as an instance's Node-RED reports it. */
export interface ReportedNodeSet {
  name: string
  types: string[]
  enabled: boolean
  loaded: boolean
  /** Why Node-RED could not load it, when it could not. */
  err?: string | undefined
}

/** A node module installed on an instance. */
export interface ReportedModule {
  name: string
  version: string
  /**
   * Node-RED's `pending_version`: a version installed there and not loaded until Node-RED
   * restarts (Node-RED keeps the old one loaded after an upgrade).
   */
  pendingVersion?: string | undefined
  sets: ReportedNodeSet[]
}

/** What an instance does to a module: the actions of failures and hand changes. */
export type FleetAction = 'enable' | 'disable' | 'install' | 'upgrade' | 'remove'

/** A change the instance was asked to make and could not: Node-RED or npm refused it. */
export interface ReportedFailure {
  module: string
  action: FleetAction
  /** Node-RED's message, or npm's first error line. */
  message: string
}

/** A change made at the instance by someone else than flowadmin's agent. */
export interface HandChange {
  module: string
  action: FleetAction
  /** The version installed, for an install or upgrade. */
  version?: string | undefined
  /** The Node-RED user who made it, when Node-RED's audit named one. */
  by: string | null
  /** When, in ms since the epoch, by the instance's clock. */
  at: number
}

/** What an instance says of itself in one report. */
export interface InstanceReport {
  nodeRedVersion: string
  modules: ReportedModule[]
  /** The node types its deployed flows use. */
  typesInUse: string[]
  /** The version of the desired state it last finished working on, or null before the first. */
  applied: string | null
  /** It is applying a change right now (npm may take a while). */
  applying?: boolean | undefined
  failures: ReportedFailure[]
  /** Hand changes since its previous report. */
  changes?: HandChange[] | undefined
  /** Hand changes its agent undid since its previous report, as the desired state decides otherwise. */
  reverted?: Array<{ module: string; action: FleetAction }> | undefined
  /**
   * Kept by flowadmin, not sent: the hand changes still in effect there, the latest of each
   * module, carried from report to report.
   */
  handChanges?: HandChange[] | undefined
}

/** An instance without its report: what every poll or change may look at cheaply. */
export interface InstanceDigest {
  id: string
  /** The resource server (client id) it authenticated as. */
  resourceServer: string
  /** When it last polled or reported (ms since the epoch). */
  lastSeen: number
  /** Until when its lease runs (ms since the epoch): in touch until then. */
  leaseUntil: number
  /** Whether it counted as connected when its lease was last touched, released or expired. */
  connected: boolean
  /** Its latest report's sequence; null before its first report. */
  sequence: number | null
  /** When its latest report arrived; null before its first. */
  reportedAt: number | null
}

export interface InstanceRecord extends InstanceDigest {
  report: InstanceReport | null
}

/**
 * A module flowadmin installed on the fleet (`version` as installed at flowadmin; null in old
 * records), or removed. An install records the exact tarball flowadmin installed, when npm said
 * which: its `integrity` (`sha512-…`) and the `tarball` URL it came from; both or neither (old
 * records, and installs whose lockfile named none).
 */
export interface FleetInstall {
  module: string
  action: 'install' | 'remove'
  version: string | null
  integrity?: string
  tarball?: string
  at: number
}

/** The fleet's part of the desired state, read at once: its revision, settings and installs. */
export interface FleetDesired {
  /** Bumped by every change of the desired state, in the change's own transaction. */
  revision: number
  prune: boolean
  /** Sorted by module name. */
  installs: FleetInstall[]
}

/** How saving a report went: `stale` when a report of a greater sequence is there already. */
export type ReportSaved = 'saved' | 'stale' | 'conflict'

export interface FleetStore {
  /**
   * Binds an unknown id to `resourceServer` (not connected, seen at `now`). True when the id is
   * that resource server's (now or before); false, changing nothing, when it is another's.
   */
  claim(id: string, resourceServer: string, now: number): Promise<boolean>
  /**
   * Extends the lease of these instances to `until` (never shortens it), marks them connected and
   * seen at `now`, creating unknown ones; an id of another resource server is left alone. Returns
   * the ids that were not connected before: of racing calls, exactly one returns each.
   */
  touch(
    instances: ReadonlyArray<{ id: string; resourceServer: string }>,
    until: number,
    now: number,
  ): Promise<string[]>
  /** Ends the instance's lease at `now`; true when it was connected (then it is not any more). */
  release(id: string, now: number): Promise<boolean>
  /**
   * Marks not connected every connected instance whose lease ended at or before `now`, and returns
   * them: of racing calls, exactly one returns each.
   */
  expire(now: number): Promise<Array<{ id: string; resourceServer: string }>>
  /**
   * Replaces the instance's report when `sequence` is greater than the stored one, or is null (a
   * report without one: saved whatever came before, with the stored sequence plus one); its
   * `reportedAt` becomes `now`. Creates an unknown instance. `stale` (nothing changes) for a
   * sequence not greater; `conflict` (nothing changes) when the id is another resource server's.
   */
  saveReport(
    id: string,
    resourceServer: string,
    report: InstanceReport,
    sequence: number | null,
    now: number,
  ): Promise<ReportSaved>
  /** The instance, or null. */
  find(id: string): Promise<InstanceRecord | null>
  /** These instances with their reports (those that exist), sorted by id. */
  reports(ids: readonly string[]): Promise<InstanceRecord[]>
  /** Every instance without its report, sorted by id. */
  digests(): Promise<InstanceDigest[]>
  /** Forgets an instance; true when it was there. */
  remove(id: string): Promise<boolean>
  /**
   * Records that flowadmin installed or removed a module on the fleet, replacing its earlier
   * entry, and bumps the revision in the same transaction.
   */
  setInstall(entry: FleetInstall): Promise<void>
  /** The revision, settings and installs, as of one moment. */
  desired(): Promise<FleetDesired>
  /** The revision alone: one small read. */
  revision(): Promise<number>
  /**
   * Bumps the revision for a change the desired state depends on that no store change counts: the
   * groups' settings reloaded (which rollout an instance's flows should be follows them).
   */
  bump(): Promise<void>
  /** Sets `prune`; true when it changed, and then the revision was bumped in the same transaction. */
  setPrune(prune: boolean): Promise<boolean>
  /**
   * Records that instances reported these modules; returns those no instance had reported before
   * (of racing calls, exactly one returns each).
   */
  noteReported(modules: readonly string[], now: number): Promise<string[]>
}
