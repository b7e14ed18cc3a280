import { type DomainError, err, ok, type Result } from '../errors.js'
import type { Actor, Clock, EventSink, ModuleRecord, ModuleStore } from '../ports/index.js'
import type { TypeCheck } from './type-check.js'

type AdoptError = Extract<DomainError, { code: 'node_set_not_found' | 'type_in_use' | 'flows_unavailable' }>

/**
 * Modules known only by report (a fleet's instances report them, no operator decided them): each
 * set's `enabled` as they show it. The module routes list them beside the stored ones.
 */
export interface ReportedModules {
  /** Sorted by name; none the store holds. */
  list(): Promise<ModuleRecord[]>
  find(name: string): Promise<ModuleRecord | null>
}

/**
 * An operator's decision on a module known only by report: the sets named (every set when `only`
 * is null) take `enabled`, the others the state shown, all in one write of the store (no moment
 * where a set has another flag). Refused, changing nothing, when a set it would disable has a
 * type the flows use. The event `module.adopted` names every set's flag; `module.enabled` or
 * `module.disabled` the sets named whose shown state it changes.
 */
export async function adopt(
  { store, events, clock, check }: { store: ModuleStore; events: EventSink; clock: Clock; check: TypeCheck },
  reported: ModuleRecord,
  only: string | null,
  enabled: boolean,
  actor: Actor,
): Promise<Result<ModuleRecord, AdoptError>> {
  const name = reported.name
  const named = reported.sets.filter((set) => only === null || set.name === only)
  if (named.length === 0) return err({ code: 'node_set_not_found', module: name, set: only ?? '' })
  const asked = new Set(named.map((set) => set.name))
  const flagOf = (set: { name: string; enabled: boolean }) => (asked.has(set.name) ? enabled : set.enabled)
  const off = reported.sets.filter((set) => !flagOf(set))
  if (off.length > 0) {
    const blocked = await check.blockedTypes(off.flatMap((set) => set.types))
    if (!blocked.ok) return blocked
    if (blocked.value.length > 0) return check.inUse(blocked.value)
  }
  let stored = await store.upsert({
    name,
    version: reported.version,
    sets: reported.sets.map((set) => ({ name: set.name, types: [...set.types], enabled: flagOf(set) })),
  })
  // Decided elsewhere meanwhile: those flags stood, the sets named then change as asked.
  const late = stored.sets.filter((set) => asked.has(set.name) && set.enabled !== enabled)
  if (late.length > 0) {
    stored =
      (await store.setEnabled(
        name,
        late.map((set) => set.name),
        enabled,
      )) ?? stored
  }
  const at = clock.now()
  events.emit({
    type: 'module.adopted',
    at,
    module: name,
    sets: reported.sets.map((set) => ({ set: set.id, enabled: flagOf(set) })),
    ...actor,
  })
  const changing = named.filter((set) => set.enabled !== enabled)
  if (changing.length > 0) {
    events.emit({
      type: enabled ? 'module.enabled' : 'module.disabled',
      at,
      module: name,
      sets: changing.map((set) => set.id),
      ...actor,
    })
  }
  return ok(stored)
}
