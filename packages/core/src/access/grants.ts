// Grants: a role on a scope. A person's (or a token's) rights are kept as words, so that they travel
// in a token's scope like the permissions they extend: a permission word alone (`read`) holds
// everywhere, as before grants; `role:<name>` is a role everywhere; `role:<name>@<scope>` and
// `<permission>@<scope>` hold only on that scope, `flowadmin` (its own API) or a group.
import { PERMISSION_WORD } from '../auth/permissions.js'
import { GROUP_NAME_FORM } from '../fleet/identity-rules.js'
import { ROLE_NAME_FORM } from './roles.js'

/** Everywhere: flowadmin and every instance. */
export const EVERYWHERE = 'everywhere'
/** flowadmin's own API: sessions of others, resource servers, the fleet's desired state, the trail. */
export const FLOWADMIN_SCOPE = 'flowadmin'
/** Names no group may take: they are scopes of their own. */
export const RESERVED_SCOPES: readonly string[] = [EVERYWHERE, FLOWADMIN_SCOPE]

/** A role on a scope: `everywhere`, `flowadmin`, or a group's name. */
export interface Grant {
  role: string
  on: string
}

/** A rights word, parsed: a permission or a role, on a scope (null: everywhere). */
export type RightsWord =
  | { kind: 'permission'; permission: string; scope: string | null }
  | { kind: 'role'; role: string; scope: string | null }

const ROLE_PREFIX = 'role:'

/** A scope as a word writes it after `@`: flowadmin or a group (everywhere has no `@`). */
const isScopeName = (scope: string) => scope === FLOWADMIN_SCOPE || GROUP_NAME_FORM.test(scope)

/** A rights word parsed, or null when it is not one. */
export function parseRightsWord(word: string): RightsWord | null {
  const at = word.lastIndexOf('@')
  const head = at === -1 ? word : word.slice(0, at)
  const scope = at === -1 ? null : word.slice(at + 1)
  if (scope !== null && (scope === EVERYWHERE || !isScopeName(scope))) return null
  if (head.startsWith(ROLE_PREFIX)) {
    const role = head.slice(ROLE_PREFIX.length)
    return ROLE_NAME_FORM.test(role) ? { kind: 'role', role, scope } : null
  }
  return PERMISSION_WORD.test(head) ? { kind: 'permission', permission: head, scope } : null
}

/** Whether `word` is a rights word (see the file's first comment). */
export const isRightsWord = (word: string): boolean => parseRightsWord(word) !== null

/** The word of a grant: `role:<name>`, with `@<scope>` unless everywhere. */
export const grantWord = ({ role, on }: Grant): string =>
  on === EVERYWHERE ? `${ROLE_PREFIX}${role}` : `${ROLE_PREFIX}${role}@${on}`

/** A grant's scope that is a group's name, or null for everywhere and flowadmin. */
export const groupOfScope = (on: string): string | null =>
  on === EVERYWHERE || on === FLOWADMIN_SCOPE ? null : on

/**
 * What is wrong with a grant given the roles and groups there are, or null: its role or its group
 * unknown, each named.
 */
export function grantProblem(
  grant: Grant,
  known: { roles: { has(name: string): boolean }; groups: { has(name: string): boolean } },
): string | null {
  if (!known.roles.has(grant.role)) return `unknown role ${grant.role}`
  const group = groupOfScope(grant.on)
  if (group !== null && !known.groups.has(group))
    return `unknown group ${group} (declare it in fleet.groups, or grant on everywhere or flowadmin)`
  return null
}
