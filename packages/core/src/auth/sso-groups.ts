import { toPermissionList } from './permissions.js'

/** The group names of a groups claim: one name, a list of them, or none. */
const namesOf = (claim: unknown): unknown[] =>
  typeof claim === 'string' ? [claim] : Array.isArray(claim) ? claim : []

/** The permissions a person's groups map to: every mapped group's, `*` alone when any gives it. */
export function permissionsOfGroups(
  groups: unknown,
  map: Readonly<Record<string, string | readonly string[]>>,
): string[] {
  const names = namesOf(groups)
  const granted = new Set<string>()
  for (const name of names) {
    if (typeof name !== 'string' || !Object.hasOwn(map, name)) continue
    for (const word of toPermissionList(map[name])) granted.add(word)
  }
  return granted.has('*') ? ['*'] : [...granted]
}

/** The groups claim as a short list for a message. */
export function groupsOf(claim: unknown): string {
  return namesOf(claim)
    .filter((name): name is string => typeof name === 'string')
    .slice(0, 10)
    .map((name) => name.slice(0, 64))
    .join(', ')
}
