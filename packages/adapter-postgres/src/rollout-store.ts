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
import type { Database } from './database.js'
import { bumpRevision } from './fleet-state.js'
import { fromStored, storedKey } from './stored-text.js'

const ROLLOUTS = 'flowadmin_fleet_rollouts'
const OUTCOMES = 'flowadmin_fleet_rollout_outcomes'
const FLOWS = 'flowadmin_fleet_instance_flows'
const VARIABLES = 'flowadmin_fleet_flow_variables'
const MODES = 'flowadmin_fleet_flow_modes'

/** The statements of the rollout store. */
export const ROLLOUT_SQL = {
  // Run after the revision's bump, whose row lock keeps racing saves apart: the greatest
  // sequence read is the last committed one.
  create: `INSERT INTO ${ROLLOUTS} (${ROLLOUT_VALUE_COLUMNS}, sequence)
           SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::integer, $7::text, $8::boolean,
             $9::text, $10::text, $11::text, $12::bigint, $13::bigint, COALESCE(MAX(sequence), 0) + 1
           FROM ${ROLLOUTS}
           RETURNING sequence`,
  // A racing update that changed the row first leaves this one nothing to match.
  update: `UPDATE ${ROLLOUTS} SET state = $1, released = $2, reason = $3, updated_at = $4
           WHERE id = $5 AND state = $6 AND released = $7`,
  find: `SELECT ${ROLLOUT_COLUMNS} FROM ${ROLLOUTS} WHERE id = $1`,
  list: `SELECT ${ROLLOUT_COLUMNS} FROM ${ROLLOUTS} ORDER BY sequence`,
  saveOutcome: `INSERT INTO ${OUTCOMES} (${OUTCOME_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)
                ON CONFLICT (rollout, instance) DO UPDATE SET outcome = excluded.outcome, rev = excluded.rev,
                  message = excluded.message, missing_credentials = excluded.missing_credentials,
                  at = excluded.at`,
  // Byte order, as the other stores sort: the database's collation would not.
  outcomes: `SELECT ${OUTCOME_COLUMNS} FROM ${OUTCOMES} WHERE rollout = $1 ORDER BY instance COLLATE "C"`,
  saveFlows: `INSERT INTO ${FLOWS} (${FLOWS_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
              ON CONFLICT (instance) DO UPDATE SET rollout = excluded.rollout,
                deployed_rev = excluded.deployed_rev, rev = excluded.rev, drift_rev = excluded.drift_rev,
                drift_by = excluded.drift_by, drift_at = excluded.drift_at, at = excluded.at`,
  flows: `SELECT ${FLOWS_COLUMNS} FROM ${FLOWS} ORDER BY instance COLLATE "C"`,
  setVariable: `INSERT INTO ${VARIABLES} (${VARIABLE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)
                ON CONFLICT (scope_kind, scope_name, name) DO UPDATE SET value = excluded.value,
                  secret = excluded.secret, set_by = excluded.set_by, set_at = excluded.set_at`,
  deleteVariable: `DELETE FROM ${VARIABLES} WHERE scope_kind = $1 AND scope_name = $2 AND name = $3`,
  // 'group' sorts before 'instance'.
  variables: `SELECT ${VARIABLE_COLUMNS} FROM ${VARIABLES}
              ORDER BY scope_kind, scope_name COLLATE "C", name COLLATE "C"`,
  // Each changes a row only when the mode was another (a group without one reports).
  enforce: `INSERT INTO ${MODES} AS modes (group_name, mode) VALUES ($1, 'enforce')
            ON CONFLICT (group_name) DO UPDATE SET mode = 'enforce' WHERE modes.mode <> 'enforce'`,
  report: `UPDATE ${MODES} SET mode = 'report' WHERE group_name = $1 AND mode <> 'report'`,
  enforced: `SELECT group_name FROM ${MODES} WHERE mode = 'enforce' ORDER BY group_name COLLATE "C"`,
} as const

const changed = (result: { rowCount: number | null }) => (result.rowCount ?? 0) > 0

/**
 * The rollouts, their outcomes, each instance's flows, the variables and the groups' modes. A
 * change an instance's poll must see bumps the fleet's revision in its own transaction, announced
 * on the fleet's channel when it commits.
 */
export function createRolloutStore(db: Database): RolloutStore {
  return {
    async create(rollout) {
      return db.transaction(async (client) => {
        await bumpRevision(client)
        const { rows } = await client.query<{ sequence: number }>(
          ROLLOUT_SQL.create,
          rolloutValues(rollout, storedKey),
        )
        return Number(rows[0]?.sequence)
      })
    },
    async update(id, from, change) {
      return db.transaction(async (client) => {
        const updated = await client.query(ROLLOUT_SQL.update, [
          change.state,
          change.released,
          change.reason === null ? null : storedKey(change.reason),
          change.updatedAt,
          id,
          from.state,
          from.released,
        ])
        if (!changed(updated)) return false
        if (change.released !== from.released || (change.state === 'stopped' && from.state !== 'stopped'))
          await bumpRevision(client)
        return true
      })
    },
    async find(id) {
      const row = (await db.query<RolloutRow>(ROLLOUT_SQL.find, [id])).rows[0]
      return row === undefined ? null : rolloutFromRow(row, fromStored)
    },
    async list() {
      return (await db.query<RolloutRow>(ROLLOUT_SQL.list)).rows.map((row) => rolloutFromRow(row, fromStored))
    },
    async saveOutcome(outcome) {
      await db.query(ROLLOUT_SQL.saveOutcome, outcomeValues(outcome, storedKey))
    },
    async outcomes(rollout) {
      return (await db.query<OutcomeRow>(ROLLOUT_SQL.outcomes, [rollout])).rows.map((row) =>
        outcomeFromRow(row, fromStored),
      )
    },
    async saveFlows(flows) {
      await db.query(ROLLOUT_SQL.saveFlows, flowsValues(flows, storedKey))
    },
    async flows() {
      return (await db.query<FlowsRow>(ROLLOUT_SQL.flows)).rows.map((row) => flowsFromRow(row, fromStored))
    },
    async setVariable(variable) {
      await db.transaction(async (client) => {
        await client.query(ROLLOUT_SQL.setVariable, variableValues(variable, storedKey))
        await bumpRevision(client)
      })
    },
    async deleteVariable(scope, name) {
      return db.transaction(async (client) => {
        if (!changed(await client.query(ROLLOUT_SQL.deleteVariable, [...scopeValues(scope), name])))
          return false
        await bumpRevision(client)
        return true
      })
    },
    async variables() {
      return (await db.query<VariableRow>(ROLLOUT_SQL.variables)).rows.map((row) =>
        variableFromRow(row, fromStored),
      )
    },
    async setMode(group, mode) {
      return db.transaction(async (client) => {
        const statement = mode === 'enforce' ? ROLLOUT_SQL.enforce : ROLLOUT_SQL.report
        if (!changed(await client.query(statement, [group]))) return false
        await bumpRevision(client)
        return true
      })
    },
    async enforced() {
      return (await db.query<{ group_name: string }>(ROLLOUT_SQL.enforced)).rows.map((row) => row.group_name)
    },
  }
}
