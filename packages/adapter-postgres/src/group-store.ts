import type { GroupStore } from '@flowadmin/core'
import { ASSIGNMENT_COLUMNS, type AssignmentRow, assignmentFromRow } from '@flowadmin/store-support'
import type { Database } from './database.js'

const ASSIGNMENTS = 'flowadmin_access_group_assignments'

/** The statements of the group store. */
export const GROUP_SQL = {
  assign: `INSERT INTO ${ASSIGNMENTS} (${ASSIGNMENT_COLUMNS}) VALUES ($1, $2, $3, $4)
           ON CONFLICT (group_name, instance) DO NOTHING`,
  unassign: `DELETE FROM ${ASSIGNMENTS} WHERE group_name = $1 AND instance = $2`,
  // Byte order, as the other stores sort: the database's collation would not.
  list: `SELECT ${ASSIGNMENT_COLUMNS} FROM ${ASSIGNMENTS} ORDER BY group_name COLLATE "C", instance COLLATE "C"`,
} as const

/** The groups' assignments; each change is one statement. */
export function createGroupStore(db: Database): GroupStore {
  const changed = (result: { rowCount: number | null }) => (result.rowCount ?? 0) > 0
  return {
    async assign({ group, instance, by, at }) {
      return changed(await db.query(GROUP_SQL.assign, [group, instance, by, at]))
    },
    async unassign(group, instance) {
      return changed(await db.query(GROUP_SQL.unassign, [group, instance]))
    },
    async assignments() {
      return (await db.query<AssignmentRow>(GROUP_SQL.list)).rows.map(assignmentFromRow)
    },
  }
}
