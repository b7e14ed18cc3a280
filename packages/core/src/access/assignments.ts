// The groups' assignments over the API: an operator with every right on flowadmin puts an instance
// in a declared group or takes it out, each change in the trail; the rights follow at once here,
// and in another flowadmin sharing the store at its next refresh.
import { type AccessError, actorOf, type Principal } from '../auth/principal.js'
import { type DomainError, err, invalid, ok, type Result } from '../errors.js'
import { INSTANCE_ID_FORM } from '../fleet/identity-rules.js'
import type { Clock, EventSink, GroupAssignment, GroupStore } from '../ports/index.js'
import type { AccessRights } from './rights.js'

/** A group as people see it: its rules' patterns and the instances put in it over the API. */
export interface GroupView {
  name: string
  patterns: string[]
  assigned: Array<Omit<GroupAssignment, 'group'>>
}

export type AssignmentError =
  | Extract<AccessError, { code: 'forbidden' }>
  | Extract<DomainError, { code: 'group_not_found' | 'assignment_not_found' | 'invalid_request' }>

export interface AssignmentDeps {
  store: GroupStore
  rights: AccessRights
  events: EventSink
  clock: Clock
  /**
   * Told after each change (the store bumped the fleet's revision with it, so instances' polls see
   * their groups' flows): unfinished rollouts stop waiting for instances taken out of their group.
   */
  changed?: (() => Promise<void>) | undefined
}

export function createGroupAssignments({ store, rights, events, clock, changed }: AssignmentDeps) {
  let known: GroupAssignment[] = []
  /** Reads the assignments from the store and makes them count. */
  const refresh = async (): Promise<void> => {
    known = await store.assignments()
    rights.setAssignments(known)
  }

  /** Who may change assignments, and of which group: `*` on flowadmin, a declared group, an id. */
  function check(principal: Principal, group: string, instance: string): Result<void, AssignmentError> {
    if (!principal.permissions.includes('*')) return err({ code: 'forbidden', permission: '*' })
    if (!rights.membership.has(group)) return err({ code: 'group_not_found', group })
    if (!INSTANCE_ID_FORM.test(instance))
      return err(
        invalid('instance: 1 to 128 letters, digits, ".", "_" or "-", starting with a letter or digit'),
      )
    return ok(undefined)
  }

  return {
    refresh,

    /** Puts `instance` in `group`: true when it was not there (audited), false when it was already. */
    async assign(
      principal: Principal,
      group: string,
      instance: string,
      address: string | null,
    ): Promise<Result<boolean, AssignmentError>> {
      const allowed = check(principal, group, instance)
      if (!allowed.ok) return allowed
      const at = clock.now()
      const by = principal.kind === 'user' ? principal.username : null
      const added = await store.assign({ group, instance, by, at })
      if (added) {
        events.emit({ type: 'access.group_assigned', at, group, instance, ...actorOf(principal, address) })
        await refresh()
        await changed?.()
      }
      return ok(added)
    },

    /** Takes `instance` out of `group` (audited); `assignment_not_found` when it was not put there. */
    async unassign(
      principal: Principal,
      group: string,
      instance: string,
      address: string | null,
    ): Promise<Result<void, AssignmentError>> {
      const allowed = check(principal, group, instance)
      if (!allowed.ok) return allowed
      if (!(await store.unassign(group, instance)))
        return err({ code: 'assignment_not_found', group, instance })
      events.emit({
        type: 'access.group_unassigned',
        at: clock.now(),
        group,
        instance,
        ...actorOf(principal, address),
      })
      await refresh()
      await changed?.()
      return ok(undefined)
    },

    /** Every declared group with its patterns and assignments (as last read), by name. */
    list(): GroupView[] {
      const rules = rights.groups()
      return rights.membership.names().map((name) => ({
        name,
        patterns: [...(rules[name] ?? [])],
        assigned: known
          .filter((each) => each.group === name)
          .map(({ instance, by, at }) => ({ instance, by, at })),
      }))
    },
  }
}

export type GroupAssignments = ReturnType<typeof createGroupAssignments>
