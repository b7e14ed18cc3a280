import type { AssignmentError, GroupView } from '@flowadmin/core'
import { Hono } from 'hono'
import * as v from 'valibot'
import { requirePermission } from '../auth.js'
import type { AppEnv, RouteDeps } from '../env.js'
import { adminError, emptyResponse, signedInRefusal, toResponse } from '../errors.js'
import { ID_PARAMETER } from '../fleet-caller.js'
import { adminErrorContent, describe, json, use } from '../openapi.js'
import { Time } from '../schemas.js'

const GroupSchema = v.strictObject({
  name: v.string(),
  patterns: v.pipe(
    v.array(v.string()),
    v.description('The settings’ instance id patterns (`fleet.groups`): `*` any characters, `?` one.'),
  ),
  assigned: v.pipe(
    v.array(v.strictObject({ instance: v.string(), by: v.nullable(v.string()), at: Time })),
    v.description('The instances put in it over the API, by whom (null: the command line) and when.'),
  ),
})

const groupJson = (view: GroupView) => ({
  ...view,
  assigned: view.assigned.map((each) => ({ ...each, at: new Date(each.at).toISOString() })),
})

/** A refusal: a malformed id in the admin routes' error shape, anything else as for a signed-in caller. */
const refusal = (error: AssignmentError): Response =>
  error.code === 'invalid_request'
    ? toResponse(adminError(400, 'invalid_request', error.message))
    : signedInRefusal(error)

const PARAMETERS = [
  {
    name: 'group',
    in: 'path' as const,
    required: true,
    description: 'A group the settings declare (`fleet.groups`).',
    schema: { type: 'string' as const },
    examples: { line: { summary: 'A group', value: 'line-1' } },
  },
  { ...ID_PARAMETER, examples: { line: { summary: 'An instance', value: 'press-1' } } },
]
const ANSWERS = {
  400: { description: 'A malformed instance id.', content: adminErrorContent(['invalid_request']) },
  401: use('Unauthorized'),
  500: use('Unexpected'),
  503: use('StorageUnavailable'),
}

/**
 * The groups of instances: `GET /fleet/groups` (each declared group, its patterns and the
 * instances put in it), `PUT` and `DELETE /fleet/groups/{group}/instances/{id}` (put an instance in
 * a declared group, take it out: `*` on flowadmin, audited). In fleet mode with auth on: the
 * instances with identities are the fleet's.
 */
export function groupRoutes(deps: RouteDeps): Hono<AppEnv> {
  const { core } = deps
  const routes = new Hono<AppEnv>()
  if (!core.authEnabled || core.fleet === null) return routes

  routes.get(
    '/fleet/groups',
    describe({
      operationId: 'listFleetGroups',
      summary: 'The groups of instances',
      description: 'Needs `read` on flowadmin. Each group the settings declare, by name.',
      tags: ['fleet'],
      responses: {
        200: { description: 'By name.', content: json(v.array(GroupSchema)) },
        401: use('Unauthorized'),
        500: use('Unexpected'),
        503: use('StorageUnavailable'),
      },
    }),
    requirePermission(deps, 'read'),
    (c) => c.json(core.groups.list().map(groupJson)),
  )

  routes.put(
    '/fleet/groups/:group/instances/:id',
    describe({
      operationId: 'assignFleetGroup',
      summary: 'Put an instance in a group',
      description:
        'Needs `*` on flowadmin. The group must be declared in the settings (`fleet.groups`); the instance need not be ' +
        'enrolled yet. Its rights count at the instance’s next introspection. Idempotent. Audited as `access.group_assigned`.',
      tags: ['fleet'],
      parameters: PARAMETERS,
      responses: {
        204: { description: 'It is in the group. Empty body.' },
        404: { description: 'No such group.', content: adminErrorContent(['group_not_found']) },
        ...ANSWERS,
      },
    }),
    requirePermission(deps, '*'),
    async (c) => {
      const { group, id } = c.req.param()
      const assigned = await core.groups.assign(c.get('principal'), group, id, c.get('address'))
      return assigned.ok ? emptyResponse(204) : refusal(assigned.error)
    },
  )

  routes.delete(
    '/fleet/groups/:group/instances/:id',
    describe({
      operationId: 'unassignFleetGroup',
      summary: 'Take an instance out of a group it was put in',
      description:
        'Needs `*` on flowadmin. A rule of the settings that matches the instance still holds it in the group. ' +
        'Audited as `access.group_unassigned`.',
      tags: ['fleet'],
      parameters: PARAMETERS,
      responses: {
        204: { description: 'Taken out. Empty body.' },
        404: {
          description: 'No such group, or the instance was not put in it.',
          content: adminErrorContent(['group_not_found', 'assignment_not_found']),
        },
        ...ANSWERS,
      },
    }),
    requirePermission(deps, '*'),
    async (c) => {
      const { group, id } = c.req.param()
      const removed = await core.groups.unassign(c.get('principal'), group, id, c.get('address'))
      return removed.ok ? emptyResponse(204) : refusal(removed.error)
    },
  )

  return routes
}
