export {
  CREDENTIAL_COLUMNS,
  type CredentialRow,
  credentialFromRow,
  credentialValues,
  ENROLMENT_COLUMNS,
  type EnrolmentRow,
  enrolmentFromRow,
} from './enrolments.js'
export { type PendingRow, pendingFromRow, type TotpRow, totpFromRow } from './factors.js'
export {
  desiredFromRows,
  digestFromRow,
  type FleetStateRow,
  INSTANCE_COLUMNS,
  type InstallRow,
  type InstanceRow,
  installFromRow,
  instanceFromRow,
} from './fleet.js'
export { ASSIGNMENT_COLUMNS, type AssignmentRow, assignmentFromRow } from './groups.js'
export {
  PASSKEY_COLUMNS,
  type PasskeyRow,
  passkeyFromRow,
} from './passkeys.js'
export {
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
  type WriteText,
} from './rollouts.js'
export {
  byModuleName,
  type CounterRow,
  counterFromRow,
  type ModuleRow,
  modulesFromRows,
  TOKEN_COLUMNS,
  type TokenRow,
  tokenFromRow,
} from './rows.js'
export {
  ASK_COLUMNS,
  type AskRow,
  askFromRow,
  askValues,
  SNAPSHOT_META_COLUMNS,
  type SnapshotMetaRow,
  type SnapshotRow,
  snapshotFromRow,
  snapshotMetaFromRow,
  snapshotValues,
} from './snapshots.js'
export { codeFromRow, codeRecord, type WaitingCount, type WaitingRow, waitingVerdict } from './sso.js'
export {
  TRAIL_COLUMNS,
  TRAIL_ENTRY_COLUMNS,
  type TrailRow,
  trailConditions,
  trailFromRow,
  trailValues,
} from './trail.js'
