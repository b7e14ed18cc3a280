import type { Clock, EventSink, FleetStore, InstanceReport, ReportSaved } from '../ports/index.js'
import type { Desired } from './desired-state.js'
import { type DesiredView, driftOf, runsDesired } from './drift.js'
import { handChangesAfter } from './hand-changes.js'

/** Drift that is an outcome of its own, an event once per distinct one. */
const OUTCOMES = new Set(['restart_needed', 'version_mismatch'])
const keyOf = (...parts: string[]) => parts.join('\n')

/**
 * An instance's reports: each saved when newer than the one stored (its `sequence`), with the hand
 * changes still in effect carried on; what it tells is evidence, never a decision. A saved report
 * is an event per news: each hand change and revert, each new refusal or version outcome, the
 * desired version it really runs (`fleet.applied`), and each module no instance reported before.
 */
export function createReportIntake(fleet: FleetStore, desired: Desired, clock: Clock, events: EventSink) {
  /** Modules known to have been reported already: not noted again. */
  const noted = new Set<string>()

  return async function report(
    id: string,
    resourceServer: string,
    sent: InstanceReport,
    sequence: number | null,
    address: string | null,
  ): Promise<ReportSaved> {
    const previous = await fleet.find(id)
    if (previous !== null && previous.resourceServer !== resourceServer) return 'conflict'
    const { state, view } = await desired.current()
    const before = previous?.report ?? null
    const { handChanges: _told, ...told } = sent
    const report: InstanceReport = { ...told, handChanges: handChangesAfter(before, told, view) }
    const now = clock.now()
    const saved = await fleet.saveReport(id, resourceServer, report, sequence, now)
    if (saved !== 'saved') return saved

    const base = { at: now, instance: id, username: null, clientId: resourceServer, address }
    for (const change of report.changes ?? []) {
      const { module, action, version, by, at } = change
      events.emit({
        type: 'fleet.changed_by_hand',
        ...base,
        module,
        action,
        version: version ?? null,
        by,
        changedAt: at,
      })
    }
    for (const { module, action } of report.reverted ?? []) {
      events.emit({ type: 'fleet.reverted', ...base, module, action })
    }
    const known = new Set(
      (before?.failures ?? []).map((entry) => keyOf(entry.module, entry.action, entry.message)),
    )
    for (const failure of report.failures) {
      if (known.has(keyOf(failure.module, failure.action, failure.message))) continue
      events.emit({ type: 'fleet.refused', ...base, ...failure })
    }
    const after = driftOf(report, view)
    const earlier = driftOf(before, view)
    const had = new Set(earlier.map((entry) => keyOf(entry.module, entry.reason, entry.message ?? '')))
    for (const entry of after) {
      if (!OUTCOMES.has(entry.reason) || had.has(keyOf(entry.module, entry.reason, entry.message ?? '')))
        continue
      const running = report.modules.find((module) => module.name === entry.module)?.version ?? ''
      const version = view.installs.get(entry.module)?.version ?? ''
      const type = entry.reason === 'restart_needed' ? 'fleet.restart_needed' : 'fleet.version_mismatch'
      events.emit({ type, ...base, module: entry.module, version, running })
    }
    if (report.applied === state.version && runsDesired(after, view)) {
      const already = before?.applied === report.applied && runsDesired(earlier, view)
      if (!already) events.emit({ type: 'fleet.applied', ...base, version: report.applied })
    }
    await noteModules(report, view, base)
    return 'saved'
  }

  /** `fleet.module_reported` for each undecided module of this report no instance reported before. */
  async function noteModules(
    report: InstanceReport,
    view: DesiredView,
    base: { at: number; instance: string; username: null; clientId: string; address: string | null },
  ) {
    const undecided = report.modules.filter(
      (module) =>
        !noted.has(module.name) && !view.decided.has(module.name) && !view.installs.has(module.name),
    )
    if (undecided.length === 0) return
    const first = new Set(
      await fleet.noteReported(
        undecided.map((module) => module.name),
        base.at,
      ),
    )
    for (const module of undecided) {
      noted.add(module.name)
      if (first.has(module.name)) {
        events.emit({ type: 'fleet.module_reported', ...base, module: module.name, version: module.version })
      }
    }
  }
}
