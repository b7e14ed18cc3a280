import type { GroupAssignment, GroupStore } from '@flowadmin/core'

const keyOf = (group: string, instance: string) => `${group}\u0000${instance}`

/** The groups' assignments over a Map; each call is one synchronous pass. */
export function createGroupStore(): GroupStore {
  const assignments = new Map<string, GroupAssignment>()
  return {
    async assign(assignment) {
      const key = keyOf(assignment.group, assignment.instance)
      if (assignments.has(key)) return false
      assignments.set(key, { ...assignment })
      return true
    },
    async unassign(group, instance) {
      return assignments.delete(keyOf(group, instance))
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
