import type { FleetInstall, InstanceRecord, ModuleRecord } from '../ports/index.js'

// Where an instance differs from the fleet's desired modules, and why.

/**
 * Where an instance differs from the desired state: `pending` (not applied yet), `refused`
 * (Node-RED refused the change; `message` is its own), `install_failed` (npm's first error line),
 * `remove_failed`, or `installed_by_hand` (not installed through flowadmin, and not on every
 * instance).
 */
export interface Drift {
  module: string
  reason: 'pending' | 'refused' | 'install_failed' | 'remove_failed' | 'installed_by_hand'
  message?: string
}

/** How many instances have reported, and how many of them have each module: counted once per answer. */
export interface Holders {
  reported: number
  of: ReadonlyMap<string, number>
}

/** Counts the holders of each module among the instances that reported. */
export function holdersOf(everyone: readonly InstanceRecord[]): Holders {
  const of = new Map<string, number>()
  let reported = 0
  for (const record of everyone) {
    if (record.report === null) continue
    reported += 1
    for (const name of new Set(record.report.modules.map((module) => module.name))) {
      of.set(name, (of.get(name) ?? 0) + 1)
    }
  }
  return { reported, of }
}

/** The drift of one instance against the desired modules; `holders` is `holdersOf` every instance. */
export function driftOf(
  record: InstanceRecord,
  desired: readonly ModuleRecord[],
  installs: ReadonlyMap<string, FleetInstall>,
  holders: Holders,
): Drift[] {
  const report = record.report
  if (report === null) return []
  const drift: Drift[] = []
  const mine = new Map(report.modules.map((module) => [module.name, module]))
  const failure = (module: string, actions: string[]) =>
    report.failures.find((entry) => entry.module === module && actions.includes(entry.action))
  for (const module of desired) {
    const here = mine.get(module.name)
    if (here === undefined) {
      if (installs.get(module.name)?.action !== 'install') continue
      const failed = failure(module.name, ['install'])
      drift.push(
        failed
          ? { module: module.name, reason: 'install_failed', message: failed.message }
          : { module: module.name, reason: 'pending' },
      )
      continue
    }
    const differs = module.sets.some((set) => {
      const own = here.sets.find((candidate) => candidate.name === set.name)
      return own !== undefined && own.enabled !== set.enabled
    })
    if (differs) {
      const failed = failure(module.name, ['enable', 'disable'])
      drift.push(
        failed
          ? { module: module.name, reason: 'refused', message: failed.message }
          : { module: module.name, reason: 'pending' },
      )
      continue
    }
    // Not on every instance that reported.
    const hand =
      installs.get(module.name)?.action !== 'install' && (holders.of.get(module.name) ?? 0) < holders.reported
    if (hand) drift.push({ module: module.name, reason: 'installed_by_hand' })
  }
  for (const module of report.modules) {
    if (installs.get(module.name)?.action !== 'remove') continue
    const failed = failure(module.name, ['remove'])
    drift.push(
      failed
        ? { module: module.name, reason: 'remove_failed', message: failed.message }
        : { module: module.name, reason: 'pending' },
    )
  }
  return drift
}
