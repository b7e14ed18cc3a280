// Rows of the rollouts, their outcomes, each instance's flows and the flow variables, as SQLite and
// PostgreSQL give them (numbers may come as bigint or text, flags as booleans or 0/1), and their
// records. A strategy is two columns (`strategy`, `first`), a list is JSON text, a scope is two
// columns (`scope_kind`, `scope_name`). `text` writes and reads back the free texts (who, why, a
// rev, a value) as the dialect keeps them.
import type {
  FlowVariable,
  InstanceFlows,
  NewRollout,
  RolloutOutcome,
  RolloutRecord,
  RolloutStrategy,
  VariableScope,
} from '@flowadmin/core'
import { asIs, booleanOf, type Integer, integerOrNull, type ReadText } from './values.js'

/** Text as the dialect writes it; `asIs` where it keeps any text. */
export type WriteText = (text: string) => string

const orNull = (value: string | null, text: ReadText | WriteText) => (value === null ? null : text(value))

/** The columns of a rollout but its sequence, in the order of rolloutValues. */
export const ROLLOUT_VALUE_COLUMNS =
  'id, group_name, snapshot, kind, strategy, first, instances, released, state, reason, created_by, created_at, updated_at'

/** The columns of a rollout row. */
export const ROLLOUT_COLUMNS = `${ROLLOUT_VALUE_COLUMNS}, sequence`

export interface RolloutRow {
  id: string
  sequence: Integer
  group_name: string
  snapshot: string
  kind: RolloutRecord['kind']
  strategy: RolloutStrategy['kind']
  first: Integer | null
  /** A JSON array of instance ids. */
  instances: string
  released: boolean | Integer
  state: RolloutRecord['state']
  reason: string | null
  created_by: string | null
  created_at: Integer
  updated_at: Integer
}

const strategyOf = (row: RolloutRow): RolloutStrategy =>
  row.strategy === 'staged' ? { kind: 'staged', first: Number(row.first) } : { kind: 'all' }

export const rolloutFromRow = (row: RolloutRow, text: ReadText = asIs): RolloutRecord => ({
  id: row.id,
  sequence: Number(row.sequence),
  group: row.group_name,
  snapshot: row.snapshot,
  kind: row.kind,
  strategy: strategyOf(row),
  instances: JSON.parse(row.instances) as string[],
  released: booleanOf(row.released),
  state: row.state,
  reason: orNull(row.reason, text),
  createdBy: orNull(row.created_by, text),
  createdAt: Number(row.created_at),
  updatedAt: Number(row.updated_at),
})

/** A new rollout's values in ROLLOUT_VALUE_COLUMNS order (`released` as 0 or 1). */
export const rolloutValues = (rollout: NewRollout, text: WriteText = asIs): unknown[] => [
  rollout.id,
  rollout.group,
  rollout.snapshot,
  rollout.kind,
  rollout.strategy.kind,
  rollout.strategy.kind === 'staged' ? rollout.strategy.first : null,
  JSON.stringify(rollout.instances),
  rollout.released ? 1 : 0,
  rollout.state,
  orNull(rollout.reason, text),
  orNull(rollout.createdBy, text),
  rollout.createdAt,
  rollout.updatedAt,
]

/** The columns of an outcome, in the order of outcomeValues. */
export const OUTCOME_COLUMNS = 'rollout, instance, outcome, rev, message, missing_credentials, at'

export interface OutcomeRow {
  rollout: string
  instance: string
  outcome: RolloutOutcome['outcome']
  rev: string | null
  message: string | null
  /** A JSON array of node ids. */
  missing_credentials: string
  at: Integer
}

export const outcomeFromRow = (row: OutcomeRow, text: ReadText = asIs): RolloutOutcome => ({
  rollout: row.rollout,
  instance: row.instance,
  outcome: row.outcome,
  rev: orNull(row.rev, text),
  message: orNull(row.message, text),
  missingCredentials: JSON.parse(row.missing_credentials) as string[],
  at: Number(row.at),
})

export const outcomeValues = (outcome: RolloutOutcome, text: WriteText = asIs): unknown[] => [
  outcome.rollout,
  outcome.instance,
  outcome.outcome,
  orNull(outcome.rev, text),
  orNull(outcome.message, text),
  JSON.stringify(outcome.missingCredentials),
  outcome.at,
]

/** The columns of an instance's flows, in the order of flowsValues. */
export const FLOWS_COLUMNS = 'instance, rollout, deployed_rev, rev, drift_rev, drift_by, drift_at, at'

export interface FlowsRow {
  instance: string
  rollout: string | null
  deployed_rev: string | null
  rev: string | null
  /** Null when its flows did not drift; then so are drift_by and drift_at. */
  drift_rev: string | null
  drift_by: string | null
  drift_at: Integer | null
  at: Integer
}

export const flowsFromRow = (row: FlowsRow, text: ReadText = asIs): InstanceFlows => ({
  instance: row.instance,
  rollout: row.rollout,
  deployedRev: orNull(row.deployed_rev, text),
  rev: orNull(row.rev, text),
  drift:
    row.drift_rev === null
      ? null
      : { rev: text(row.drift_rev), by: orNull(row.drift_by, text), at: integerOrNull(row.drift_at) ?? 0 },
  at: Number(row.at),
})

export const flowsValues = (flows: InstanceFlows, text: WriteText = asIs): unknown[] => [
  flows.instance,
  flows.rollout,
  orNull(flows.deployedRev, text),
  orNull(flows.rev, text),
  flows.drift === null ? null : text(flows.drift.rev),
  flows.drift === null ? null : orNull(flows.drift.by, text),
  flows.drift?.at ?? null,
  flows.at,
]

/** The columns of a variable, in the order of variableValues. */
export const VARIABLE_COLUMNS = 'scope_kind, scope_name, name, value, secret, set_by, set_at'

export interface VariableRow {
  scope_kind: VariableScope['kind']
  scope_name: string
  name: string
  value: string
  secret: boolean | Integer
  set_by: string | null
  set_at: Integer
}

/** A scope as its two columns' values: its kind, and the group's or the instance's name. */
export const scopeValues = (scope: VariableScope): [VariableScope['kind'], string] =>
  scope.kind === 'group' ? ['group', scope.group] : ['instance', scope.instance]

const scopeOf = (row: VariableRow): VariableScope =>
  row.scope_kind === 'group'
    ? { kind: 'group', group: row.scope_name }
    : { kind: 'instance', instance: row.scope_name }

export const variableFromRow = (row: VariableRow, text: ReadText = asIs): FlowVariable => ({
  scope: scopeOf(row),
  name: row.name,
  value: text(row.value),
  secret: booleanOf(row.secret),
  by: orNull(row.set_by, text),
  at: Number(row.set_at),
})

/** A variable's values in VARIABLE_COLUMNS order (`secret` as 0 or 1). */
export const variableValues = (variable: FlowVariable, text: WriteText = asIs): unknown[] => [
  ...scopeValues(variable.scope),
  variable.name,
  text(variable.value),
  variable.secret ? 1 : 0,
  orNull(variable.by, text),
  variable.at,
]
