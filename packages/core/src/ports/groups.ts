// The groups' assignments: instances put in groups of instances over the API, besides the settings'
// rules. Kept durably; every flowadmin sharing the store reads them. Which rollout an instance's
// flows should be follows its groups, so each change bumps the fleet's revision with it.

/** An instance put in a group over the API. */
export interface GroupAssignment {
  group: string
  instance: string
  /** Who assigned it: a username, or null from the command line. */
  by: string | null
  /** When (ms since the epoch). */
  at: number
}

export interface GroupStore {
  /**
   * Saves the assignment and bumps the fleet's revision in the same transaction; false (and
   * nothing changes) when that instance is in that group already.
   */
  assign(assignment: GroupAssignment): Promise<boolean>
  /**
   * Deletes the assignment of `instance` to `group` and bumps the fleet's revision in the same
   * transaction; true when it was there (false: nothing changes).
   */
  unassign(group: string, instance: string): Promise<boolean>
  /** Every assignment, sorted by group, then instance. */
  assignments(): Promise<GroupAssignment[]>
}
