import { type Grant, grantWord } from '../access/grants.js'

/** What one group of the provider or the directory gives: permissions (everywhere) and grants. */
export type GroupRights = string | ReadonlyArray<string | Grant>

/** The group names of a groups claim: one name, a list of them, or none. */
const namesOf = (claim: unknown): unknown[] =>
  typeof claim === 'string' ? [claim] : Array.isArray(claim) ? claim : []

/**
 * The rights a person's groups map to, as words (see access/grants.ts): every mapped group's
 * permissions and grants, `*` alone when any gives it everywhere.
 */
export function permissionsOfGroups(groups: unknown, map: Readonly<Record<string, GroupRights>>): string[] {
  const names = namesOf(groups)
  const granted = new Set<string>()
  for (const name of names) {
    if (typeof name !== 'string' || !Object.hasOwn(map, name)) continue
    const rights = map[name]
    const words = typeof rights === 'string' ? [rights] : (rights ?? [])
    for (const word of words) granted.add(typeof word === 'string' ? word : grantWord(word))
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
