import { err, ok, type Result } from '../errors.js'
import type { ModuleView, NodeSetView } from '../modules/local-state.js'
import type {
  Actor,
  Clock,
  Digest,
  EventSink,
  FleetInstall,
  FleetStore,
  InstanceRecord,
  InstanceReport,
  ModuleStore,
  TypeUsage,
} from '../ports/index.js'
import { type Drift, driftOf, holdersOf } from './drift.js'
import { type InstanceModuleState, loadedOf, setsAsLoaded, snapshotOf, statesOf } from './instance-states.js'

// The fleet's admin plane: the module store holds the fleet's desired modules (the enablement
// state machine governs it as it governs one runtime's), the fleet store what each instance
// reports. Each instance pulls the desired state, applies it through its own Node-RED and reports.

export type { Drift } from './drift.js'

export interface FleetOptions {
  /** Remove from the instances the modules flowadmin did not install. Default false. */
  prune?: boolean | undefined
  /** Milliseconds after its last contact that an instance still counts as connected. Default 40000. */
  connectedMs?: number | undefined
  /**
   * Milliseconds a change's answer waits for the connected instances that have the module to
   * report their outcome (applied, or refused). Default 5000; 0 answers at once (all pending).
   */
  answerWaitMs?: number | undefined
}

/** What every instance is asked to have. `version` changes whenever anything else does. */
export interface DesiredState {
  version: string
  prune: boolean
  /** Each module's node sets and whether they are enabled, on every instance that has it. */
  modules: Array<{ name: string; sets: Array<{ name: string; enabled: boolean }> }>
  /** Modules flowadmin installed: every instance installs them. */
  installs: Array<{ module: string; version: string | null }>
  /** Modules flowadmin removed: every instance that has them removes them. */
  removals: string[]
}

export interface InstanceView {
  id: string
  resourceServer: string
  nodeRedVersion: string | null
  connected: boolean
  /** When it was last in touch (ms since the epoch). */
  lastSeen: number
  /** When its last report arrived, or null before its first. */
  lastReport: number | null
  /** The desired state's version it last applied, or null. */
  applied: string | null
  modules: number
  drift: Drift[]
}

export type FleetModuleView = ModuleView & { instances: InstanceModuleState[] }
export type FleetNodeSetView = NodeSetView & { instances: InstanceModuleState[] }

export type InstanceConflict = { code: 'instance_conflict'; instance: string }

export const DEFAULT_CONNECTED_MS = 40_000
export const DEFAULT_ANSWER_WAIT_MS = 5000

interface FleetDeps {
  store: ModuleStore
  fleet: FleetStore
  clock: Clock
  digest: Digest
  events: EventSink
}

/**
 * The fleet: its desired state as instances pull it, their reports, their drift, and the types
 * their flows use (the enablement state machine's check in fleet mode).
 */
export function createFleet({ store, fleet, clock, digest, events }: FleetDeps, options: FleetOptions = {}) {
  const prune = options.prune ?? false
  const connectedMs = options.connectedMs ?? DEFAULT_CONNECTED_MS
  const connected = (record: InstanceRecord) => clock.now() - record.seenAt <= connectedMs
  const installMap = async () => new Map((await fleet.installs()).map((entry) => [entry.module, entry]))

  const conflict = (instance: string) => err<InstanceConflict>({ code: 'instance_conflict', instance })

  /** The instance, or a conflict when the id is another resource server's. */
  async function claim(id: string, resourceServer: string): Promise<Result<void, InstanceConflict>> {
    const known = await fleet.find(id)
    return known !== null && known.resourceServer !== resourceServer
      ? err({ code: 'instance_conflict', instance: id })
      : ok(undefined)
  }

  async function desired(): Promise<DesiredState> {
    const [modules, installs] = [await store.list(), await fleet.installs()]
    const state = {
      prune,
      modules: modules.map((module) => ({
        name: module.name,
        sets: module.sets.map((set) => ({ name: set.name, enabled: set.enabled })),
      })),
      installs: installs
        .filter((entry) => entry.action === 'install')
        .map((entry) => ({ module: entry.module, version: entry.version })),
      removals: installs.filter((entry) => entry.action === 'remove').map((entry) => entry.module),
    }
    const version = (await digest.sha256(JSON.stringify(state))).slice(0, 32)
    return { version, ...state }
  }

  /** Modules an instance reports that the desired state does not know join it, as that instance has them. */
  async function adopt(report: InstanceReport, installs: ReadonlyMap<string, FleetInstall>) {
    for (const module of report.modules) {
      if (installs.get(module.name)?.action === 'remove') continue
      if ((await store.find(module.name)) !== null) continue
      await store.upsert({
        name: module.name,
        version: module.version,
        sets: module.sets.map((set) => ({ name: set.name, types: [...set.types] })),
      })
      const disabled = module.sets.filter((set) => !set.enabled).map((set) => set.name)
      if (disabled.length > 0) await store.setEnabled(module.name, disabled, false)
    }
  }

  const snapshot = async () => snapshotOf(await fleet.list(), await store.list(), await installMap())

  return {
    desired,
    /** See FleetOptions.answerWaitMs. */
    answerWaitMs: options.answerWaitMs ?? DEFAULT_ANSWER_WAIT_MS,

    /**
     * Whether every connected instance that has this module (or is to install it) has an outcome
     * for the desired state now: applied, or refused. Those away do not count.
     */
    async settled(module: string): Promise<boolean> {
      return statesOf(module, await snapshot(), connected).every(
        (state) => !state.connected || state.drift === undefined || state.drift.reason !== 'pending',
      )
    },

    /** An instance polls for the desired state: its contact is noted. */
    async poll(id: string, resourceServer: string): Promise<Result<DesiredState, InstanceConflict>> {
      const claimed = await claim(id, resourceServer)
      if (!claimed.ok) return claimed
      // The store writes only for the id's owner: a claim raced by another resource server ends here.
      if ((await fleet.seen(id, resourceServer, clock.now())) === null) return conflict(id)
      return ok(await desired())
    },

    /**
     * An instance reports what it has. Modules new to the fleet join the desired state as it has
     * them; a report that applied a new version, or tells of refusals, is an event per outcome.
     */
    async report(
      id: string,
      resourceServer: string,
      report: InstanceReport,
      address: string | null,
    ): Promise<Result<void, InstanceConflict>> {
      const claimed = await claim(id, resourceServer)
      if (!claimed.ok) return claimed
      const before = await fleet.find(id)
      const installs = await installMap()
      const now = clock.now()
      if (!(await fleet.saveReport(id, resourceServer, report, now))) return conflict(id)
      await adopt(report, installs)
      const actor = { username: null, clientId: resourceServer, address }
      const known = new Set(
        (before?.report?.failures ?? []).map((entry) => `${entry.module}\n${entry.action}\n${entry.message}`),
      )
      if (report.applied !== null && report.applied !== before?.report?.applied) {
        events.emit({ type: 'fleet.applied', at: now, instance: id, version: report.applied, ...actor })
      }
      for (const failure of report.failures) {
        if (known.has(`${failure.module}\n${failure.action}\n${failure.message}`)) continue
        events.emit({ type: 'fleet.refused', at: now, instance: id, ...failure, ...actor })
      }
      return ok(undefined)
    },

    /** Every instance with its drift, sorted by id. */
    async instances(): Promise<InstanceView[]> {
      const [records, modules, installs] = [await fleet.list(), await store.list(), await installMap()]
      const holders = holdersOf(records)
      return records.map((record) => ({
        id: record.id,
        resourceServer: record.resourceServer,
        nodeRedVersion: record.report?.nodeRedVersion ?? null,
        connected: connected(record),
        lastSeen: record.seenAt,
        lastReport: record.reportedAt,
        applied: record.report?.applied ?? null,
        modules: record.report?.modules.length ?? 0,
        drift: driftOf(record, modules, installs, holders),
      }))
    },

    /** Module views with each instance's own state; `loaded` and `err` say what the instances loaded. */
    async decorate(views: readonly ModuleView[]): Promise<FleetModuleView[]> {
      const now = await snapshot()
      return views.map((view) => ({
        ...view,
        nodes: setsAsLoaded(view, now),
        instances: statesOf(view.name, now, connected),
      }))
    },

    /** A node set's view with each instance's own state of its module. */
    async decorateSet(view: NodeSetView): Promise<FleetNodeSetView> {
      const now = await snapshot()
      const { err: _stale, ...rest } = view
      return {
        ...rest,
        ...loadedOf(view.module, view.name, now),
        instances: statesOf(view.module, now, connected),
      }
    },

    /**
     * Forgets a retired instance: its types no longer count as in use, its modules no longer as
     * missing there. False when there is no such instance. Should it poll again, it joins anew.
     */
    async remove(id: string, actor: Actor): Promise<boolean> {
      const known = await fleet.find(id)
      if (known === null || !(await fleet.remove(id))) return false
      events.emit({
        type: 'fleet.instance_removed',
        at: clock.now(),
        instance: id,
        resourceServer: known.resourceServer,
        ...actor,
      })
      return true
    },

    /** Records that flowadmin installed or removed a module on the fleet. */
    recordInstall: (module: string, action: 'install' | 'remove', version: string | null) =>
      fleet.setInstall({ module, action, version, at: clock.now() }),

    /** The types the deployed flows of every instance use, and which instances use them. */
    typeUsage: {
      async typesInUse() {
        const records = await fleet.list()
        return new Set(records.flatMap((record) => record.report?.typesInUse ?? []))
      },
      async usedBy(types: readonly string[]) {
        const records = await fleet.list()
        return records
          .filter((record) => record.report?.typesInUse.some((type) => types.includes(type)))
          .map((record) => record.id)
      },
    } satisfies TypeUsage,
  }
}

export type Fleet = ReturnType<typeof createFleet>
