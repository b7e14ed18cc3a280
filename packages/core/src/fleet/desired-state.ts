import type { FleetStore, ModuleStore } from '../ports/index.js'
import type { DesiredView } from './drift.js'

/** What every instance is asked to have. `version` is the revision's, which every change bumps. */
export interface DesiredState {
  version: string
  prune: boolean
  /** The longest this flowadmin holds a poll, in seconds: the agent asks for no more. */
  hold: number
  /** Each decided module's node sets and whether they are enabled, on every instance that has it. */
  modules: Array<{ name: string; sets: Array<{ name: string; enabled: boolean }> }>
  /**
   * Modules flowadmin installed, at the version installed: every instance installs them. With
   * `integrity` and `tarball` (the exact tarball flowadmin installed), an instance installs that
   * tarball, checked, and no other; without (old records), by name and version.
   */
  installs: Array<{ module: string; version: string | null; integrity?: string; tarball?: string }>
  /** Modules flowadmin removed: every instance that has them removes them. */
  removals: string[]
}

/** The desired state of one revision, as instances are sent it and as drift is judged against it. */
export interface DesiredSnapshot {
  state: DesiredState
  view: DesiredView
}

/**
 * The desired state, built once per revision: each look reads the revision alone (one small read)
 * and rebuilds only when it moved. The revision is read before the modules, so a snapshot may hold
 * a change newer than its revision, never an older one: the next look sees the newer revision.
 */
export function createDesiredState(modules: ModuleStore, fleet: FleetStore, hold: number) {
  let cached: DesiredSnapshot | null = null
  let building: { revision: number; snapshot: Promise<DesiredSnapshot> } | null = null

  async function build(): Promise<DesiredSnapshot> {
    const { revision, prune, installs } = await fleet.desired()
    const decided = await modules.list()
    const state: DesiredState = {
      version: String(revision),
      prune,
      hold,
      modules: decided.map((module) => ({
        name: module.name,
        sets: module.sets.map((set) => ({ name: set.name, enabled: set.enabled })),
      })),
      installs: installs
        .filter((entry) => entry.action === 'install')
        .map((entry) => ({
          module: entry.module,
          version: entry.version,
          ...(entry.integrity !== undefined &&
            entry.tarball !== undefined && { integrity: entry.integrity, tarball: entry.tarball }),
        })),
      removals: installs.filter((entry) => entry.action === 'remove').map((entry) => entry.module),
    }
    const view: DesiredView = {
      revision,
      decided: new Map(decided.map((module) => [module.name, module])),
      installs: new Map(installs.map((entry) => [entry.module, entry])),
    }
    return { state, view }
  }

  /** The snapshot of `revision` (or a newer one), built once however many ask at the same time. */
  function at(revision: number): Promise<DesiredSnapshot> {
    if (cached !== null && cached.view.revision >= revision) return Promise.resolve(cached)
    if (building === null || building.revision < revision) {
      const snapshot = build().then((built) => {
        if (cached === null || built.view.revision >= cached.view.revision) cached = built
        return built
      })
      building = { revision, snapshot }
      snapshot.then(
        () => {
          if (building?.snapshot === snapshot) building = null
        },
        () => {
          if (building?.snapshot === snapshot) building = null
        },
      )
    }
    return building.snapshot
  }

  return {
    /** The current desired state: one read of the revision, and a rebuild when it moved. */
    current: async (): Promise<DesiredSnapshot> => at(await fleet.revision()),
    /**
     * The snapshot last built when it is of `version`, read from nothing: for a caller that knows
     * otherwise that `version` is current. Null when it is not that one.
     */
    built: (version: string | undefined): DesiredSnapshot | null =>
      cached !== null && cached.state.version === version ? cached : null,
    /** The revision, read now. */
    revision: () => fleet.revision(),
  }
}

export type Desired = ReturnType<typeof createDesiredState>
