import type { InstanceRecord, ModuleRecord } from '../ports/index.js'
import type { DesiredView } from './drift.js'

/**
 * The modules instances report that no operator decided (not in the desired state, not removed
 * through flowadmin), sorted by name: each set as the first instance (by id) that has it lists it,
 * shown enabled when every instance that has it has it enabled.
 */
export function undecidedOf(records: readonly InstanceRecord[], desired: DesiredView): ModuleRecord[] {
  const found = new Map<string, ModuleRecord>()
  for (const record of records) {
    for (const module of record.report?.modules ?? []) {
      if (desired.decided.has(module.name) || desired.installs.get(module.name)?.action === 'remove') continue
      let entry = found.get(module.name)
      if (entry === undefined) {
        entry = { name: module.name, version: module.version, sets: [] }
        found.set(module.name, entry)
      }
      for (const set of module.sets) {
        const known = entry.sets.find((candidate) => candidate.name === set.name)
        if (known === undefined) {
          entry.sets.push({
            id: `${module.name}/${set.name}`,
            name: set.name,
            module: module.name,
            types: [...set.types],
            enabled: set.enabled,
          })
        } else if (!set.enabled) known.enabled = false
      }
    }
  }
  return [...found.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}
