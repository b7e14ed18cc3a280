// Access as the console shows it: the groups of instances and their assignments, a person's own
// access, and who holds which role where.
import type { AccessView, Holding } from '@flowadmin/core'
import { json, succeed } from './api.js'

/** A group as `GET /fleet/groups` lists it: the settings' patterns and the instances put in it. */
export interface Group {
  name: string
  patterns: string[]
  assigned: Array<{ instance: string; by: string | null; at: string }>
}

/** The declared groups, by name (needs `read` on flowadmin). */
export const listGroups = (): Promise<Group[]> => json('fleet/groups')

const memberPath = (group: string, instance: string) =>
  `fleet/groups/${encodeURIComponent(group)}/instances/${encodeURIComponent(instance)}`

/** Puts `instance` in `group` (needs `*` on flowadmin). */
export const assignToGroup = (group: string, instance: string): Promise<void> =>
  succeed(memberPath(group, instance), { method: 'PUT' })

/** Takes `instance` out of `group`, where it was put (needs `*` on flowadmin). */
export const unassignFromGroup = (group: string, instance: string): Promise<void> =>
  succeed(memberPath(group, instance), { method: 'DELETE' })

export type OwnAccess = AccessView

/** The caller's own grants, the roles they name and what this session may do on each scope. */
export const ownAccess = (): Promise<OwnAccess> => json('auth/access')

export type Grant = Holding

/** Who holds which role where (needs `*` on flowadmin). */
export const listGrants = async (): Promise<Grant[]> =>
  (await json<{ grants: Grant[] }>('auth/grants')).grants
