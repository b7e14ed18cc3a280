import type {
  FleetAction,
  FleetInstall,
  HandChange,
  InstanceReport,
  ModuleRecord,
  ReportedModule,
} from '../ports/index.js'

// Where an instance differs from the fleet's desired state, and why: judged on the desired state
// and on that instance's own report alone, never on what the other instances have.

export type DriftReason =
  | 'pending'
  | 'applying'
  | 'refused'
  | 'install_failed'
  | 'remove_failed'
  | 'version_mismatch'
  | 'restart_needed'
  | 'changed_by_hand'
  | 'removed_by_hand'
  | 'installed_by_hand'

/**
 * A module where an instance differs from the desired state: `pending` (it has not applied the
 * current revision yet), `applying` (it says it is at it), `refused`, `install_failed`,
 * `remove_failed` (`message` is Node-RED's or npm's), `version_mismatch` (it runs another version
 * than flowadmin installed, or another version waits for its next start; `by` and `at` when a
 * hand change put it there), `restart_needed` (the version is installed, Node-RED loads it at its
 * next start), `changed_by_hand`, `removed_by_hand`, `installed_by_hand` (with `by` and `at` when
 * its report told of the hand change; an undecided module is `installed_by_hand` too).
 */
export interface Drift {
  module: string
  reason: DriftReason
  message?: string
  /** Who made the hand change, when Node-RED named someone. */
  by?: string | null
  /** When the hand change was made (ms since the epoch, the instance's clock). */
  at?: number
}

/** The desired state as drift needs it, built once per revision. */
export interface DesiredView {
  revision: number
  /** The decided modules, by name. */
  decided: ReadonlyMap<string, ModuleRecord>
  /** What flowadmin installed or removed, by module. */
  installs: ReadonlyMap<string, FleetInstall>
}

/** Whether the report says it finished working on `revision` (or a later one). */
export const caughtUp = (report: InstanceReport, revision: number) =>
  report.applied !== null && /^\d{1,15}$/.test(report.applied) && Number(report.applied) >= revision

/** Whether a decided module's node sets differ there from the desired flags. */
export const setsDiffer = (module: ModuleRecord, here: InstanceReport['modules'][number]) =>
  module.sets.some((set) => {
    const own = here.sets.find((candidate) => candidate.name === set.name)
    return own !== undefined && own.enabled !== set.enabled
  })

const HAND_REASONS: Record<FleetAction, DriftReason> = {
  enable: 'changed_by_hand',
  disable: 'changed_by_hand',
  install: 'installed_by_hand',
  upgrade: 'installed_by_hand',
  remove: 'removed_by_hand',
}
const FAILED: Partial<Record<FleetAction, DriftReason>> = {
  enable: 'refused',
  disable: 'refused',
  install: 'install_failed',
  upgrade: 'install_failed',
  remove: 'remove_failed',
}

/**
 * The drift of one instance against the desired state, one entry per module at most (of module
 * `only` alone when given), in the order: desired modules, then the instance's others.
 */
export function driftOf(report: InstanceReport | null, desired: DesiredView, only?: string): Drift[] {
  if (report === null) return []
  const drift: Drift[] = []
  const { mine, hands, flags } = indexOf(report)
  const behind = !caughtUp(report, desired.revision)

  /** Why module `name` differs, on the evidence the report gives; `otherwise` when it gives none. */
  const why = (name: string, actions: FleetAction[], otherwise: Drift): Drift => {
    const failed = report.failures.find((entry) => entry.module === name && actions.includes(entry.action))
    const reason = failed && FAILED[failed.action]
    if (failed && reason) return { module: name, reason, message: failed.message }
    const hand = [flags.get(name), hands.get(name)].find(
      (change) => change !== undefined && actions.includes(change.action),
    )
    if (hand !== undefined) return handDrift(hand)
    if (report.applying === true) return { module: name, reason: 'applying' }
    return behind ? { module: name, reason: 'pending' } : otherwise
  }

  const judge = (name: string): Drift | null => {
    const here = mine.get(name)
    const install = desired.installs.get(name)
    const decided = desired.decided.get(name)
    const pending: Drift = { module: name, reason: 'pending' }
    if (install?.action === 'remove') {
      return here === undefined ? null : why(name, ['remove', 'install', 'upgrade'], pending)
    }
    if (here === undefined) {
      if (install?.action === 'install') return why(name, ['install', 'upgrade', 'remove'], pending)
      const hand = hands.get(name)
      return hand?.action === 'remove' ? handDrift(hand) : null
    }
    const wanted = install?.action === 'install' ? install.version : null
    if (wanted !== null && here.version !== wanted) {
      if (here.pendingVersion === wanted) {
        return {
          module: name,
          reason: 'restart_needed',
          message: `runs ${here.version}, ${wanted} is installed and loads when Node-RED restarts`,
        }
      }
      return why(name, ['install', 'upgrade'], {
        module: name,
        reason: 'version_mismatch',
        message: `runs ${here.version}, desired ${wanted}`,
      })
    }
    if (wanted !== null && here.pendingVersion !== undefined && here.pendingVersion !== wanted) {
      // It runs the desired version, and another one waits for its next start (installed by hand).
      const hand = hands.get(name)
      return {
        module: name,
        reason: 'version_mismatch',
        message: `runs ${here.version}, desired ${wanted}; ${here.pendingVersion} is installed and loads when Node-RED restarts`,
        ...(hand !== undefined &&
          (hand.action === 'upgrade' || hand.action === 'install') && { by: hand.by, at: hand.at }),
      }
    }
    if (decided !== undefined && setsDiffer(decided, here)) return why(name, ['enable', 'disable'], pending)
    if (install?.action === 'install') return null
    const hand = hands.get(name)
    if (decided === undefined) return hand ? handDrift(hand) : { module: name, reason: 'installed_by_hand' }
    return hand !== undefined && (hand.action === 'install' || hand.action === 'upgrade')
      ? handDrift(hand)
      : null
  }

  const names =
    only === undefined
      ? [
          ...new Set([
            ...desired.decided.keys(),
            ...desired.installs.keys(),
            ...mine.keys(),
            ...[...hands.values()].filter((hand) => hand.action === 'remove').map((hand) => hand.module),
          ]),
        ]
      : [only]
  for (const name of names) {
    const entry = judge(name)
    if (entry !== null) drift.push(entry)
  }
  return drift
}

interface ReportIndex {
  mine: ReadonlyMap<string, ReportedModule>
  /** The latest hand install, upgrade or removal of each module. */
  hands: ReadonlyMap<string, HandChange>
  /** The latest hand enable or disable of each module. */
  flags: ReadonlyMap<string, HandChange>
}

/** A report's modules and hand changes by module name, made once per report (reports are not changed once read). */
const indexes = new WeakMap<InstanceReport, ReportIndex>()
function indexOf(report: InstanceReport): ReportIndex {
  let index = indexes.get(report)
  if (index === undefined) {
    const mine = new Map<string, ReportedModule>()
    for (const module of report.modules) if (!mine.has(module.name)) mine.set(module.name, module)
    const hands = new Map<string, HandChange>()
    const flags = new Map<string, HandChange>()
    for (const change of report.handChanges ?? []) {
      ;(change.action === 'enable' || change.action === 'disable' ? flags : hands).set(change.module, change)
    }
    index = { mine, hands, flags }
    indexes.set(report, index)
  }
  return index
}

const handDrift = (hand: HandChange): Drift => ({
  module: hand.module,
  reason: HAND_REASONS[hand.action],
  by: hand.by,
  at: hand.at,
})

/**
 * Whether the instance runs the desired state: no drift but of what flowadmin does not govern
 * there (a module installed by hand that is not to be removed, or a hand removal of a module
 * flowadmin did not install).
 */
export const runsDesired = (drift: readonly Drift[], desired: DesiredView) =>
  drift.every((entry) => {
    const action = desired.installs.get(entry.module)?.action
    return (
      (entry.reason === 'installed_by_hand' && action !== 'remove') ||
      (entry.reason === 'removed_by_hand' && action !== 'install')
    )
  })
