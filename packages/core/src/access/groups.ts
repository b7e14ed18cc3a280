// Groups of instances, decided at flowadmin alone: the settings' rules (instance id patterns, `*`
// any run of characters, `?` one) and the assignments made over the API (kept in the store).
// An instance's groups are worked out once per instance and change of either, never per request.
import { GROUP_NAME_FORM, INSTANCE_ID_FORM } from '../fleet/identity-rules.js'
import type { GroupAssignment } from '../ports/index.js'
import { RESERVED_SCOPES } from './grants.js'

/** The settings' groups: each group's instance id patterns (`fleet.groups`); a group may list none. */
export type GroupRules = Readonly<Record<string, readonly string[]>>

export type { GroupAssignment }

/** A pattern: an instance id's characters, `*` and `?`. */
export const GROUP_PATTERN_FORM = /^[A-Za-z0-9._*?-]{1,128}$/

/** What is wrong with a group's name, or null. */
export function groupNameProblem(name: string): string | null {
  if (!GROUP_NAME_FORM.test(name))
    return 'a group name is 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit'
  if (RESERVED_SCOPES.includes(name)) return `${name} is a scope of its own, not a group's name`
  return null
}

/** What is wrong with an instance id pattern, or null. */
export const groupPatternProblem = (pattern: string): string | null =>
  GROUP_PATTERN_FORM.test(pattern)
    ? null
    : 'a pattern is 1 to 128 letters, digits, ".", "_", "-", "*" (any characters) or "?" (one)'

/** A test of instance ids against one pattern (anchored: the whole id matches). */
export function patternMatcher(pattern: string): (instance: string) => boolean {
  if (!/[*?]/.test(pattern)) return (instance) => instance === pattern
  const source = pattern.replace(/[.]/g, '\\.').replace(/\*/g, '.*').replace(/\?/g, '.')
  const regex = new RegExp(`^${source}$`)
  return (instance) => regex.test(instance)
}

/** The groups every instance is in, from the rules and the assignments. */
export function createMembership(rules: GroupRules = {}, assignments: readonly GroupAssignment[] = []) {
  let matchers: Array<{ group: string; matches: (instance: string) => boolean }> = []
  let declared = new Set<string>()
  let assigned = new Map<string, Set<string>>()
  /** Each instance's groups once asked, sorted; emptied at every change. */
  let known = new Map<string, readonly string[]>()
  let revision = 0

  const setRules = (next: GroupRules) => {
    declared = new Set(Object.keys(next))
    matchers = Object.entries(next).flatMap(([group, patterns]) =>
      patterns.map((pattern) => ({ group, matches: patternMatcher(pattern) })),
    )
    known = new Map()
    revision++
  }
  const setAssignments = (list: readonly GroupAssignment[]) => {
    assigned = new Map()
    for (const { group, instance } of list) {
      const groups = assigned.get(instance) ?? new Set<string>()
      groups.add(group)
      assigned.set(instance, groups)
    }
    known = new Map()
    revision++
  }
  setRules(rules)
  setAssignments(assignments)

  return {
    setRules,
    setAssignments,
    /** Whether `group` is declared in the settings (assignments go only to declared groups). */
    has: (group: string): boolean => declared.has(group),
    /** The declared groups, sorted. */
    names: (): string[] => [...declared].sort(),
    /** The groups `instance` is in, sorted: a rule's pattern matches it, or it is assigned (to a declared group). */
    groupsOf(instance: string): readonly string[] {
      const cached = known.get(instance)
      if (cached !== undefined) return cached
      const groups = new Set<string>()
      if (INSTANCE_ID_FORM.test(instance)) {
        for (const { group, matches } of matchers) if (matches(instance)) groups.add(group)
        for (const group of assigned.get(instance) ?? []) if (declared.has(group)) groups.add(group)
      }
      const sorted = [...groups].sort()
      // Bounded: an id asked about is an enrolled instance's, but a flood of them must not grow this.
      if (known.size >= 100_000) known = new Map()
      known.set(instance, sorted)
      return sorted
    },
    /** Grows at every change of the rules or assignments: what was worked out before is stale. */
    revision: (): number => revision,
  }
}

export type Membership = ReturnType<typeof createMembership>
