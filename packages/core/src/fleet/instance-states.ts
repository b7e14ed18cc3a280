import type { ModuleView } from '../modules/local-state.js'
import type { InstanceRecord, ReportedModule } from '../ports/index.js'
import { type DesiredView, type Drift, driftOf } from './drift.js'

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
 * drift by module, and whether it is connected (its lease runs) at `now`.
 */
export interface Snapshot {
  records: readonly InstanceRecord[]
  own: ReadonlyMap<string, ReadonlyMap<string, ReportedModule>>
  drift: ReadonlyMap<string, ReadonlyMap<string, Drift>>
  now: number
}

/** Whether the instance is in touch at `now`: its lease runs. */
export const connectedAt = (record: { leaseUntil: number }, now: number) => record.leaseUntil > now

/** The snapshot of these instances against the desired state (of module `only` alone when given). */
export function snapshotOf(
  records: readonly InstanceRecord[],
  desired: DesiredView,
  now: number,
  only?: string,
): Snapshot {
  const own = new Map<string, Map<string, ReportedModule>>()
  const drift = new Map<string, Map<string, Drift>>()
  for (const record of records) {
    const mine = new Map<string, ReportedModule>()
    for (const module of record.report?.modules ?? []) {
      if ((only === undefined || module.name === only) && !mine.has(module.name))
        mine.set(module.name, module)
    }
    own.set(record.id, mine)
    drift.set(record.id, new Map(driftOf(record.report, desired, only).map((entry) => [entry.module, entry])))
  }
  return { records, own, drift, now }
}

/** Each instance's own state of module `name`: those that have it, or differ. */
export function statesOf(name: string, { records, own, drift, now }: Snapshot): InstanceModuleState[] {
  const states: InstanceModuleState[] = []
  for (const record of records) {
    const differs = drift.get(record.id)?.get(name)
    const here = own.get(record.id)?.get(name)
    if (here === undefined && differs === undefined) continue
    const state: InstanceModuleState = {
      id: record.id,
      connected: connectedAt(record, now),
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
