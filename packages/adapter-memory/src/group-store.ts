import type { GroupAssignment, GroupStore } from '@flowadmin/core'
import type { FleetRevision } from './fleet-revision.js'

const keyOf = (group: string, instance: string) => `${group}\u0000${instance}`

/** The groups' assignments over a Map; each change is one synchronous pass, its bump included. */
export function createGroupStore(revision: FleetRevision): GroupStore {
  const assignments = new Map<string, GroupAssignment>()
  return {
    async assign(assignment) {
      const key = keyOf(assignment.group, assignment.instance)
      if (assignments.has(key)) return false
      assignments.set(key, { ...assignment })
      revision.value += 1
      return true
    },
    async unassign(group, instance) {
      if (!assignments.delete(keyOf(group, instance))) return false
      revision.value += 1
      return true
    },
    async assignments() {
      return [...assignments.values()]
        .sort((a, b) =>
          a.group < b.group
            ? -1
            : a.group > b.group
              ? 1
              : a.instance < b.instance
                ? -1
                : a.instance > b.instance
                  ? 1
                  : 0,
        )
        .map((assignment) => ({ ...assignment }))
    },
  }
}
