// A caller's rights where a request acts: on flowadmin (the principal's permissions), at one
// instance, on every instance of a group, or anywhere; the checks that refuse record the refusal
// (`permission.denied`). Worked out from the person's grants now (see rights.ts and view.ts).
import { hasPermission } from '../auth/permissions.js'
import { actorOf, type Principal } from '../auth/principal.js'
import type { Clock, EventSink } from '../ports/index.js'
import type { AccessRights } from './rights.js'
import { tokenRightsAt } from './view.js'

/** Where rights at the fleet are asked: every instance of a group, or one instance. */
export type GroupOrInstance = { kind: 'group'; group: string } | { kind: 'instance'; instance: string }

export interface RightChecksDeps {
  rights: AccessRights
  /** The configured people's own permissions (what their tokens are bounded by). */
  users: { get(username: string): { permissions: readonly string[] } | undefined }
  clock: Clock
  events: EventSink
}

export function createRightChecks({ rights, users, clock, events }: RightChecksDeps) {
  const denied = (principal: Principal, permission: string, address: string | null) => {
    events.emit({ type: 'permission.denied', at: clock.now(), permission, ...actorOf(principal, address) })
    return false
  }

  /**
   * Whether `principal` may `permission` on every instance of a group, or on one instance: a
   * person by a grant everywhere or on a group that holds the place (one on flowadmin alone does
   * not reach instances); the command line and an open API by their permissions. Records nothing.
   */
  const mayAt = (principal: Principal, permission: string, place: GroupOrInstance): boolean => {
    if (principal.kind !== 'user') return hasPermission(principal.permissions, permission)
    const scope = principal.scope ?? principal.permissions
    const owner = users.get(principal.username)?.permissions ?? scope
    const age = clock.now() - principal.signedInAt
    return hasPermission(tokenRightsAt(rights, owner, scope, place, age), permission)
  }

  return {
    /**
     * Whether `principal` may `permission` where `instance` is concerned (its entry in a list, its
     * events in the trail): with that right on flowadmin, which shows the whole fleet, or at the
     * instance itself (the grants whose scope holds it).
     */
    permits(principal: Principal, permission: string, instance: string): boolean {
      if (hasPermission(principal.permissions, permission)) return true
      return principal.kind === 'user' && mayAt(principal, permission, { kind: 'instance', instance })
    },

    mayAt,

    /** As mayAt; when not, the refusal is recorded (`permission.denied`, from `address`) and false. */
    permitsAt(
      principal: Principal,
      permission: string,
      place: GroupOrInstance,
      address: string | null,
    ): boolean {
      return mayAt(principal, permission, place) || denied(principal, permission, address)
    },

    /**
     * The groups whose every instance `principal` may `permission` on (see mayAt), sorted; every
     * group with that right on flowadmin.
     */
    groupsWhere(principal: Principal, permission: string): string[] {
      const names = rights.membership.names()
      if (hasPermission(principal.permissions, permission)) return names
      return names.filter((group) => mayAt(principal, permission, { kind: 'group', group }))
    },

    /**
     * Whether `principal` may `permission` anywhere: on flowadmin, or at some instance through a
     * grant. When not, the refusal is recorded (`permission.denied`, from `address`) and false.
     */
    permitsSomewhere(principal: Principal, permission: string, address: string | null): boolean {
      if (hasPermission(principal.permissions, permission)) return true
      if (principal.kind === 'user') {
        const scope = principal.scope ?? principal.permissions
        const owner = users.get(principal.username)?.permissions ?? scope
        const anywhere = (words: readonly string[]) => hasPermission(rights.anywhere(words), permission)
        if (anywhere(owner) && anywhere(scope)) return true
      }
      return denied(principal, permission, address)
    },
  }
}
