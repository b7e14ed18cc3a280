import type { ModuleView } from '../modules/local-state.js'
import type { FleetInstall, InstanceRecord, ModuleRecord, ReportedModule } from '../ports/index.js'
import { type Drift, driftOf, holdersOf } from './drift.js'

/** One instance's own state of a module, beside the desired one. */
export interface InstanceModuleState {
  id: string
  connected: boolean
  /** The version installed there; absent when it is not installed (yet). */
  version?: string
  /** Each node set's `enabled` there, by set name. */
  enabled: Record<string, boolean>
  /** Present when the instance differs from the desired state. */
  drift?: Drift
}

/**
 * What one answer needs of the instances, computed once: each instance's modules by name and
 * drift by module (the first drift of each module, as `driftOf` lists them).
 */
export interface Snapshot {
  records: readonly InstanceRecord[]
  own: ReadonlyMap<string, ReadonlyMap<string, ReportedModule>>
  drift: ReadonlyMap<string, ReadonlyMap<string, Drift>>
}

/** The snapshot of these instances against the desired modules and the fleet's installs. */
export function snapshotOf(
  records: readonly InstanceRecord[],
  modules: readonly ModuleRecord[],
  installs: ReadonlyMap<string, FleetInstall>,
): Snapshot {
  const holders = holdersOf(records)
  const own = new Map<string, Map<string, ReportedModule>>()
  const drift = new Map<string, Map<string, Drift>>()
  for (const record of records) {
    const mine = new Map<string, ReportedModule>()
    for (const module of record.report?.modules ?? [])
      if (!mine.has(module.name)) mine.set(module.name, module)
    own.set(record.id, mine)
    const byModule = new Map<string, Drift>()
    for (const entry of driftOf(record, modules, installs, holders)) {
      if (!byModule.has(entry.module)) byModule.set(entry.module, entry)
    }
    drift.set(record.id, byModule)
  }
  return { records, own, drift }
}

/** Each instance's own state of module `name`: those that have it, or differ; `connected` says which are in touch. */
export function statesOf(
  name: string,
  { records, own, drift }: Snapshot,
  connected: (record: InstanceRecord) => boolean,
): InstanceModuleState[] {
  const states: InstanceModuleState[] = []
  for (const record of records) {
    const differs = drift.get(record.id)?.get(name)
    const here = own.get(record.id)?.get(name)
    if (here === undefined && differs === undefined) continue
    const state: InstanceModuleState = {
      id: record.id,
      connected: connected(record),
      enabled: Object.fromEntries((here?.sets ?? []).map((set) => [set.name, set.enabled])),
    }
    if (here !== undefined) state.version = here.version
    if (differs !== undefined) state.drift = differs
    states.push(state)
  }
  return states
}

/** What the instances that have a node set say of it: loaded by all of them, or the first error. */
export function loadedOf(name: string, set: string, { records, own }: Snapshot) {
  const sets = records.flatMap((record) => {
    const entry = own
      .get(record.id)
      ?.get(name)
      ?.sets.find((candidate) => candidate.name === set)
    return entry === undefined ? [] : [entry]
  })
  const failed = sets.find((entry) => entry.err !== undefined)
  return {
    loaded: sets.length > 0 && sets.every((entry) => entry.loaded),
    ...(failed?.err !== undefined && { err: failed.err }),
  }
}

/** A module's node sets as the instances loaded them (this process's own load state set aside). */
export const setsAsLoaded = (view: ModuleView, now: Snapshot) =>
  view.nodes.map((set) => {
    const { err: _stale, ...rest } = set
    return { ...rest, ...loadedOf(view.name, set.name, now) }
  })
