import type { HandChange, InstanceReport } from '../ports/index.js'
import { type DesiredView, setsDiffer } from './drift.js'

/** Flags (enable, disable) apart from the rest (install, upgrade, remove), by module. */
const keyOf = (change: { module: string; action: string }) =>
  `${change.action === 'enable' || change.action === 'disable' ? 'flags' : 'module'}\n${change.module}`

/**
 * The hand changes still in effect on an instance after this report: those kept from its previous
 * report and those it tells of now, the latest of each module, less what its agent reverted and
 * what no longer holds (a change of flags the sets no longer show, an install of a module gone,
 * a removal of a module back or removed through flowadmin).
 */
export function handChangesAfter(
  previous: InstanceReport | null,
  report: InstanceReport,
  desired: DesiredView,
): HandChange[] {
  // The latest of each module's installs (upgrades, removals) and of its flags, apart: a set
  // disabled after a hand install does not hide who installed it.
  const latest = new Map((previous?.handChanges ?? []).map((change) => [keyOf(change), change]))
  for (const change of report.changes ?? []) latest.set(keyOf(change), change)
  for (const undone of report.reverted ?? []) {
    const key = keyOf(undone)
    if (latest.get(key)?.action === undone.action) latest.delete(key)
  }
  const here = new Map(report.modules.map((module) => [module.name, module]))
  return [...latest.values()].filter((change) => {
    const module = here.get(change.module)
    if (change.action === 'remove') {
      return module === undefined && desired.installs.get(change.module)?.action !== 'remove'
    }
    if (change.action === 'install' || change.action === 'upgrade') return module !== undefined
    const decided = desired.decided.get(change.module)
    return module !== undefined && decided !== undefined && setsDiffer(decided, module)
  })
}
