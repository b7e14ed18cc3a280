import type { GroupStore } from '@flowadmin/core'
import { ASSIGNMENT_COLUMNS, type AssignmentRow, assignmentFromRow } from '@flowadmin/store-support'
import type { SqliteDatabase } from './driver.js'
import { FLEET_STATE_KEY, prepareBump } from './fleet-state.js'
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

/** The groups' assignments; each change is one transaction with the fleet's revision bumped. */
export function createGroupStore(db: SqliteDatabase): GroupStore {
  const transaction = createTransaction(db)
  const reader = createReader(db)
  const sql = prepareAll(db, GROUP_SQL)
  const bump = prepareBump(db)
  /** Runs a change; bumps the revision with it when it changed a row. */
  const counted = (change: () => { changes: number }) =>
    transaction(() => {
      if (change().changes === 0) return false
      bump.run()
      return true
    }, [ASSIGNMENTS, FLEET_STATE_KEY])
  return {
    async assign({ group, instance, by, at }) {
      return counted(() => sql.assign.run(group, instance, by, at))
    },
    async unassign(group, instance) {
      return counted(() => sql.unassign.run(group, instance))
    },
    async assignments() {
      return reader(
        () => (sql.list.all() as AssignmentRow[]).map(assignmentFromRow),
        (touched) => touched === ASSIGNMENTS,
      )
    },
  }
}
