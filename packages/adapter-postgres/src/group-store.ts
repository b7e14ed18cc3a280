import type { GroupStore } from '@flowadmin/core'
import { ASSIGNMENT_COLUMNS, type AssignmentRow, assignmentFromRow } from '@flowadmin/store-support'
import type { Database } from './database.js'
import { bumpRevision } from './fleet-state.js'

const ASSIGNMENTS = 'flowadmin_access_group_assignments'

/** The statements of the group store. */
export const GROUP_SQL = {
  assign: `INSERT INTO ${ASSIGNMENTS} (${ASSIGNMENT_COLUMNS}) VALUES ($1, $2, $3, $4)
           ON CONFLICT (group_name, instance) DO NOTHING`,
  unassign: `DELETE FROM ${ASSIGNMENTS} WHERE group_name = $1 AND instance = $2`,
  // Byte order, as the other stores sort: the database's collation would not.
  list: `SELECT ${ASSIGNMENT_COLUMNS} FROM ${ASSIGNMENTS} ORDER BY group_name COLLATE "C", instance COLLATE "C"`,
} as const

/** The groups' assignments; each change is one transaction with the fleet's revision bumped. */
export function createGroupStore(db: Database): GroupStore {
  /** Runs a change; bumps the revision (announced at commit) with it when it changed a row. */
  const counted = (sql: string, values: unknown[]) =>
    db.transaction(async (client) => {
      if (((await client.query(sql, values)).rowCount ?? 0) === 0) return false
      await bumpRevision(client)
      return true
    })
  return {
    async assign({ group, instance, by, at }) {
      return counted(GROUP_SQL.assign, [group, instance, by, at])
    },
    async unassign(group, instance) {
      return counted(GROUP_SQL.unassign, [group, instance])
    },
    async assignments() {
      return (await db.query<AssignmentRow>(GROUP_SQL.list)).rows.map(assignmentFromRow)
    },
  }
}
