export {
  type AssignmentError,
  createGroupAssignments,
  type GroupAssignments,
  type GroupView,
} from './access/assignments.js'
export {
  type AccessChanges,
  type AccessSettings,
  accessChanges,
  type GrantChange,
  REFUSAL_QUIET_MS,
} from './access/audit.js'
export { createRightChecks, type GroupOrInstance, type RightChecksDeps } from './access/checks.js'
export {
  EVERYWHERE,
  FLOWADMIN_SCOPE,
  type Grant,
  grantProblem,
  grantWord,
  groupOfScope,
  isRightsWord,
  parseRightsWord,
  RESERVED_SCOPES,
  type RightsWord,
} from './access/grants.js'
export {
  createMembership,
  GROUP_PATTERN_FORM,
  type GroupAssignment,
  type GroupRules,
  groupNameProblem,
  groupPatternProblem,
  type Membership,
  patternMatcher,
} from './access/groups.js'
export { type HolderKind, type Holding, type HoldingSources, holdingsOf } from './access/holders.js'
export {
  type AccessOptions,
  type AccessRights,
  AT_FLOWADMIN,
  createAccessRights,
  type Place,
} from './access/rights.js'
export { BUILT_IN_ROLES, ROLE_NAME_FORM, type Role, type RoleOptions, rolesOf } from './access/roles.js'
export { type AccessView, accessView, type GrantView, tokenRightsAt } from './access/view.js'
export { addressScope } from './auth/address-scope.js'
export { attemptCounters, type CounterState, throttleRefusal } from './auth/counters.js'
export {
  DEFAULT_DIRECTORY_LABEL,
  DEFAULT_DIRECTORY_THROTTLE,
  DEFAULT_RECHECK_MINUTES,
  DIRECTORY_IN_FLIGHT_ALLOWANCE,
  DIRECTORY_RETRY_AFTER,
  type DirectoryOptions,
  type DirectoryThrottleOptions,
  directoryAccountKey,
  directoryGroupKey,
  RECHECK_RETRY_MS,
} from './auth/directory.js'
export {
  type FactorError,
  type FactorKind,
  type FactorStatus,
  RECOVERY_CODE_COUNT,
  type TotpEnrolment,
} from './auth/factors.js'
export {
  type Handover,
  type HandoverTarget,
  ONE_TIME_CODE_MS,
  SIGN_IN_BOUNDS,
  type SsoExchangeError,
} from './auth/handover.js'
export type { Granted, LoginError, LoginRequest } from './auth/login.js'
export {
  DEFAULT_LOGIN_QUEUE,
  type LoginQueueBounds,
  type LoginQueueLoad,
  type LoginQueueOptions,
} from './auth/login-queue.js'
export type { LoginScheme, StrategyButton } from './auth/login-scheme.js'
export { createMachineSecret, isSecretDigest, secretDigest } from './auth/machine-secret.js'
export {
  MAX_PASSKEY_NAME,
  MAX_PASSKEYS,
  PASSKEY_CHALLENGE_SECONDS,
  type PasskeyError,
  type Passkeys,
  type PasskeyView,
} from './auth/passkeys.js'
export { hasPermission, intersectPermissions, PERMISSION_WORD, toPermissionList } from './auth/permissions.js'
export {
  type AccessError,
  type AudienceOptions,
  actorOf,
  operator,
  type Principal,
  type UserPrincipal,
} from './auth/principal.js'
export type { ClientCredentials, Introspection } from './auth/resource-server-facade.js'
export type {
  ClientError,
  ResourceServerActivity,
  ResourceServerOptions,
} from './auth/resource-servers.js'
export { grantScope, parsePermissionScope, parseScope, SCOPE_WORDS } from './auth/scope.js'
export {
  codeOwnerOf,
  type EnrolStep,
  type PasswordStep,
  SECOND_FACTOR_SECONDS,
  type SecondFactorPolicy,
  type SecondFactorStep,
  type VerifiedPerson,
} from './auth/sign-in.js'
export {
  DEFAULT_SSO_SESSION,
  DEFAULT_USERNAME_CLAIM,
  SIGN_IN_MS,
  type Sso,
  type SsoOptions,
} from './auth/sso.js'
export { type GroupRights, permissionsOfGroups } from './auth/sso-groups.js'
export type { SsoRefusal } from './auth/sso-refusal.js'
export { DEFAULT_THROTTLE, IN_FLIGHT_LEASE_MS, type ThrottleOptions } from './auth/throttle.js'
export { rightsOfUser, type User, type UserOptions } from './auth/users.js'
export {
  type AbortSignalLike,
  createKeyedQueue,
  createTaskQueue,
  type RunOptions,
  type TaskQueue,
  type TaskQueueOptions,
} from './concurrency.js'
export { type Core, createCore } from './core.js'
export {
  type AdminAuthOptions,
  type CoreOptions,
  type CorePorts,
  DEFAULT_CLIENTS,
  DEFAULT_SESSION_EXPIRY,
} from './core-options.js'
export type { DomainError, DomainErrorCode, ErrorOf, Result } from './errors.js'
export { codeOf, err, messageOf, ok } from './errors.js'
export type { DesiredState } from './fleet/desired-state.js'
export { type Drift, type DriftReason, driftOf } from './fleet/drift.js'
export type {
  EnrolError,
  Enrolled,
  EnrolmentRequest,
  EnrolmentView,
  EnrolRequest,
} from './fleet/enrolments.js'
export {
  DEFAULT_ANSWER_WAIT_MS,
  DEFAULT_HOLD_SECONDS,
  type Fleet,
  type FleetModuleView,
  type FleetNodeSetView,
  type FleetOptions,
  type InstanceConflict,
  type InstanceView,
} from './fleet/fleet.js'
export type {
  FleetIdentities,
  IdentifiedInstanceView,
  InstanceCaller,
  InstanceMismatch,
} from './fleet/fleet-identities.js'
export {
  type ClientIdentity,
  DEFAULT_MAX_INSTANCES,
  ENROLMENT_BOUNDS,
  GROUP_NAME_FORM,
  INSTANCE_ID_FORM,
  instanceClientId,
  MAX_ENROLMENT_GROUPS,
} from './fleet/identity-rules.js'
export {
  FLEET_INSTALL_PERMISSION,
  type FleetInstallRefusal,
  mayInstallOnFleet,
} from './fleet/install-policy.js'
export type { EnrolmentState } from './fleet/instance-identities.js'
export type { InstanceModuleState } from './fleet/instance-states.js'
export { type DiffedNode, diffFlows, type FlowsDiff, sameJson } from './flows/flow-diff.js'
export {
  CORE_TYPES,
  checkFlows,
  type FlowNode,
  type KnownModule,
  modulesForTypes,
  moduleTypesOf,
  SNAPSHOT_NAME_FORM,
  snapshotFile,
} from './flows/flow-rules.js'
export {
  firstStage,
  groupTarget,
  previousSnapshot,
  ROLLOUT_ID_FORM,
  reaches,
  stateOf as rolloutStateOf,
  targetOf as rolloutTargetOf,
  VARIABLE_NAME_FORM,
  variablesDigest,
  variablesOf,
} from './flows/rollout-rules.js'
export {
  createRollouts,
  type FlowsReport,
  type FlowsTarget,
  type RolloutError,
  type Rollouts,
  type RolloutView,
  strategyOf,
} from './flows/rollouts.js'
export {
  ASK_LIFETIME_MS,
  createSnapshots,
  DEFAULT_SNAPSHOT_MAX_BYTES,
  SNAPSHOT_ID_FORM,
  type SnapshotError,
  type SnapshotMade,
  type SnapshotSender,
  type Snapshots,
  type SnapshotUpload,
} from './flows/snapshots.js'
export {
  createFlowVariables,
  type DeliveredVariable,
  type FlowVariables,
  type VariableError,
  type VariableView,
} from './flows/variables.js'
export { type ModuleView, NOT_INSTALLED, type NodeSetView } from './modules/local-state.js'
export type { ModuleError, PaletteError } from './modules/modules.js'
export type * from './ports/index.js'
export { SIGN_IN_METHODS } from './ports/tokens.js'
export { isStoreUnavailable, type StoreUnavailable, storeUnavailable } from './store-unavailable.js'
export { systemClock, systemRandom, webDigest } from './system.js'
export { type ApiTokenOptions, DEFAULT_API_TOKENS } from './tokens/api-token-lifetime.js'
export { FLOWADMIN_AUDIENCE } from './tokens/audience.js'
export { base64url } from './tokens/encoding.js'
export {
  type CreatedApiToken,
  type CreateTokenRequest,
  type InventoryError,
  MAX_TOKEN_NAME,
  type TokenView,
} from './tokens/inventory.js'
export { API_TOKEN_PREFIX, TOKEN_BYTES } from './tokens/mint.js'
export {
  DIRECTORY_FINGERPRINT_PREFIX,
  isDirectoryRecord,
  isSsoRecord,
  SSO_FINGERPRINT_PREFIX,
  type SsoUser,
  type TokenOwner,
} from './tokens/owner.js'
export { LAST_USE_RESOLUTION_MS } from './tokens/recent-uses.js'
export type { IssuedToken } from './tokens/tokens.js'
export { DEFAULT_REPORTED_PER_MINUTE } from './trail/pace.js'
export {
  DEFAULT_TRAIL_RETENTION,
  type SweepLimits,
  type TrailBounds,
  type TrailRetention,
} from './trail/retention.js'
export {
  CLAIMED_TIME_WINDOW,
  claimedTimeSuspect,
  DEFAULT_TRAIL_OPTIONS,
  decodeTrailCursor,
  type TooManyEvents,
  type Trail,
  type TrailOptions,
  type TrailReport,
  type TrailSource,
  trailEntryOf,
} from './trail/trail.js'
