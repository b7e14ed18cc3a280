import type { RolloutStore } from '@flowadmin/core'
import {
  FLOWS_COLUMNS,
  type FlowsRow,
  flowsFromRow,
  flowsValues,
  OUTCOME_COLUMNS,
  type OutcomeRow,
  outcomeFromRow,
  outcomeValues,
  ROLLOUT_COLUMNS,
  ROLLOUT_VALUE_COLUMNS,
  type RolloutRow,
  rolloutFromRow,
  rolloutValues,
  scopeValues,
  VARIABLE_COLUMNS,
  type VariableRow,
  variableFromRow,
  variableValues,
} from '@flowadmin/store-support'
import type { SqliteDatabase } from './driver.js'
import { FLEET_STATE_KEY, prepareBump } from './fleet-state.js'
import { createReader } from './reader.js'
import { prepareAll } from './statements.js'
import { createTransaction } from './transaction.js'

/** The statements of the rollout store. */
export const ROLLOUT_SQL = {
  // The next sequence, in the same statement: the write lock keeps racing saves apart.
  create: `INSERT INTO fleet_rollouts (${ROLLOUT_VALUE_COLUMNS}, sequence)
           SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, COALESCE(MAX(sequence), 0) + 1 FROM fleet_rollouts
           RETURNING sequence`,
  update: `UPDATE fleet_rollouts SET state = ?, released = ?, reason = ?, updated_at = ?
           WHERE id = ? AND state = ? AND released = ?`,
  find: `SELECT ${ROLLOUT_COLUMNS} FROM fleet_rollouts WHERE id = ?`,
  list: `SELECT ${ROLLOUT_COLUMNS} FROM fleet_rollouts ORDER BY sequence`,
  saveOutcome: `INSERT INTO fleet_rollout_outcomes (${OUTCOME_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (rollout, instance) DO UPDATE SET outcome = excluded.outcome, rev = excluded.rev,
                  message = excluded.message, missing_credentials = excluded.missing_credentials,
                  at = excluded.at`,
  outcomes: `SELECT ${OUTCOME_COLUMNS} FROM fleet_rollout_outcomes WHERE rollout = ? ORDER BY instance`,
  saveFlows: `INSERT INTO fleet_instance_flows (${FLOWS_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
              ON CONFLICT (instance) DO UPDATE SET rollout = excluded.rollout,
                deployed_rev = excluded.deployed_rev, rev = excluded.rev, drift_rev = excluded.drift_rev,
                drift_by = excluded.drift_by, drift_at = excluded.drift_at, at = excluded.at`,
  flows: `SELECT ${FLOWS_COLUMNS} FROM fleet_instance_flows ORDER BY instance`,
  setVariable: `INSERT INTO fleet_flow_variables (${VARIABLE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (scope_kind, scope_name, name) DO UPDATE SET value = excluded.value,
                  secret = excluded.secret, set_by = excluded.set_by, set_at = excluded.set_at`,
  deleteVariable: 'DELETE FROM fleet_flow_variables WHERE scope_kind = ? AND scope_name = ? AND name = ?',
  // 'group' sorts before 'instance'.
  variables: `SELECT ${VARIABLE_COLUMNS} FROM fleet_flow_variables ORDER BY scope_kind, scope_name, name`,
  // Each changes a row only when the mode was another (a group without one reports).
  enforce: `INSERT INTO fleet_flow_modes (group_name, mode) VALUES (?, 'enforce')
            ON CONFLICT (group_name) DO UPDATE SET mode = 'enforce' WHERE mode <> 'enforce'`,
  report: `UPDATE fleet_flow_modes SET mode = 'report' WHERE group_name = ? AND mode <> 'report'`,
  enforced: `SELECT group_name FROM fleet_flow_modes WHERE mode = 'enforce' ORDER BY group_name`,
} as const

const ROLLOUTS = 'fleet-rollouts'
const OUTCOMES = 'fleet-rollout-outcomes'
const FLOWS = 'fleet-instance-flows'
const VARIABLES = 'fleet-flow-variables'
const MODES = 'fleet-flow-modes'

/**
 * The rollouts, their outcomes, each instance's flows, the variables and the groups' modes. A
 * change an instance's poll must see bumps the fleet's revision in its own transaction.
 */
export function createRolloutStore(db: SqliteDatabase): RolloutStore {
  const transaction = createTransaction(db)
  const reader = createReader(db)
  const sql = prepareAll(db, ROLLOUT_SQL)
  const bump = prepareBump(db)
  const on = (key: string) => (touched: string) => touched === key
  return {
    async create(rollout) {
      return transaction(() => {
        const row = sql.create.get(...rolloutValues(rollout)) as { sequence: number | bigint }
        bump.run()
        return Number(row.sequence)
      }, [ROLLOUTS, FLEET_STATE_KEY])
    },
    async update(id, from, change) {
      return transaction(() => {
        const released = change.released ? 1 : 0
        const { changes } = sql.update.run(
          change.state,
          released,
          change.reason,
          change.updatedAt,
          id,
          from.state,
          from.released ? 1 : 0,
        )
        if (changes === 0) return false
        if (change.released !== from.released || (change.state === 'stopped' && from.state !== 'stopped'))
          bump.run()
        return true
      }, [ROLLOUTS, FLEET_STATE_KEY])
    },
    async find(id) {
      return reader(() => {
        const row = sql.find.get(id) as RolloutRow | undefined
        return row === undefined ? null : rolloutFromRow(row)
      }, on(ROLLOUTS))
    },
    async list() {
      return reader(() => (sql.list.all() as RolloutRow[]).map((row) => rolloutFromRow(row)), on(ROLLOUTS))
    },
    async saveOutcome(outcome) {
      await transaction(() => sql.saveOutcome.run(...outcomeValues(outcome)), [OUTCOMES])
    },
    async outcomes(rollout) {
      return reader(
        () => (sql.outcomes.all(rollout) as OutcomeRow[]).map((row) => outcomeFromRow(row)),
        on(OUTCOMES),
      )
    },
    async saveFlows(flows) {
      await transaction(() => sql.saveFlows.run(...flowsValues(flows)), [FLOWS])
    },
    async flows() {
      return reader(() => (sql.flows.all() as FlowsRow[]).map((row) => flowsFromRow(row)), on(FLOWS))
    },
    async setVariable(variable) {
      await transaction(() => {
        sql.setVariable.run(...variableValues(variable))
        bump.run()
      }, [VARIABLES, FLEET_STATE_KEY])
    },
    async deleteVariable(scope, name) {
      return transaction(() => {
        if (sql.deleteVariable.run(...scopeValues(scope), name).changes === 0) return false
        bump.run()
        return true
      }, [VARIABLES, FLEET_STATE_KEY])
    },
    async variables() {
      return reader(
        () => (sql.variables.all() as VariableRow[]).map((row) => variableFromRow(row)),
        on(VARIABLES),
      )
    },
    async setMode(group, mode) {
      return transaction(() => {
        if ((mode === 'enforce' ? sql.enforce : sql.report).run(group).changes === 0) return false
        bump.run()
        return true
      }, [MODES, FLEET_STATE_KEY])
    },
    async enforced() {
      return reader(
        () => (sql.enforced.all() as Array<{ group_name: string }>).map((row) => row.group_name),
        on(MODES),
      )
    },
  }
}
