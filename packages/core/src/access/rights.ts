// A person's rights where a request is made: the union of their words (see grants.ts) whose scope
// holds that place. Worked out once per (words, place) and kept until roles or groups change, so a
// check costs a map lookup; only roles with a lifetime are looked at again, against the token's age.
import { hasPermission, intersectPermissions } from '../auth/permissions.js'
import { FLOWADMIN_SCOPE, parseRightsWord } from './grants.js'
import { createMembership, type GroupAssignment, type GroupRules } from './groups.js'
import { type Role, type RoleOptions, rolesOf } from './roles.js'

/**
 * Where rights are asked for: flowadmin's own API, one instance (by its enrolled id), or a
 * resource server that asks with its shared secret (`fleet`: which instance is unknown, so only
 * grants on everywhere count); `group`: an instance of that group alone (to show a person theirs).
 */
export type Place =
  | { kind: 'flowadmin' }
  | { kind: 'instance'; instance: string }
  | { kind: 'fleet' }
  | { kind: 'group'; group: string }

export const AT_FLOWADMIN: Place = { kind: 'flowadmin' }

/** Permissions that hold while a token is younger than `maxAgeMs` (null: always). */
interface Entry {
  permissions: readonly string[]
  maxAgeMs: number | null
}

/** Words sorted by scope: everywhere, flowadmin, and each group's; and their rights at each place asked. */
interface Compiled {
  everywhere: Entry[]
  flowadmin: Entry[]
  groups: Map<string, Entry[]>
  byPlace: Map<string, AtPlace>
}

/** Rights at one place: what always holds, and what holds while the token is young enough. */
interface AtPlace {
  always: string[]
  limited: Entry[]
}

/** One list of words for a union: `*` alone when present. */
function union(lists: Iterable<readonly string[]>): string[] {
  const words = new Set<string>()
  for (const list of lists) for (const word of list) words.add(word)
  return words.has('*') ? ['*'] : [...words]
}

/** Most lists of words, and places of one list, kept; past it they are forgotten and worked out again. */
const MAX_CACHED = 50_000

export interface AccessOptions {
  roles?: Readonly<Record<string, RoleOptions>> | undefined
  groups?: GroupRules | undefined
}

/** The roles, the groups and the rights they make: see the file's first comment. */
export function createAccessRights(
  options: AccessOptions = {},
  assignments: readonly GroupAssignment[] = [],
) {
  let roles: ReadonlyMap<string, Role> = rolesOf(options.roles)
  let rules: GroupRules = options.groups ?? {}
  const membership = createMembership(rules, assignments)
  let compiled = new Map<string, Compiled>()
  // The same list of words (a user's, read on every request) is found without joining it.
  let byList = new WeakMap<readonly string[], Compiled>()
  let revision = membership.revision()

  const forget = () => {
    compiled = new Map()
    byList = new WeakMap()
    revision = membership.revision()
  }

  /** The entry a word gives (null when it names a role there is not). */
  const entryOf = (word: ReturnType<typeof parseRightsWord>): Entry | null => {
    if (word === null) return null
    if (word.kind === 'permission') return { permissions: [word.permission], maxAgeMs: null }
    const role = roles.get(word.role)
    return role === undefined ? null : { permissions: role.permissions, maxAgeMs: role.maxAgeMs }
  }

  function compile(words: readonly string[]): Compiled {
    const listed = byList.get(words)
    if (listed !== undefined) return listed
    const key = words.join(' ')
    const found = compiled.get(key)
    if (found !== undefined) {
      byList.set(words, found)
      return found
    }
    const result: Compiled = { everywhere: [], flowadmin: [], groups: new Map(), byPlace: new Map() }
    for (const text of words) {
      const word = parseRightsWord(text)
      const entry = entryOf(word)
      if (word === null || entry === null) continue
      if (word.scope === null) result.everywhere.push(entry)
      else if (word.scope === FLOWADMIN_SCOPE) result.flowadmin.push(entry)
      else result.groups.set(word.scope, [...(result.groups.get(word.scope) ?? []), entry])
    }
    if (compiled.size >= MAX_CACHED) compiled = new Map()
    compiled.set(key, result)
    byList.set(words, result)
    return result
  }

  const placeKey = (place: Place) =>
    place.kind === 'instance'
      ? `i:${place.instance}`
      : place.kind === 'group'
        ? `g:${place.group}`
        : place.kind === 'flowadmin'
          ? 'f'
          : 'e'

  function entriesAt(words: readonly string[], place: Place): AtPlace {
    // A change of the assignments elsewhere (another flowadmin's, or the API's) empties the caches.
    if (revision !== membership.revision()) forget()
    const { everywhere, flowadmin, groups, byPlace } = compile(words)
    const key = placeKey(place)
    const found = byPlace.get(key)
    if (found !== undefined) return found
    const entries = [...everywhere]
    if (place.kind === 'flowadmin') entries.push(...flowadmin)
    else if (place.kind === 'instance')
      for (const group of membership.groupsOf(place.instance)) entries.push(...(groups.get(group) ?? []))
    else if (place.kind === 'group') entries.push(...(groups.get(place.group) ?? []))
    const result: AtPlace = {
      always: union(entries.filter((entry) => entry.maxAgeMs === null).map((entry) => entry.permissions)),
      limited: entries.filter((entry) => entry.maxAgeMs !== null),
    }
    if (byPlace.size >= MAX_CACHED) byPlace.clear()
    byPlace.set(key, result)
    return result
  }

  /** Every permission of the words, whatever their scope and lifetime: what they may ever give. */
  const anywhere = (words: readonly string[]): string[] => {
    const { everywhere, flowadmin, groups } = compile(words)
    return union([everywhere, flowadmin, ...groups.values()].flat().map((entry) => entry.permissions))
  }

  /** The permissions of an everywhere-only reading of the words (plain words and roles everywhere). */
  const everywhereOf = (words: readonly string[]): string[] =>
    union(compile(words).everywhere.map((entry) => entry.permissions))

  return {
    membership,
    /** The roles now, by name. */
    roles: (): ReadonlyMap<string, Role> => roles,
    /** The settings' groups now: each group's instance id patterns. */
    groups: (): GroupRules => rules,

    /** New roles and group rules (a reload); throws, changing nothing, for a malformed role. */
    set(next: AccessOptions): void {
      const nextRoles = rolesOf(next.roles)
      roles = nextRoles
      rules = next.groups ?? {}
      membership.setRules(rules)
      forget()
    },

    /** The assignments now (read from the store at start and after every change). */
    setAssignments(list: readonly GroupAssignment[]): void {
      membership.setAssignments(list)
      forget()
    },

    /**
     * The permissions `words` give at `place` to a token `ageMs` old: the union of the words whose
     * scope holds the place, a role with a lifetime only while the token is younger.
     */
    at(words: readonly string[], place: Place, ageMs: number): string[] {
      const { always, limited } = entriesAt(words, place)
      if (limited.length === 0) return always
      const young = limited.filter((entry) => entry.maxAgeMs !== null && ageMs < entry.maxAgeMs)
      return young.length === 0 ? always : union([always, ...young.map((entry) => entry.permissions)])
    },

    anywhere,

    /** Whether every permission of `word` (a rights word) is among what `words` may ever give. */
    covers(words: readonly string[], word: string): boolean {
      const parsed = parseRightsWord(word)
      const entry = entryOf(parsed)
      return entry !== null && hasPermission(anywhere(words), entry.permissions)
    },

    /**
     * The words of `before` that `now` still gives (a person signed in elsewhere, their groups
     * read again): permissions everywhere meet as permissions do; a scoped word or a role stays
     * when `now` holds it as it is, and `before` held it or held all its permissions everywhere.
     */
    narrow(before: readonly string[], now: readonly string[]): string[] {
      const plainNow = now.filter((word) => !word.includes('@') && !word.startsWith('role:'))
      const beforeEverywhere = everywhereOf(before)
      const kept = intersectPermissions(beforeEverywhere, plainNow)
      for (const word of now) {
        if (plainNow.includes(word)) continue
        const entry = entryOf(parseRightsWord(word))
        if (before.includes(word) || (entry !== null && hasPermission(beforeEverywhere, entry.permissions)))
          kept.push(word)
      }
      return kept
    },
  }
}

export type AccessRights = ReturnType<typeof createAccessRights>
