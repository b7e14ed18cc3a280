import type { DomainError, FlowsReport, VariableScope } from '@flowadmin/core'
import { hasPermission, strategyOf } from '@flowadmin/core'
import { type Context, Hono } from 'hono'
import * as v from 'valibot'
import { requirePermission, requirePermissionAt } from '../auth.js'
import type { AppEnv, RouteDeps } from '../env.js'
import { adminError, emptyResponse, errorAnswerOf, toResponse } from '../errors.js'
import { readFields } from '../fields.js'
import { ID_PARAMETER as INSTANCE_PARAMETER, INSTANCE_REFUSALS, instanceCaller } from '../fleet-caller.js'
import { noStore } from '../no-store.js'
import { adminErrorContent, describe, json, use } from '../openapi.js'
import {
  FlowsReportSchema,
  GroupFlowsSchema,
  ModeSchema,
  outcomeJson,
  RolloutRequestFields,
  RolloutRequestSchema,
  RolloutSchema,
  RolloutViewSchema,
  rolloutJson,
  TargetFileSchema,
  VariableFields,
  VariableInputSchema,
  VariableSchema,
} from '../rollout-schemas.js'

const ANSWERS = { 401: use('Unauthorized'), 500: use('Unexpected'), 503: use('StorageUnavailable') }
const GROUP_PARAMETER = {
  name: 'group',
  in: 'path' as const,
  required: true,
  description: 'A group of `fleet.groups`.',
  schema: { type: 'string' as const },
}
const NAME_PARAMETER = {
  name: 'name',
  in: 'path' as const,
  required: true,
  description: 'A variable’s name: 1 to 64 letters, digits or `_`, not starting with a digit.',
  schema: { type: 'string' as const },
}
const NO_GROUP = { description: 'No such group.', content: adminErrorContent(['group_not_found']) }
const BAD = { description: 'A malformed body, named.', content: adminErrorContent(['invalid_request']) }

/** A refusal: a malformed request in the admin routes' shape, anything else as mapped. */
const refusal = (error: DomainError): Response =>
  toResponse(
    error.code === 'invalid_request'
      ? adminError(400, 'invalid_request', error.message)
      : errorAnswerOf(error, { tokenSent: true }),
  )

const groupOf = (c: Context<AppEnv>) => c.req.param('group') ?? ''
/** Every instance of the group the path names. */
const inGroup = (c: Context<AppEnv>) => ({ kind: 'group' as const, group: groupOf(c) })
/** The instance the path names. */
const atInstance = (c: Context<AppEnv>) => ({ kind: 'instance' as const, instance: c.req.param('id') ?? '' })
const variableJson = (variable: { at: number }) => ({ ...variable, at: new Date(variable.at).toISOString() })

/**
 * Rollouts of snapshots to groups, rollback, each group's flows and mode, flow variables (for
 * people), and what an instance fetches and reports of its flows (for instances). In fleet mode.
 */
export function rolloutRoutes(deps: RouteDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  const fleet = deps.core.fleet
  if (fleet === null) return routes
  const { rollouts } = fleet
  /** The groups whose rollouts the caller may read; null (recorded) when none. */
  const readableGroups = (c: Context<AppEnv>): ReadonlySet<string> | null => {
    const principal = c.get('principal')
    if (!deps.core.permitsSomewhere(principal, 'flows.read', c.get('address'))) return null
    return new Set(deps.core.groupsWhere(principal, 'flows.read'))
  }
  /** Refused for a missing `flows.read`, as the other routes refuse. */
  const refused = (c: Context<AppEnv>) =>
    toResponse(
      errorAnswerOf(
        { code: 'forbidden', permission: 'flows.read' },
        { tokenSent: c.get('principal').kind === 'user' },
      ),
    )

  routes.post(
    '/fleet/groups/:group/rollouts',
    describe({
      operationId: 'startRollout',
      summary: 'Roll a snapshot out to a group',
      description:
        'Needs `flows.write` on every instance of the group (a grant everywhere or on the group). Each instance’s ' +
        'helper installs the modules the snapshot needs, deploys its flows (a full deployment) with the variables ' +
        'of its groups and its own, and reports the new `rev`. Staged: the first `first` instances (by id), then the ' +
        'rest once they all succeeded; the first failure stops it there. An unfinished rollout of the group is ' +
        'stopped. Audited as `fleet.rollout_started`.',
      tags: ['fleet'],
      parameters: [GROUP_PARAMETER],
      requestBody: { required: true, content: json(RolloutRequestSchema) },
      responses: {
        201: { description: 'Made.', content: json(RolloutSchema) },
        400: BAD,
        404: {
          description: 'No such group or snapshot.',
          content: adminErrorContent(['group_not_found', 'snapshot_not_found']),
        },
        ...ANSWERS,
      },
    }),
    requirePermissionAt(deps, 'flows.write', inGroup),
    async (c) => {
      const fields = await readFields(c, deps.maxBodyBytes, ['json'], RolloutRequestFields, 'admin')
      if (!fields.ok) return fields.error
      const strategy = strategyOf(fields.value.strategy)
      if (!strategy.ok) return refusal(strategy.error)
      const made = await rollouts.start(
        c.get('principal'),
        c.get('address'),
        groupOf(c),
        fields.value.snapshot,
        strategy.value,
      )
      if (!made.ok) return refusal(made.error)
      return c.json(rolloutJson(made.value), 201)
    },
  )

  routes.post(
    '/fleet/groups/:group/rollback',
    describe({
      operationId: 'rollBackGroup',
      summary: 'Roll a group back to its previous target',
      description:
        'Needs `flows.write` on every instance of the group. A rollout, all at once and marked `rollback`, of the ' +
        'snapshot of the group’s newest rollout before its latest one whose snapshot differs from the latest one’s.',
      tags: ['fleet'],
      parameters: [GROUP_PARAMETER],
      responses: {
        201: { description: 'The rollback’s rollout.', content: json(RolloutSchema) },
        404: NO_GROUP,
        409: { description: 'Nothing to go back to.', content: adminErrorContent(['no_previous_target']) },
        ...ANSWERS,
      },
    }),
    requirePermissionAt(deps, 'flows.write', inGroup),
    async (c) => {
      const made = await rollouts.rollback(c.get('principal'), c.get('address'), groupOf(c))
      if (!made.ok) return refusal(made.error)
      return c.json(rolloutJson(made.value), 201)
    },
  )

  routes.get(
    '/fleet/rollouts',
    describe({
      operationId: 'listRollouts',
      summary: 'The rollouts',
      description:
        'Needs `flows.read` on flowadmin, which shows every rollout, or on every instance of a group, which shows ' +
        'that group’s. Newest first.',
      tags: ['fleet'],
      responses: { 200: { description: 'Newest first.', content: json(v.array(RolloutSchema)) }, ...ANSWERS },
    }),
    requirePermission(deps, ''),
    async (c) => {
      const readable = readableGroups(c)
      if (readable === null) return refused(c)
      // flows.read on flowadmin: every rollout, of groups the settings no longer hold too.
      const all = hasPermission(c.get('principal').permissions, 'flows.read')
      return c.json((await rollouts.list(all ? undefined : readable)).map(rolloutJson))
    },
  )

  routes.get(
    '/fleet/rollouts/:id',
    describe({
      operationId: 'getRollout',
      summary: 'A rollout and its instances’ outcomes',
      description: 'Needs `flows.read` on flowadmin, or on every instance of its group.',
      tags: ['fleet'],
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
      responses: {
        200: { description: 'The rollout.', content: json(RolloutViewSchema) },
        404: { description: 'No such rollout.', content: adminErrorContent(['rollout_not_found']) },
        ...ANSWERS,
      },
    }),
    requirePermission(deps, ''),
    async (c) => {
      const readable = readableGroups(c)
      if (readable === null) return refused(c)
      const found = await rollouts.find(c.req.param('id'))
      if (!found.ok) return refusal(found.error)
      const group = found.value.group
      const principal = c.get('principal')
      if (!readable.has(group) && !hasPermission(principal.permissions, 'flows.read')) {
        // Recorded as any refusal at that group is.
        deps.core.permitsAt(principal, 'flows.read', { kind: 'group', group }, c.get('address'))
        return refused(c)
      }
      const { outcomes, waiting, ...rollout } = found.value
      return c.json({ ...rolloutJson(rollout), outcomes: outcomes.map(outcomeJson), waiting })
    },
  )

  routes.get(
    '/fleet/groups/:group/flows',
    describe({
      operationId: 'getGroupFlows',
      summary: 'A group’s flows: mode, target, drift',
      description:
        'Needs `flows.read` on every instance of the group. Its mode, target, what a rollback goes back to, and ' +
        'each instance’s flows: the rollout it deployed last, the rev it runs, and drift.',
      tags: ['fleet'],
      parameters: [GROUP_PARAMETER],
      responses: {
        200: { description: 'The group’s flows.', content: json(GroupFlowsSchema) },
        404: NO_GROUP,
        ...ANSWERS,
      },
    }),
    requirePermissionAt(deps, 'flows.read', inGroup),
    async (c) => {
      const found = await rollouts.group(groupOf(c))
      if (!found.ok) return refusal(found.error)
      const { target, latest, instances, ...rest } = found.value
      return c.json({
        ...rest,
        target: target === null ? null : rolloutJson(target),
        latest: latest === null ? null : rolloutJson(latest),
        instances: instances.map((each) => ({
          ...each,
          drift: each.drift === null ? null : { ...each.drift, at: new Date(each.drift.at).toISOString() },
        })),
      })
    },
  )

  routes.put(
    '/fleet/groups/:group/flows/mode',
    describe({
      operationId: 'setGroupFlowsMode',
      summary: 'Report or enforce a group’s flows',
      description:
        'Needs `flows.write` on every instance of the group. `enforce`: an instance whose flows change on it ' +
        'deploys its target again; `report` (the default): the change is reported as drift. Audited as ' +
        '`fleet.flows_mode_set`.',
      tags: ['fleet'],
      parameters: [GROUP_PARAMETER],
      requestBody: { required: true, content: json(ModeSchema) },
      responses: {
        200: { description: 'Set.', content: json(ModeSchema) },
        400: BAD,
        404: NO_GROUP,
        ...ANSWERS,
      },
    }),
    requirePermissionAt(deps, 'flows.write', inGroup),
    async (c) => {
      const fields = await readFields(c, deps.maxBodyBytes, ['json'], ModeSchema, 'admin')
      if (!fields.ok) return fields.error
      const set = await rollouts.setMode(c.get('principal'), c.get('address'), groupOf(c), fields.value.mode)
      if (!set.ok) return refusal(set.error)
      return c.json({ mode: set.value.mode })
    },
  )

  variableRoutes(routes, deps, 'group')
  variableRoutes(routes, deps, 'instance')

  routes.get(
    '/fleet/instances/:id/flows/target',
    describe({
      operationId: 'getFlowsTarget',
      summary: 'An instance’s flows to deploy',
      description:
        'For the fleet’s instances, authenticated as their resource server with HTTP Basic: the flows its target ' +
        'rollout’s snapshot holds, the modules they need, and the variables (secret ones opened) to deliver in ' +
        'the `global-config` node’s `env`.',
      tags: ['fleet'],
      security: [{ basicAuth: [] }],
      parameters: [INSTANCE_PARAMETER],
      responses: {
        200: { description: 'What to deploy.', content: json(TargetFileSchema) },
        404: { description: 'No rollout reaches the instance.', content: adminErrorContent(['no_target']) },
        ...INSTANCE_REFUSALS,
      },
    }),
    noStore,
    instanceCaller(deps),
    async (c) => {
      const file = await rollouts.targetFile(c.get('instance').id)
      if (!file.ok) return refusal(file.error)
      return c.json(file.value)
    },
  )

  routes.post(
    '/fleet/instances/:id/flows/report',
    describe({
      operationId: 'reportFlows',
      summary: 'An instance says what became of its flows',
      description:
        'For the fleet’s instances, authenticated as their resource server with HTTP Basic: how a rollout went ' +
        '(`rollout`, `outcome`, the new `rev`; audited as `fleet.rollout_outcome`, or `fleet.flows_restored` with ' +
        '`restored`), or that its flows changed on it (`rev`, `by` who deployed): drift from what its last ' +
        'rollout deployed, audited as `fleet.flows_drifted`.',
      tags: ['fleet'],
      security: [{ basicAuth: [] }],
      parameters: [INSTANCE_PARAMETER],
      requestBody: { required: true, content: json(FlowsReportSchema) },
      responses: {
        204: { description: 'Noted. Empty body.' },
        400: BAD,
        404: { description: 'No such rollout.', content: adminErrorContent(['rollout_not_found']) },
        ...INSTANCE_REFUSALS,
        409: {
          description: 'The rollout does not reach this instance, or the id is another resource server’s.',
          content: adminErrorContent(['not_targeted', 'instance_conflict']),
        },
      },
    }),
    noStore,
    instanceCaller(deps),
    async (c) => {
      const fields = await readFields(c, deps.maxBodyBytes, ['json'], FlowsReportSchema, 'admin')
      if (!fields.ok) return fields.error
      const body = fields.value
      const report: FlowsReport =
        'outcome' in body
          ? {
              rollout: body.rollout,
              outcome: body.outcome,
              rev: body.rev,
              message: body.message ?? null,
              missingCredentials: body.missingCredentials ?? [],
              restored: body.restored === true,
            }
          : { rev: body.rev, by: body.by ?? null }
      const noted = await rollouts.report(c.get('instance').id, report)
      if (!noted.ok) return refusal(noted.error)
      return emptyResponse(204)
    },
  )

  return routes
}

/** `GET`, `PUT` and `DELETE` of the variables of a group's instances, or of one instance's. */
function variableRoutes(routes: Hono<AppEnv>, deps: RouteDeps, kind: 'group' | 'instance') {
  const fleet = deps.core.fleet
  if (fleet === null) return
  const { variables } = fleet
  const base = kind === 'group' ? '/fleet/groups/:group/variables' : '/fleet/instances/:id/variables'
  const scopeOf = (c: Context<AppEnv>): VariableScope =>
    kind === 'group' ? { kind, group: groupOf(c) } : { kind, instance: c.req.param('id') ?? '' }
  const where = kind === 'group' ? 'every instance of the group' : 'the instance'
  const parameters = [kind === 'group' ? GROUP_PARAMETER : INSTANCE_PARAMETER]
  /** Needs the permission on every instance the variable reaches. */
  const check = (permission: string) =>
    requirePermissionAt(deps, permission, kind === 'group' ? inGroup : atInstance)
  const tag = kind === 'group' ? 'Group' : 'Instance'

  routes.get(
    base,
    describe({
      operationId: `list${tag}Variables`,
      summary: `The flow variables of ${where}`,
      description: `Needs \`flows.read\` on ${where}. A secret’s value is never shown.`,
      tags: ['fleet'],
      parameters,
      responses: {
        200: { description: 'By name.', content: json(v.array(VariableSchema)) },
        400: BAD,
        404: NO_GROUP,
        ...ANSWERS,
      },
    }),
    check('flows.read'),
    async (c) => {
      const listed = await variables.list(scopeOf(c))
      if (!listed.ok) return refusal(listed.error)
      return c.json(listed.value.map(variableJson))
    },
  )

  routes.put(
    `${base}/:name`,
    describe({
      operationId: `set${tag}Variable`,
      summary: `Set a flow variable of ${where}`,
      description:
        `Needs \`flows.write\` on ${where}. Delivered with the next deploy, and deployed again at once where a ` +
        'rollout reaches: flows read it as `$' +
        '{NAME}`. A secret one is sealed at rest with `fleet.flows.key`. ' +
        'Audited as `fleet.variable_set`, without its value.',
      tags: ['fleet'],
      parameters: [...parameters, NAME_PARAMETER],
      requestBody: { required: true, content: json(VariableInputSchema) },
      responses: {
        200: { description: 'Set.', content: json(VariableSchema) },
        400: BAD,
        ...(kind === 'group' && { 404: NO_GROUP }),
        409: {
          description: 'A secret, and no key to seal it.',
          content: adminErrorContent(['sealing_not_configured']),
        },
        ...ANSWERS,
      },
    }),
    check('flows.write'),
    async (c) => {
      const fields = await readFields(c, deps.maxBodyBytes, ['json'], VariableFields, 'admin')
      if (!fields.ok) return fields.error
      const set = await variables.set(
        c.get('principal'),
        c.get('address'),
        scopeOf(c),
        c.req.param('name') ?? '',
        fields.value,
      )
      if (!set.ok) return refusal(set.error)
      return c.json(variableJson(set.value))
    },
  )

  routes.delete(
    `${base}/:name`,
    describe({
      operationId: `delete${tag}Variable`,
      summary: `Remove a flow variable of ${where}`,
      description: `Needs \`flows.write\` on ${where}. Audited as \`fleet.variable_removed\`.`,
      tags: ['fleet'],
      parameters: [...parameters, NAME_PARAMETER],
      responses: {
        204: { description: 'Removed. Empty body.' },
        404: {
          description: 'No such group or variable.',
          content: adminErrorContent(['group_not_found', 'variable_not_found']),
        },
        ...ANSWERS,
      },
    }),
    check('flows.write'),
    async (c) => {
      const removed = await variables.remove(
        c.get('principal'),
        c.get('address'),
        scopeOf(c),
        c.req.param('name') ?? '',
      )
      if (!removed.ok) return refusal(removed.error)
      return emptyResponse(204)
    },
  )
}
