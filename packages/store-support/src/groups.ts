// Rows of the groups' assignments, as SQLite and PostgreSQL give them (numbers may come as bigint
// or text), and their records.
import type { GroupAssignment } from '@flowadmin/core'

export const ASSIGNMENT_COLUMNS = 'group_name, instance, assigned_by, assigned_at'

export interface AssignmentRow {
  group_name: string
  instance: string
  assigned_by: string | null
  assigned_at: number | bigint | string
}

export const assignmentFromRow = (row: AssignmentRow): GroupAssignment => ({
  group: row.group_name,
  instance: row.instance,
  by: row.assigned_by,
  at: Number(row.assigned_at),
})
