import type { ModuleRecord, ModuleStore } from '@flowadmin/core'
import { createFleetRevision, type FleetRevision } from './fleet-revision.js'

// Modules are copied in and out, so no caller can change what the store holds behind its back.
const copyModule = (module: ModuleRecord): ModuleRecord => ({
  name: module.name,
  version: module.version,
  sets: module.sets.map((set) => ({ ...set, types: [...set.types] })),
})

/** Modules and their node sets; a change to a module is one synchronous pass, its bump included. */
export function createModuleStore(revision: FleetRevision = createFleetRevision()): ModuleStore {
  const modules = new Map<string, ModuleRecord>()
  return {
    async upsert(descriptor) {
      const before = modules.get(descriptor.name)
      const known = new Map(before?.sets.map((set) => [set.name, set.enabled]))
      const module: ModuleRecord = {
        name: descriptor.name,
        version: descriptor.version,
        sets: descriptor.sets.map((set) => ({
          id: `${descriptor.name}/${set.name}`,
          name: set.name,
          module: descriptor.name,
          types: [...set.types],
          enabled: known.get(set.name) ?? set.enabled ?? true,
        })),
      }
      modules.set(module.name, module)
      if (before === undefined || JSON.stringify(before) !== JSON.stringify(module)) revision.value += 1
      return copyModule(module)
    },
    async find(name) {
      const module = modules.get(name)
      return module ? copyModule(module) : null
    },
    async list() {
      return [...modules.values()]
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
        .map(copyModule)
    },
    async setEnabled(name, sets, enabled) {
      const module = modules.get(name)
      if (!module) return null
      const names = new Set(sets)
      // One synchronous pass: no other call can observe a half-applied change.
      let changed = false
      for (const set of module.sets) {
        if (names.has(set.name) && set.enabled !== enabled) {
          set.enabled = enabled
          changed = true
        }
      }
      if (changed) revision.value += 1
      return copyModule(module)
    },
    async remove(name) {
      const removed = modules.delete(name)
      if (removed) revision.value += 1
      return removed
    },
  }
}
