import type { Principal } from '../auth/principal.js'
import { err, ok, type Result } from '../errors.js'
import type { ModuleView, NodeSetView } from '../modules/local-state.js'
import type {
  Actor,
  Clock,
  EventSink,
  FleetStore,
  InstalledArtifact,
  InstanceReport,
  ModuleRecord,
  ModuleStore,
  TypeUsage,
} from '../ports/index.js'
import { createDesiredState, type DesiredState } from './desired-state.js'
import { type Drift, driftOf } from './drift.js'
import { type FleetInstallRefusal, mayInstallOnFleet } from './install-policy.js'
import {
  connectedAt,
  type InstanceModuleState,
  loadedOf,
  setsAsLoaded,
  snapshotOf,
  statesOf,
} from './instance-states.js'
import { createLeases } from './leases.js'
import { createReportCache } from './report-cache.js'
import { createReportIntake } from './reports.js'
import { undecidedOf } from './undecided.js'

// The fleet's admin plane: the module store holds the modules an operator decided (the
// enablement state machine governs it as it governs one runtime's), the fleet store the revision,
// the installs and what each instance reports. Each instance pulls the desired state, applies it
// through its own Node-RED and reports; a report is evidence, never a decision.

export type { DesiredState } from './desired-state.js'
export type { Drift, DriftReason } from './drift.js'

export interface FleetOptions {
  /**
   * This flowadmin's setting: remove from the instances the modules flowadmin did not install.
   * The store's value counts; `syncSettings` writes this one there. Default false.
   */
  prune?: boolean | undefined
  /** The longest a poll is held, in seconds (5–120). Default 15. */
  holdSeconds?: number | undefined
  /**
   * Milliseconds a change's answer waits for the connected instances that have the module to
   * report their outcome (applied, or refused). Default 5000; 0 answers at once (all pending).
   */
  answerWaitMs?: number | undefined
  /** Enrolled instances (not revoked) one resource server may hold. Default 1000. */
  maxInstances?: number | undefined
  /** Snapshots of flows: `maxBytes`, the most bytes of a snapshot's file (default 5 MB). */
  snapshots?: { maxBytes?: number | undefined } | undefined
}

export interface InstanceView {
  id: string
  resourceServer: string
  nodeRedVersion: string | null
  /** Its lease runs: a poll of its started within the hold time and 10 s, and did not lose its connection. */
  connected: boolean
  /** When it was last in touch (ms since the epoch). */
  lastSeen: number
  /** When its last report arrived, or null before its first. */
  lastReport: number | null
  /** The desired state's version it last finished working on, or null. */
  applied: string | null
  modules: number
  drift: Drift[]
}

export type FleetModuleView = ModuleView & { decided: boolean; instances: InstanceModuleState[] }
export type FleetNodeSetView = NodeSetView & { decided: boolean; instances: InstanceModuleState[] }

export type InstanceConflict = { code: 'instance_conflict'; instance: string }

export const DEFAULT_ANSWER_WAIT_MS = 5000
/** Seconds a poll is held by default: under the 20–30 s idle cuts of common gateways and proxies. */
export const DEFAULT_HOLD_SECONDS = 15
/** Most instance bindings kept in memory; past it they are read again as polls come. */
const MAX_BINDINGS = 100_000

interface FleetDeps {
  store: ModuleStore
  fleet: FleetStore
  clock: Clock
  events: EventSink
}

/**
 * The fleet: its desired state as instances pull it, their leases and reports, their drift, the
 * modules they report that no one decided, and the types their flows use (the enablement state
 * machine's check in fleet mode).
 */
export function createFleet({ store, fleet, clock, events }: FleetDeps, options: FleetOptions = {}) {
  const ownPrune = options.prune ?? false
  const holdSeconds = options.holdSeconds ?? DEFAULT_HOLD_SECONDS
  const desired = createDesiredState(store, fleet, holdSeconds)
  const cache = createReportCache(fleet)
  const leases = createLeases(fleet, clock, events, holdSeconds * 1000)
  const intake = createReportIntake(fleet, desired, clock, events)
  /** Which resource server each instance id is bound to, as far as this process knows. */
  const bindings = new Map<string, string>()
  const bind = (id: string, resourceServer: string) => {
    if (bindings.size >= MAX_BINDINGS) bindings.clear()
    bindings.set(id, resourceServer)
  }
  const conflict = (instance: string) => err<InstanceConflict>({ code: 'instance_conflict', instance })
  /** Whether the id is this resource server's (bound at its first contact). */
  const owns = async (id: string, resourceServer: string): Promise<boolean> => {
    const bound = bindings.get(id)
    if (bound !== undefined) return bound === resourceServer
    if (!(await fleet.claim(id, resourceServer, clock.now()))) return false
    bind(id, resourceServer)
    return true
  }

  /** The instances and the desired state, read for one answer. */
  const look = async (only?: string) => {
    const [records, { view }] = await Promise.all([cache.refresh(), desired.current()])
    return { records, view, snapshot: snapshotOf(records, view, clock.now(), only) }
  }

  /** The modules instances report that no operator decided: the module routes list them too. */
  const undecided = {
    async list(): Promise<ModuleRecord[]> {
      const { records, view } = await look()
      return undecidedOf(records, view)
    },
    async find(name: string): Promise<ModuleRecord | null> {
      return (await undecided.list()).find((module) => module.name === name) ?? null
    },
  }

  return {
    /** See FleetOptions.answerWaitMs. */
    answerWaitMs: options.answerWaitMs ?? DEFAULT_ANSWER_WAIT_MS,
    /** See FleetOptions.holdSeconds. */
    holdSeconds,

    /** The current desired state (built once per revision); `current`: see poll. */
    desired: async (current?: string): Promise<DesiredState> =>
      (desired.built(current) ?? (await desired.current())).state,
    /** The revision, read now: one small read. */
    revision: (): Promise<number> => desired.revision(),

    /**
     * An instance polls: its id is its resource server's (bound at its first contact), or a conflict.
     * `current`: the version the caller knows is current without reading it again (it read it
     * lately and was told of no change since); when the desired state built last is that version's,
     * it is the answer and the revision is not read.
     */
    async poll(
      id: string,
      resourceServer: string,
      current?: string,
    ): Promise<Result<DesiredState, InstanceConflict>> {
      if (!(await owns(id, resourceServer))) return conflict(id)
      return ok((desired.built(current) ?? (await desired.current())).state)
    },

    /** An instance says it leaves: whether it may (it is its resource server's); see createLeases. */
    async leave(id: string, resourceServer: string): Promise<Result<null, InstanceConflict>> {
      // One never seen leaves nothing: no record is made for it.
      const owner = bindings.get(id) ?? (await fleet.find(id))?.resourceServer
      return owner === undefined || owner === resourceServer ? ok(null) : conflict(id)
    },

    /** Whether the caller may install or upgrade a module on the fleet now: see mayInstallOnFleet. */
    mayInstall: (principal: Principal): Result<null, FleetInstallRefusal> =>
      mayInstallOnFleet(principal, clock.now()),

    /** Leases: see createLeases. */
    touch: leases.touch,
    release: leases.release,
    expire: leases.expire,

    /**
     * An instance reports what it has: saved when newer than the report stored (`sequence`; null
     * for a helper that sends none), `stale` (nothing changes) otherwise. See createReportIntake.
     */
    async report(
      id: string,
      resourceServer: string,
      report: InstanceReport,
      sequence: number | null,
      address: string | null,
    ): Promise<Result<'saved' | 'stale', InstanceConflict>> {
      const saved = await intake(id, resourceServer, report, sequence, address)
      if (saved === 'conflict') return conflict(id)
      bind(id, resourceServer)
      return ok(saved)
    },

    /**
     * Whether every connected instance that has this module (or is to install it) has an outcome
     * for the desired state now: applied, or refused. Those away do not count.
     */
    async settled(module: string): Promise<boolean> {
      const [records, { view }] = await Promise.all([cache.refresh(), desired.current()])
      const now = clock.now()
      return records.every((record) => {
        if (!connectedAt(record, now)) return true
        const reason = driftOf(record.report, view, module)[0]?.reason
        return reason !== 'pending' && reason !== 'applying'
      })
    },

    /** Every instance with its drift, sorted by id. */
    async instances(): Promise<InstanceView[]> {
      const { records, snapshot } = await look()
      return records.map((record) => ({
        id: record.id,
        resourceServer: record.resourceServer,
        nodeRedVersion: record.report?.nodeRedVersion ?? null,
        connected: connectedAt(record, snapshot.now),
        lastSeen: record.lastSeen,
        lastReport: record.reportedAt,
        applied: record.report?.applied ?? null,
        modules: record.report?.modules.length ?? 0,
        drift: [...(snapshot.drift.get(record.id)?.values() ?? [])],
      }))
    },

    /** Module views with each instance's own state; `loaded` and `err` say what the instances loaded. */
    async decorate(views: readonly ModuleView[]): Promise<FleetModuleView[]> {
      const { view: desiredView, snapshot } = await look(views.length === 1 ? views[0]?.name : undefined)
      return views.map((view) => ({
        ...view,
        nodes: setsAsLoaded(view, snapshot),
        decided: desiredView.decided.has(view.name),
        instances: statesOf(view.name, snapshot),
      }))
    },

    /** A node set's view with each instance's own state of its module. */
    async decorateSet(view: NodeSetView): Promise<FleetNodeSetView> {
      const { view: desiredView, snapshot } = await look(view.module)
      const { err: _stale, ...rest } = view
      return {
        ...rest,
        ...loadedOf(view.module, view.name, snapshot),
        decided: desiredView.decided.has(view.module),
        instances: statesOf(view.module, snapshot),
      }
    },

    undecided,

    /**
     * Forgets a retired instance: its types no longer count as in use, its modules no longer as
     * its own. False when there is no such instance. Should it poll again, it joins anew.
     */
    async remove(id: string, actor: Actor): Promise<boolean> {
      const known = await fleet.find(id)
      if (known === null || !(await fleet.remove(id))) return false
      cache.forget(id)
      bindings.delete(id)
      events.emit({
        type: 'fleet.instance_removed',
        at: clock.now(),
        instance: id,
        resourceServer: known.resourceServer,
        ...actor,
      })
      return true
    },

    /**
     * Records that flowadmin installed (at `version`, from the tarball `artifact` when known) or
     * removed a module on the fleet.
     */
    recordInstall: (
      module: string,
      action: 'install' | 'remove',
      version: string | null,
      artifact: InstalledArtifact | null = null,
    ) => fleet.setInstall({ module, action, version, ...artifact, at: clock.now() }),

    /**
     * Writes this flowadmin's `prune` to the store when it differs (at start: the last flowadmin
     * started decides), as the event `fleet.settings_changed`; returns the change, or null.
     */
    async syncSettings(): Promise<{ setting: 'prune'; from: boolean; to: boolean } | null> {
      const { prune } = await fleet.desired()
      if (prune === ownPrune || !(await fleet.setPrune(ownPrune))) return null
      const change = { setting: 'prune' as const, from: prune, to: ownPrune }
      events.emit({
        type: 'fleet.settings_changed',
        at: clock.now(),
        ...change,
        username: null,
        clientId: null,
        address: null,
      })
      return change
    },

    /** Whether the store's `prune` is this flowadmin's (another flowadmin may have written its own). */
    async settingsAgree(): Promise<boolean> {
      return (await desired.current()).state.prune === ownPrune
    },

    /** The types the deployed flows of every instance use, and which instances use them. */
    typeUsage: {
      async typesInUse() {
        const records = await cache.refresh()
        return new Set(records.flatMap((record) => record.report?.typesInUse ?? []))
      },
      async usedBy(types: readonly string[]) {
        const records = await cache.refresh()
        return records
          .filter((record) => record.report?.typesInUse.some((type) => types.includes(type)))
          .map((record) => record.id)
      },
    } satisfies TypeUsage,
  }
}

export type Fleet = ReturnType<typeof createFleet>
