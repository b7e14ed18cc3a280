import type { GroupStore } from '@flowadmin/core'
import { ASSIGNMENT_COLUMNS, type AssignmentRow, assignmentFromRow } from '@flowadmin/store-support'
import type { SqliteDatabase } from './driver.js'
import { createReader } from './reader.js'
import { prepareAll } from './statements.js'
import { createTransaction } from './transaction.js'

/** The statements of the group store. */
export const GROUP_SQL = {
  assign: `INSERT INTO access_group_assignments (${ASSIGNMENT_COLUMNS}) VALUES (?, ?, ?, ?)
           ON CONFLICT (group_name, instance) DO NOTHING`,
  unassign: 'DELETE FROM access_group_assignments WHERE group_name = ? AND instance = ?',
  list: `SELECT ${ASSIGNMENT_COLUMNS} FROM access_group_assignments ORDER BY group_name, instance`,
} as const

const ASSIGNMENTS = 'access-groups'

/** The groups' assignments; each change is one statement. */
export function createGroupStore(db: SqliteDatabase): GroupStore {
  const transaction = createTransaction(db)
  const reader = createReader(db)
  const sql = prepareAll(db, GROUP_SQL)
  return {
    async assign({ group, instance, by, at }) {
      return transaction(() => sql.assign.run(group, instance, by, at).changes > 0, [ASSIGNMENTS])
    },
    async unassign(group, instance) {
      return transaction(() => sql.unassign.run(group, instance).changes > 0, [ASSIGNMENTS])
    },
    async assignments() {
      return reader(
        () => (sql.list.all() as AssignmentRow[]).map(assignmentFromRow),
        (touched) => touched === ASSIGNMENTS,
      )
    },
  }
}
