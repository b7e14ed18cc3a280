// The shapes of rollouts over HTTP: a rollout and its outcomes, a group's flows, flow variables,
// and what an instance fetches and reports.
import type { RolloutOutcome, RolloutRecord } from '@flowadmin/core'
import * as v from 'valibot'
import { Time } from './schemas.js'

const Strategy = v.pipe(
  v.union([
    v.strictObject({ kind: v.literal('all') }),
    v.strictObject({
      kind: v.literal('staged'),
      first: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(10_000)),
    }),
  ]),
  v.description('All at once, or the first `first` instances (by id) before the rest.'),
)

const State = v.picklist(['pending', 'running', 'succeeded', 'stopped', 'failed'])

export const RolloutSchema = v.strictObject({
  id: v.string(),
  sequence: v.pipe(v.number(), v.integer(), v.description('Its place among every rollout made.')),
  group: v.string(),
  snapshot: v.pipe(v.string(), v.description('The id of the snapshot it rolls out.')),
  kind: v.pipe(v.picklist(['rollout', 'rollback']), v.description('`rollback`: made by a group’s rollback.')),
  strategy: Strategy,
  instances: v.pipe(
    v.array(v.string()),
    v.description(
      'The group’s instances when it was made, by id; a staged rollout reaches the first ones first.',
    ),
  ),
  released: v.pipe(
    v.boolean(),
    v.description('Every instance is reached: made all at once, or its first stage succeeded.'),
  ),
  state: State,
  reason: v.pipe(
    v.nullable(v.string()),
    v.description('Why it stopped or failed: the instance and what it said.'),
  ),
  createdBy: v.nullable(v.string()),
  createdAt: Time,
  updatedAt: Time,
})

const OutcomeSchema = v.strictObject({
  instance: v.string(),
  outcome: v.picklist(['succeeded', 'failed']),
  rev: v.pipe(v.nullable(v.string()), v.description('The rev of its flows after the deploy.')),
  message: v.nullable(v.string()),
  missingCredentials: v.pipe(
    v.array(v.string()),
    v.description('Ids of the snapshot’s nodes that need credentials the instance does not have.'),
  ),
  at: Time,
})

export const RolloutViewSchema = v.strictObject({
  ...RolloutSchema.entries,
  outcomes: v.array(OutcomeSchema),
  waiting: v.pipe(v.array(v.string()), v.description('Instances it reached that have not said how it went.')),
})

export const RolloutRequestSchema = v.strictObject({
  snapshot: v.pipe(v.string(), v.description('The id of the snapshot to roll out.')),
  strategy: v.optional(Strategy),
})

/** What a rollout request is read with: the strategy is the core's to check. */
export const RolloutRequestFields = v.object({
  snapshot: v.string('Invalid field: snapshot must be a string'),
  strategy: v.optional(v.unknown()),
})

const Drift = v.pipe(
  v.nullable(v.strictObject({ rev: v.string(), by: v.nullable(v.string()), at: Time })),
  v.description(
    'The flows changed on the instance since its rollout: the rev it runs, who deployed it, when.',
  ),
)

export const GroupFlowsSchema = v.strictObject({
  group: v.string(),
  mode: v.pipe(
    v.picklist(['report', 'enforce']),
    v.description('`report`: flows changed on an instance are reported; `enforce`: they are restored.'),
  ),
  target: v.pipe(
    v.nullable(RolloutSchema),
    v.description('The rollout every instance of the group gets, joined later too.'),
  ),
  latest: v.pipe(v.nullable(RolloutSchema), v.description('Its newest rollout, whatever its state.')),
  previous: v.pipe(v.nullable(v.string()), v.description('The snapshot a rollback goes back to.')),
  instances: v.array(
    v.strictObject({
      instance: v.string(),
      rollout: v.pipe(v.nullable(v.string()), v.description('The rollout it deployed last.')),
      deployedRev: v.nullable(v.string()),
      rev: v.pipe(v.nullable(v.string()), v.description('The rev it last said it runs.')),
      drift: Drift,
    }),
  ),
})

export const ModeSchema = v.strictObject({ mode: v.picklist(['report', 'enforce']) })

export const VariableSchema = v.strictObject({
  name: v.string(),
  value: v.pipe(v.nullable(v.string()), v.description('Null for a secret: its value is never shown.')),
  secret: v.boolean(),
  by: v.nullable(v.string()),
  at: Time,
})

export const VariableInputSchema = v.strictObject({
  value: v.pipe(v.string(), v.maxLength(4096), v.description('At most 4096 characters.')),
  secret: v.optional(
    v.pipe(v.boolean(), v.description('Sealed at rest, never shown, delivered as a credential (`cred`).')),
  ),
})

export const VariableFields = v.object({ value: v.unknown(), secret: v.optional(v.unknown()) })

export const TargetFileSchema = v.strictObject({
  rollout: v.string(),
  snapshot: v.string(),
  mode: v.picklist(['report', 'enforce']),
  variables: v.pipe(v.string(), v.description('Changes when the variables change.')),
  flows: v.array(v.looseObject({ id: v.string(), type: v.string() })),
  modules: v.array(v.strictObject({ name: v.string(), version: v.string() })),
  env: v.pipe(
    v.array(v.strictObject({ name: v.string(), value: v.string(), type: v.picklist(['str', 'cred']) })),
    v.description('The variables, for the `global-config` node’s `env`; a secret one as `cred`.'),
  ),
})

const Rev = v.pipe(v.string(), v.maxLength(128))
const Message = v.pipe(v.string(), v.maxLength(2000))

export const FlowsReportSchema = v.union([
  v.strictObject({
    rollout: v.string(),
    variables: v.optional(v.string()),
    outcome: v.picklist(['succeeded', 'failed']),
    rev: v.nullable(Rev),
    message: v.optional(v.nullable(Message)),
    missingCredentials: v.optional(
      v.pipe(v.array(v.pipe(v.string(), v.maxLength(128))), v.maxLength(10_000)),
    ),
    restored: v.optional(v.boolean()),
  }),
  v.strictObject({ rev: Rev, by: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(256)))) }),
])

export const rolloutJson = (rollout: RolloutRecord) => ({
  ...rollout,
  createdAt: new Date(rollout.createdAt).toISOString(),
  updatedAt: new Date(rollout.updatedAt).toISOString(),
})

export const outcomeJson = ({ rollout: _rollout, ...outcome }: RolloutOutcome) => ({
  ...outcome,
  at: new Date(outcome.at).toISOString(),
})
