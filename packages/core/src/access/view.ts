// What a person sees of their own access: their grants, the roles they name, and what the token in
// use may do on each scope (everywhere, flowadmin, each group of the settings).
import { intersectPermissions } from '../auth/permissions.js'
import { EVERYWHERE, FLOWADMIN_SCOPE, parseRightsWord } from './grants.js'
import type { AccessRights, Place } from './rights.js'

/** One of a person's grants: a role, or permissions given as such, on a scope. */
export type GrantView = { role: string; on: string } | { permissions: string[]; on: string }

export interface AccessView {
  username: string
  grants: GrantView[]
  /** The roles the grants name, with their permissions and lifetime (seconds; null: none). */
  roles: Record<string, { permissions: string[]; maxTokenLifetime: number | null }>
  /** What the token in use may do now on each scope, by name; a scope where it may do nothing is absent. */
  scopes: Record<string, string[]>
}

/**
 * What a token of `scope` words, `ageMs` old, of a person whose words are `owner` now, may do at
 * `place`: both must give it.
 */
export const tokenRightsAt = (
  rights: AccessRights,
  owner: readonly string[],
  scope: readonly string[],
  place: Place,
  ageMs: number,
): string[] => intersectPermissions(rights.at(scope, place, ageMs), rights.at(owner, place, ageMs))

/**
 * The access view of `owner` (the person's words now) through a token of `scope` words, `ageMs`
 * old. Grants of roles the settings no longer have are shown, and give nothing.
 */
export function accessView(
  rights: AccessRights,
  username: string,
  owner: readonly string[],
  scope: readonly string[],
  ageMs: number,
): AccessView {
  const grants: GrantView[] = []
  const plain = new Map<string, string[]>()
  const roles: AccessView['roles'] = {}
  for (const text of owner) {
    const word = parseRightsWord(text)
    if (word === null) continue
    const on = word.scope ?? EVERYWHERE
    if (word.kind === 'permission') {
      plain.set(on, [...(plain.get(on) ?? []), word.permission])
      continue
    }
    grants.push({ role: word.role, on })
    const role = rights.roles().get(word.role)
    if (role !== undefined)
      roles[role.name] = {
        permissions: [...role.permissions],
        maxTokenLifetime: role.maxAgeMs === null ? null : role.maxAgeMs / 1000,
      }
  }
  for (const [on, permissions] of plain) grants.unshift({ permissions, on })
  const at = (place: Place) => tokenRightsAt(rights, owner, scope, place, ageMs)
  const places: Array<[string, Place]> = [
    [EVERYWHERE, { kind: 'fleet' }],
    [FLOWADMIN_SCOPE, { kind: 'flowadmin' }],
    ...rights.membership.names().map((group): [string, Place] => [group, { kind: 'group', group }]),
  ]
  const scopes: AccessView['scopes'] = {}
  for (const [name, place] of places) {
    const permissions = at(place)
    if (permissions.length > 0) scopes[name] = permissions
  }
  return { username, grants, roles, scopes }
}
