// The fleet's store: what each Node-RED instance reported of itself, and the modules flowadmin
// installed or removed across the fleet. The desired enablement lives in the module store.

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
  sets: ReportedNodeSet[]
}

/** A change the instance was asked to make and could not: Node-RED or npm refused it. */
export interface ReportedFailure {
  module: string
  action: 'enable' | 'disable' | 'install' | 'remove'
  /** Node-RED's message, or npm's first error line. */
  message: string
}

/** What an instance says of itself in one report. */
export interface InstanceReport {
  nodeRedVersion: string
  modules: ReportedModule[]
  /** The node types its deployed flows use. */
  typesInUse: string[]
  /** The version of the desired state it last applied, or null before the first. */
  applied: string | null
  failures: ReportedFailure[]
}

export interface InstanceRecord {
  id: string
  /** The resource server (client id) it authenticated as. */
  resourceServer: string
  /** When it last polled or reported (ms since the epoch). */
  seenAt: number
  /** When its latest report arrived; null before its first. */
  reportedAt: number | null
  report: InstanceReport | null
}

/** A module flowadmin installed on the fleet (`version` as asked: a range, or null: newest), or removed. */
export interface FleetInstall {
  module: string
  action: 'install' | 'remove'
  version: string | null
  at: number
}

export interface FleetStore {
  /**
   * Records contact from an instance at `now`: an unknown id is created (without a report) under
   * `resourceServer`; a known one keeps its report. Returns the record afterwards, or null (and
   * changes nothing) when the id belongs to another resource server.
   */
  seen(id: string, resourceServer: string, now: number): Promise<InstanceRecord | null>
  /**
   * Replaces the instance's report; its `seenAt` and `reportedAt` become `now`. Creates it when
   * unknown. False (and nothing changes) when the id belongs to another resource server.
   */
  saveReport(id: string, resourceServer: string, report: InstanceReport, now: number): Promise<boolean>
  /** The instance, or null. */
  find(id: string): Promise<InstanceRecord | null>
  /** Every instance, sorted by id. */
  list(): Promise<InstanceRecord[]>
  /** Forgets an instance; true when it was there. */
  remove(id: string): Promise<boolean>
  /** Records that flowadmin installed or removed a module on the fleet, replacing its earlier entry. */
  setInstall(entry: FleetInstall): Promise<void>
  /** Every module flowadmin installed or removed, sorted by module name. */
  installs(): Promise<FleetInstall[]>
}
