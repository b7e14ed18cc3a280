// What the parts of the Flows view share: the caller's rights, how a snapshot and a rollout are
// named, how a change is run, and the ids of a group's fields.
import type { User } from './api.js'
import type { GroupFlows, Rollout, Snapshot, Variable } from './api-flows.js'

/** What the caller may do: on flowadmin, and in a group. */
export interface Rights {
  flowadmin: string[]
  at: (group: string) => string[]
}

/**
 * The rights of `scopes` (what this session may do on each scope, from `GET /auth/access`); null:
 * no login is configured, so the API is open and anyone may do everything.
 */
export function rightsOf(user: User, scopes: Record<string, string[]> | null): Rights {
  if (scopes === null) return { flowadmin: ['*'], at: () => ['*'] }
  return { flowadmin: scopes.flowadmin ?? user.permissions, at: (group) => scopes[group] ?? [] }
}

/** Runs a change, then says what was done (of its answer) and shows it; false: it was refused. */
export type Change = <T>(work: () => Promise<T>, done: string | ((answer: T) => string)) => Promise<boolean>

/** A group's flows and its variables, as the view shows them. */
export interface GroupEntry {
  flows: GroupFlows
  variables: Variable[]
}

/** A snapshot as a person names it: `name@version`, or its id where it is not listed. */
export type SnapshotName = (id: string | null) => string

export const namer =
  (snapshots: Snapshot[] | null): SnapshotName =>
  (id) => {
    if (id === null) return 'none'
    const found = snapshots?.find((snapshot) => snapshot.id === id)
    return found === undefined ? id : `${found.name}@${found.version}`
  }

/** A rollout's snapshot as a person reads it, a rollback said so. */
export const rolloutName = (rollout: Rollout, name: SnapshotName) =>
  `${name(rollout.snapshot)}${rollout.kind === 'rollback' ? ' (rollback)' : ''}`

/** A DOM id from a group's name and what it names. */
export const idOf = (group: string, what: string) => `flows-${group.replace(/[^a-zA-Z0-9_-]/g, '_')}-${what}`
