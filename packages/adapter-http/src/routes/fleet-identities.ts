import { actorOf, type EnrolmentView } from '@flowadmin/core'
import { Hono } from 'hono'
import * as v from 'valibot'
import { requirePermission } from '../auth.js'
import {
  CreateEnrolmentSchema,
  EnrolledSchema,
  EnrolmentSchema,
  EnrolRequestSchema,
} from '../enrolment-schemas.js'
import type { AppEnv, RouteDeps } from '../env.js'
import { adminError, emptyResponse, errorAnswerOf, oauthError, toResponse } from '../errors.js'
import { readFields } from '../fields.js'
import { ID_PARAMETER, INSTANCE_REFUSALS, instanceCaller } from '../fleet-caller.js'
import type { HeldPoll } from '../fleet-held.js'
import { noStore } from '../no-store.js'
import {
  adminErrorContent,
  describe,
  json,
  NO_STORE_HEADERS,
  oauthErrorContent,
  RETRY_AFTER,
  use,
} from '../openapi.js'

const iso = (at: number) => new Date(at).toISOString()
const enrolmentJson = (view: EnrolmentView) => ({
  id: view.id,
  resourceServer: view.resourceServer,
  uses: view.uses,
  left: view.left,
  createdAt: iso(view.createdAt),
  expiresAt: iso(view.expiresAt),
  instance: view.instance,
  groups: view.groups,
  createdBy: view.createdBy,
})
/** Most bytes of an enrolment's request: a token, an id and a version. */
const MAX_ENROL_BYTES = 4096
const OPERATOR_ANSWERS = { 401: use('Unauthorized'), 500: use('Unexpected'), 503: use('StorageUnavailable') }
const NOT_FOUND = { description: 'No such instance. Empty body.' }

/**
 * The fleet's identities: enrolment tokens (an operator's), an instance's enrolment, its new
 * secret, and an operator's rotation and revocation of one instance. `held` names each instance's
 * poll held here, which a revocation ends.
 */
export function fleetIdentityRoutes(deps: RouteDeps, held: ReadonlyMap<string, HeldPoll>): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  const fleet = deps.core.fleet
  if (fleet === null) return routes
  const identities = fleet.identities

  routes.post(
    '/fleet/enrolments',
    describe({
      operationId: 'createFleetEnrolment',
      summary: 'Make an enrolment token',
      description:
        'Needs `nodes.write` and every right (`*`): the credential it yields checks its editors’ passwords and learns ' +
        'of their tokens. The token (`fae_…`) is shown this once and kept as its SHA-256; give it to an instance’s ' +
        'helper, which exchanges it at `POST /fleet/enrol` for a credential of its own. Audited as `fleet.enrolment_created`.',
      tags: ['fleet'],
      requestBody: { required: true, content: json(CreateEnrolmentSchema) },
      responses: {
        201: {
          description: 'The token, shown once.',
          headers: NO_STORE_HEADERS,
          content: json(EnrolmentSchema),
        },
        400: {
          description: 'A field out of its bounds, named.',
          content: adminErrorContent(['invalid_request']),
        },
        ...OPERATOR_ANSWERS,
      },
    }),
    noStore,
    requirePermission(deps, 'nodes.write'),
    async (c) => {
      const fields = await readFields(c, deps.maxBodyBytes, ['json'], CreateEnrolmentSchema, 'admin')
      if (!fields.ok) return fields.error
      const created = await identities.enrolments.create(c.get('principal'), fields.value, c.get('address'))
      if (!created.ok) {
        const { error } = created
        return toResponse(
          error.code === 'invalid_request'
            ? adminError(400, 'invalid_request', error.message)
            : errorAnswerOf(error, { tokenSent: true }),
        )
      }
      const { token, ...view } = created.value
      return c.json({ ...enrolmentJson(view), token }, 201)
    },
  )

  routes.get(
    '/fleet/enrolments',
    describe({
      operationId: 'listFleetEnrolments',
      summary: 'The enrolment tokens',
      description:
        'Needs `nodes.read`. Every enrolment token not cancelled, with its uses left; never the token.',
      tags: ['fleet'],
      responses: {
        200: { description: 'Oldest first.', content: json(v.array(v.omit(EnrolmentSchema, ['token']))) },
        ...OPERATOR_ANSWERS,
      },
    }),
    requirePermission(deps, 'nodes.read'),
    async (c) => c.json((await identities.enrolments.list()).map(enrolmentJson)),
  )

  routes.delete(
    '/fleet/enrolments/:enrolment',
    describe({
      operationId: 'cancelFleetEnrolment',
      summary: 'Cancel an enrolment token',
      description:
        'Needs `nodes.write`. Instances it enrolled keep their credentials. Audited as `fleet.enrolment_cancelled`.',
      tags: ['fleet'],
      parameters: [{ name: 'enrolment', in: 'path', required: true, schema: { type: 'string' } }],
      responses: {
        204: { description: 'Cancelled. Empty body.' },
        404: { description: 'No such enrolment token. Empty body.' },
        ...OPERATOR_ANSWERS,
      },
    }),
    requirePermission(deps, 'nodes.write'),
    async (c) => {
      const cancelled = await identities.enrolments.cancel(
        c.req.param('enrolment'),
        actorOf(c.get('principal'), c.get('address')),
      )
      return emptyResponse(cancelled ? 204 : 404)
    },
  )

  routes.post(
    '/fleet/enrol',
    describe({
      operationId: 'enrolFleetInstance',
      summary: 'An instance enrols with an enrolment token',
      description:
        'No `Authorization`. Spends one use of the token for a credential of the instance’s own: its id (the ' +
        'token’s, else the one asked for, else `nr-<8 hex>`), client id `<resource server>/<instance>` and a secret ' +
        '(`fai_…`, shown this once, kept as its SHA-256), which it then uses with HTTP Basic. Throttled per address ' +
        'like sign-ins. Audited as `fleet.enrolled`, or `fleet.enrol_refused` with the reason.',
      tags: ['fleet'],
      security: [],
      requestBody: { required: true, content: json(EnrolRequestSchema) },
      responses: {
        201: {
          description: 'The credential, shown once.',
          headers: NO_STORE_HEADERS,
          content: json(EnrolledSchema),
        },
        400: {
          description:
            'Not JSON or a field malformed (`invalid_request`, naming it), or another instance id than the token names (`instance_mismatch`).',
          content: adminErrorContent(['invalid_request', 'instance_mismatch']),
        },
        401: {
          description: 'The token is unknown, spent, expired or cancelled: one answer for all.',
          content: adminErrorContent(['invalid_enrolment']),
        },
        409: {
          description:
            'The id is enrolled and not revoked (a copy of a VM or image enrolling under the same id; revoke the ' +
            'first to enrol again), or another resource server’s (`instance_conflict`); the resource server holds ' +
            '`fleet.maxInstances` instances (`too_many_instances`).',
          content: adminErrorContent(['instance_conflict', 'too_many_instances']),
        },
        429: {
          description:
            'Too many refused enrolments from this address; try again after `Retry-After` seconds.',
          headers: { 'Retry-After': RETRY_AFTER },
          content: oauthErrorContent(['temporarily_unavailable']),
        },
        500: use('Unexpected'),
        503: use('StorageUnavailable'),
      },
    }),
    noStore,
    async (c) => {
      const fields = await readFields(c, MAX_ENROL_BYTES, ['json'], EnrolRequestSchema, 'admin')
      if (!fields.ok) return fields.error
      const enrolled = await identities.enrolments.enrol(fields.value, deps.clientAddress(c))
      if (!enrolled.ok) {
        const { error } = enrolled
        if (error.code === 'invalid_request')
          return toResponse(adminError(400, 'invalid_request', error.message))
        if (error.code === 'throttled')
          return toResponse({
            ...oauthError(
              429,
              'temporarily_unavailable',
              `Too many refused enrolments from this address. Try again in ${error.retryAfter} seconds.`,
            ),
            headers: { 'Retry-After': String(error.retryAfter) },
          })
        return toResponse(errorAnswerOf(error))
      }
      return c.json(enrolled.value, 201)
    },
  )

  routes.post(
    '/fleet/instances/:id/credential',
    describe({
      operationId: 'renewFleetCredential',
      summary: 'An enrolled instance takes a new secret',
      description:
        'For an enrolled instance, with its current credential (HTTP Basic): a new secret, shown once. The old one ' +
        'keeps working until the new one is first used, then stops (`fleet.credential_rotated`), so a crash ' +
        'between this answer and saving it loses nothing. Called when its desired state says `"rotate": true`, or ' +
        'whenever the instance wants.',
      tags: ['fleet'],
      security: [{ basicAuth: [] }],
      parameters: [ID_PARAMETER],
      responses: {
        200: {
          description: 'The new secret.',
          headers: NO_STORE_HEADERS,
          content: json(v.omit(EnrolledSchema, ['instance', 'resourceServer'])),
        },
        400: { description: 'A malformed instance id.', content: adminErrorContent(['invalid_request']) },
        ...INSTANCE_REFUSALS,
      },
    }),
    noStore,
    instanceCaller(deps),
    async (c) => {
      const renewed = await identities.renew(c.get('instance').identity)
      if (!renewed.ok) return toResponse(errorAnswerOf(renewed.error))
      return c.json(renewed.value)
    },
  )

  routes.post(
    '/fleet/instances/:id/rotate',
    describe({
      operationId: 'rotateFleetInstance',
      summary: 'Ask an enrolled instance to rotate its credential',
      description:
        'Needs `nodes.write`. Its next poll answers at once with `"rotate": true`, and it takes a new secret. ' +
        'Audited as `fleet.rotation_asked`.',
      tags: ['fleet'],
      parameters: [ID_PARAMETER],
      responses: {
        204: { description: 'Asked. Empty body.' },
        404: { description: 'No enrolled instance of that id that is not revoked. Empty body.' },
        ...OPERATOR_ANSWERS,
      },
    }),
    requirePermission(deps, 'nodes.write'),
    async (c) =>
      emptyResponse(
        (await identities.askRotate(c.req.param('id'), actorOf(c.get('principal'), c.get('address'))))
          ? 204
          : 404,
      ),
  )

  routes.post(
    '/fleet/instances/:id/revoke',
    describe({
      operationId: 'revokeFleetInstance',
      summary: 'Revoke one instance',
      description:
        'Needs `nodes.write`. Its credential is refused at once everywhere (`invalid_client`), the sessions issued ' +
        'through its editor end, its poll here ends and it is not connected; the shared secret may no longer act as ' +
        'it either. It stays listed as `"revoked": true`; it may enrol again with a new token. Audited as `fleet.instance_revoked`.',
      tags: ['fleet'],
      parameters: [ID_PARAMETER],
      responses: { 204: { description: 'Revoked. Empty body.' }, 404: NOT_FOUND, ...OPERATOR_ANSWERS },
    }),
    requirePermission(deps, 'nodes.write'),
    async (c) => {
      const id = c.req.param('id')
      const revoked = await identities.revoke(id, actorOf(c.get('principal'), c.get('address')))
      if (revoked === null) return emptyResponse(404)
      held.get(id)?.end()
      return emptyResponse(204)
    },
  )

  return routes
}
