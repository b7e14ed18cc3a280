import { actorOf, type DesiredState, type InstanceView } from '@flowadmin/core'
import { type Context, Hono } from 'hono'
import * as v from 'valibot'
import { requirePermission } from '../auth.js'
import { readBody } from '../body.js'
import type { AppEnv, RouteDeps } from '../env.js'
import { adminBodyError, adminError, emptyResponse, errorAnswerOf, toResponse } from '../errors.js'
import { createFleetChanges } from '../fleet-changes.js'
import {
  adminErrorContent,
  describe,
  json,
  NO_STORE_HEADERS,
  oauthErrorContent,
  RETRY_AFTER,
  use,
} from '../openapi.js'
import { firstIssueMessage, NullableTime, Time } from '../schemas.js'
import { noStore } from './auth.js'
import { basicCredentials } from './introspect.js'

/** The largest report an instance may send: 1 MiB, whatever `apiMaxLength` says. */
export const MAX_REPORT_BYTES = 1024 * 1024
/** The longest a poll is held, in seconds (`Prefer: wait=N` asks for up to this). */
export const MAX_POLL_WAIT = 30

const INSTANCE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/
/**
 * Well-formed text without control characters: a lone surrogate or a NUL cannot be stored (as
 * PostgreSQL's jsonb refuses `\u0000`), and a control character would forge lines where it is shown.
 */
const TEXT = /^[^\p{Cc}\p{Cs}]*$/u
const text = (max: number, min = 0) =>
  v.pipe(
    v.string(),
    v.minLength(min),
    v.maxLength(max),
    v.regex(TEXT, 'must be well-formed text without control characters'),
  )
const Name = text(214, 1)
const Short = text(64)
const Message = text(1000)
const Type = text(214)

/** What an instance reports of itself (`POST /fleet/instances/{id}/report`). */
export const InstanceReportSchema = v.pipe(
  v.strictObject({
    nodeRedVersion: Short,
    modules: v.pipe(
      v.array(
        v.strictObject({
          name: Name,
          version: Short,
          sets: v.pipe(
            v.array(
              v.strictObject({
                name: Name,
                types: v.pipe(v.array(Type), v.maxLength(1000)),
                enabled: v.boolean(),
                loaded: v.boolean(),
                err: v.optional(Message),
              }),
            ),
            v.maxLength(200),
          ),
        }),
      ),
      v.maxLength(2000),
    ),
    typesInUse: v.pipe(v.array(Type), v.maxLength(10000)),
    applied: v.nullable(Short),
    failures: v.pipe(
      v.array(
        v.strictObject({
          module: Name,
          action: v.picklist(['enable', 'disable', 'install', 'remove']),
          message: Message,
        }),
      ),
      v.maxLength(2000),
    ),
  }),
  v.metadata({ ref: 'InstanceReport' }),
)

const DesiredStateSchema = v.pipe(
  v.strictObject({
    version: v.string(),
    prune: v.boolean(),
    modules: v.array(
      v.strictObject({
        name: v.string(),
        sets: v.array(v.strictObject({ name: v.string(), enabled: v.boolean() })),
      }),
    ),
    installs: v.array(v.strictObject({ module: v.string(), version: v.nullable(v.string()) })),
    removals: v.array(v.string()),
  }),
  v.metadata({ ref: 'FleetDesiredState' }),
)

/** Where an instance differs from the desired state. */
export const DriftSchema = v.pipe(
  v.strictObject({
    module: v.string(),
    reason: v.picklist(['pending', 'refused', 'install_failed', 'remove_failed', 'installed_by_hand']),
    message: v.optional(v.pipe(v.string(), v.description('Node-RED’s or npm’s own message.'))),
  }),
  v.metadata({ ref: 'FleetDrift' }),
)

const InstanceSchema = v.pipe(
  v.strictObject({
    id: v.string(),
    resourceServer: v.string(),
    nodeRedVersion: v.nullable(v.string()),
    connected: v.pipe(v.boolean(), v.description('In touch within the last 40 seconds.')),
    lastSeen: Time,
    lastReport: NullableTime('When its last report arrived; null before the first.'),
    applied: v.nullable(v.pipe(v.string(), v.description('The desired state’s version it last applied.'))),
    modules: v.pipe(v.number(), v.description('How many node modules it reports.')),
    drift: v.array(DriftSchema),
  }),
  v.metadata({ ref: 'FleetInstance' }),
)

const instanceJson = (view: InstanceView) => ({
  ...view,
  lastSeen: new Date(view.lastSeen).toISOString(),
  lastReport: view.lastReport === null ? null : new Date(view.lastReport).toISOString(),
})

const ID_PARAMETER = {
  name: 'id',
  in: 'path' as const,
  required: true,
  description: 'The instance’s id (its helper’s `instanceId`, or the one it keeps in its userDir).',
  schema: { type: 'string' as const, pattern: INSTANCE_ID.source },
}

const BASIC_401 = {
  description: 'No client credentials, an unknown resource server, or a wrong secret.',
  headers: {
    'WWW-Authenticate': {
      required: true,
      schema: { type: 'string' as const, pattern: '^Basic realm="flowadmin"$' },
    },
  },
  content: oauthErrorContent(['invalid_client']),
}

const CLIENT_THROTTLED = {
  description:
    'Too many wrong secrets for this resource server from this address; the secret was not checked.',
  headers: { 'Retry-After': RETRY_AFTER },
  content: oauthErrorContent(['temporarily_unavailable']),
}

const etagOf = (state: DesiredState) => `"${state.version}"`
/** The version an `If-None-Match` names (one strong or weak tag), or null. */
const knownVersion = (header: string | undefined) =>
  /^(?:W\/)?"([^"]{1,64})"$/.exec(header?.trim() ?? '')?.[1] ?? null
/** Seconds of `Prefer: wait=N` (RFC 7240), at most MAX_POLL_WAIT; 0 without it. */
const waitOf = (header: string | undefined) => {
  const seconds = /(?:^|[,;\s])wait=(\d{1,6})(?:$|[,;\s])/i.exec(header ?? '')?.[1]
  return seconds === undefined ? 0 : Math.min(Number(seconds), MAX_POLL_WAIT)
}

/**
 * Fleet mode's routes: `GET /fleet/instances` for people, and the instances' own
 * `GET /fleet/instances/{id}/desired` (a long poll) and `POST /fleet/instances/{id}/report`,
 * authenticated as their resource server (HTTP Basic). None without fleet mode.
 */
export function fleetRoutes(deps: RouteDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  const fleet = deps.core.fleet
  if (fleet === null) return routes
  const changes = deps.fleetChanges ?? createFleetChanges(async () => (await fleet.desired()).version)

  /** The resource server an instance's request authenticates as, or the answer refusing it. */
  async function instanceCaller(c: Context<AppEnv>) {
    const client = basicCredentials(c.req.header('authorization'))
    // As the router decoded it; anything but the id's characters is refused below.
    const id = c.req.param('id') ?? ''
    if (client === null || fleet === null)
      return { refused: toResponse(errorAnswerOf({ code: 'invalid_client' })) }
    const caller = await fleet.authenticateClient(client, deps.clientAddress(c))
    if (!caller.ok) return { refused: toResponse(errorAnswerOf(caller.error)) }
    if (!INSTANCE_ID.test(id)) {
      return {
        refused: toResponse(
          adminError(
            400,
            'invalid_request',
            'The instance id must be 1 to 128 letters, digits, ".", "_" or "-"',
          ),
        ),
      }
    }
    return { id, resourceServer: caller.value }
  }

  routes.get(
    '/fleet/instances',
    describe({
      operationId: 'listFleetInstances',
      summary: 'The fleet’s Node-RED instances, with their drift',
      description:
        'Needs `nodes.read`. Each instance that polled or reported here: whether it is in touch, its Node-RED ' +
        'version, its last report, and each module where it differs from the desired state, with the reason.',
      tags: ['fleet'],
      responses: {
        200: { description: 'The instances, by id.', content: json(v.array(InstanceSchema)) },
        401: use('Unauthorized'),
        500: use('Unexpected'),
        503: use('StorageUnavailable'),
      },
    }),
    requirePermission(deps, 'nodes.read'),
    async (c) => c.json((await fleet.instances()).map(instanceJson)),
  )

  routes.delete(
    '/fleet/instances/:id',
    describe({
      operationId: 'removeFleetInstance',
      summary: 'Forget a retired instance',
      description:
        'Needs `nodes.write`. The instance and its report are forgotten: the types its flows used no longer ' +
        'refuse a disable, its modules no longer count as missing there. An instance that polls again joins anew.',
      tags: ['fleet'],
      parameters: [ID_PARAMETER],
      responses: {
        204: { description: 'Forgotten. Empty body.' },
        401: use('Unauthorized'),
        404: { description: 'No such instance. Empty body.' },
        500: use('Unexpected'),
        503: use('StorageUnavailable'),
      },
    }),
    requirePermission(deps, 'nodes.write'),
    async (c) => {
      const id = c.req.param('id')
      const removed = await fleet.remove(id, actorOf(c.get('principal'), c.get('address')))
      return removed ? emptyResponse(204) : emptyResponse(404)
    },
  )

  routes.get(
    '/fleet/instances/:id/desired',
    describe({
      operationId: 'pollFleetDesiredState',
      summary: 'The desired state, for an instance (long poll)',
      description:
        'For the fleet’s instances, authenticated as their resource server with HTTP Basic. With ' +
        '`If-None-Match` naming the version it has, the answer waits up to `Prefer: wait=N` seconds ' +
        `(at most ${MAX_POLL_WAIT}) and comes at once when the desired state changes; 304 when it did not.`,
      tags: ['fleet'],
      security: [{ basicAuth: [] }],
      parameters: [
        ID_PARAMETER,
        { name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' } },
        { name: 'Prefer', in: 'header', required: false, schema: { type: 'string', example: 'wait=25' } },
      ],
      responses: {
        200: {
          description: 'The desired state; `ETag` is its version.',
          headers: { ...NO_STORE_HEADERS, ETag: { required: true, schema: { type: 'string' } } },
          content: json(DesiredStateSchema),
        },
        304: { description: 'Unchanged during the wait. Empty body.' },
        400: { description: 'A malformed instance id.', content: adminErrorContent(['invalid_request']) },
        401: BASIC_401,
        409: {
          description: 'The id is another resource server’s instance.',
          content: adminErrorContent(['instance_conflict']),
        },
        429: CLIENT_THROTTLED,
        500: use('Unexpected'),
        503: use('StorageUnavailable'),
      },
    }),
    noStore,
    async (c) => {
      const caller = await instanceCaller(c)
      if ('refused' in caller) return caller.refused
      const known = knownVersion(c.req.header('If-None-Match'))
      const wait = waitOf(c.req.header('Prefer'))
      let since = changes.generation()
      const state = await fleet.poll(caller.id, caller.resourceServer)
      if (!state.ok) return toResponse(errorAnswerOf(state.error))
      let desired = state.value
      // Held until the version changes: a notice of another change (a report) waits on.
      const deadline = Date.now() + wait * 1000
      const signal = c.req.raw.signal
      while (known !== null && desired.version === known && Date.now() < deadline && !signal.aborted) {
        const over = await changes.wait(known, deadline - Date.now(), signal, since)
        since = changes.generation()
        desired = await fleet.desired()
        if (over) break
      }
      c.header('ETag', etagOf(desired))
      if (known !== null && desired.version === known) return c.body(null, 304)
      return c.json(desired)
    },
  )

  routes.post(
    '/fleet/instances/:id/report',
    describe({
      operationId: 'reportFleetInstance',
      summary: 'An instance reports what it has',
      description:
        'For the fleet’s instances, authenticated as their resource server with HTTP Basic: its Node-RED ' +
        'version, node modules and their sets, the types its flows use, the version it applied and what ' +
        `Node-RED or npm refused. At most ${MAX_REPORT_BYTES} bytes.`,
      tags: ['fleet'],
      security: [{ basicAuth: [] }],
      parameters: [ID_PARAMETER],
      requestBody: { required: true, content: json(InstanceReportSchema) },
      responses: {
        204: { description: 'Recorded. Empty body.' },
        400: {
          description: 'Not JSON, or not a report (`invalid_request`, naming the field).',
          content: adminErrorContent(['invalid_request']),
        },
        401: BASIC_401,
        409: {
          description: 'The id is another resource server’s instance.',
          content: adminErrorContent(['instance_conflict']),
        },
        413: use('AdminPayloadTooLarge'),
        429: CLIENT_THROTTLED,
        500: use('Unexpected'),
        503: use('StorageUnavailable'),
      },
    }),
    noStore,
    async (c) => {
      const caller = await instanceCaller(c)
      if ('refused' in caller) return caller.refused
      const body = await readBody(c.req.raw, MAX_REPORT_BYTES, ['json'], c.env)
      if (!body.ok) return toResponse(adminBodyError(body.error))
      const parsed = v.safeParse(InstanceReportSchema, body.value)
      if (!parsed.success) {
        const issue = parsed.issues[0]
        const where = issue === undefined ? null : v.getDotPath(issue)
        const message = firstIssueMessage(parsed.issues, 'field')
        return toResponse(
          adminError(400, 'invalid_request', where === null ? message : `Invalid field ${where}: ${message}`),
        )
      }
      const recorded = await fleet.report(
        caller.id,
        caller.resourceServer,
        parsed.output,
        deps.clientAddress(c),
      )
      if (!recorded.ok) return toResponse(errorAnswerOf(recorded.error))
      changes.notify()
      return emptyResponse(204)
    },
  )

  return routes
}
