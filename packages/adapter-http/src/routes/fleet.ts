import { actorOf, type DesiredState } from '@flowadmin/core'
import { Hono } from 'hono'
import * as v from 'valibot'
import { requirePermission } from '../auth.js'
import { readBody } from '../body.js'
import type { AppEnv, RouteDeps } from '../env.js'
import { adminBodyError, adminError, emptyResponse, errorAnswerOf, toResponse } from '../errors.js'
import { ID_PARAMETER, INSTANCE_REFUSALS, instanceCaller } from '../fleet-caller.js'
import { HeldPoll } from '../fleet-held.js'
import { DesiredStateSchema, InstanceReportSchema, InstanceSchema, instanceJson } from '../fleet-schemas.js'
import { createFleetSignals } from '../fleet-signals.js'
import { NO_STORE_APART, noStore } from '../no-store.js'
import { adminErrorContent, describe, json, NO_STORE_HEADERS, use } from '../openapi.js'
import { firstIssueMessage } from '../schemas.js'
import { fleetIdentityRoutes } from './fleet-identities.js'

/** The largest report an instance may send: 1 MiB, whatever `apiMaxLength` says. */
export const MAX_REPORT_BYTES = 1024 * 1024

const etagOf = (state: DesiredState) => `"${state.version}"`
/** The version an `If-None-Match` names (one strong or weak tag), or null. */
const knownVersion = (header: string | undefined) =>
  /^(?:W\/)?"([^"]{1,64})"$/.exec(header?.trim() ?? '')?.[1] ?? null
/** Seconds of `Prefer: wait=N` (RFC 7240), at most `hold`; 0 without it. */
const waitOf = (header: string | undefined, hold: number) => {
  const seconds = /(?:^|[,;\s])wait=(\d{1,6})(?:$|[,;\s])/i.exec(header ?? '')?.[1]
  return seconds === undefined ? 0 : Math.min(Number(seconds), hold)
}

/** Each desired state as JSON, written once however many polls it answers. */
const texts = new WeakMap<DesiredState, string>()
const textOf = (state: DesiredState) => {
  let text = texts.get(state)
  if (text === undefined) {
    text = JSON.stringify(state)
    texts.set(state, text)
  }
  return text
}

/**
 * A poll's answer: `text` (200) or none (304), with the headers the context would give it (the
 * no-store middleware's, the app's nosniff) as a plain record, which @hono/node-server writes as
 * it is: no Headers object is made and read back for each of the fleet's answers.
 */
function desiredAnswer(state: DesiredState, text: string | null): Response {
  const headers: Record<string, string> = { ETag: etagOf(state), ...NO_STORE_APART }
  if (text === null) return new Response(null, { status: 304, headers })
  headers['Content-Type'] = 'application/json'
  return new Response(text, { status: 200, headers })
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
  const { changes, reports, leases } = deps.fleet ?? createFleetSignals(fleet)

  const callerCheck = instanceCaller(deps)
  /**
   * `known` when it is the version the polls' last check read and nothing was told of since (see
   * FleetChanges.current): a poll of it is answered 304 or held without reading the revision. Any
   * other version is read, so that an answer with a body is never older than the store's.
   */
  const unchanged = (known: string | null) =>
    known !== null && changes.current() === known ? known : undefined
  /** The poll held here of each instance: a second one ends the first. */
  const held = new Map<string, HeldPoll>()

  routes.get(
    '/fleet/instances',
    describe({
      operationId: 'listFleetInstances',
      summary: 'The fleet’s Node-RED instances, with their drift',
      description:
        'Each instance the caller may read (`nodes.read` on flowadmin, or at that instance through a grant on a group ' +
        'it is in) that polled or reported here: whether it is in touch (its lease), its ' +
        'Node-RED version, its last report, and each module where it differs from the desired state, with the reason.',
      tags: ['fleet'],
      responses: {
        200: { description: 'The instances, by id.', content: json(v.array(InstanceSchema)) },
        401: use('Unauthorized'),
        500: use('Unexpected'),
        503: use('StorageUnavailable'),
      },
    }),
    requirePermission(deps, ''),
    async (c) => {
      const principal = c.get('principal')
      if (!deps.core.permitsSomewhere(principal, 'nodes.read', c.get('address')))
        return toResponse(
          errorAnswerOf(
            { code: 'forbidden', permission: 'nodes.read' },
            { tokenSent: principal.kind === 'user' },
          ),
        )
      const instances = await fleet.identities.instances()
      const readable = instances.filter((view) => deps.core.permits(principal, 'nodes.read', view.id))
      return c.json(readable.map(instanceJson))
    },
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
      await leases.forget(id)
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
        '(at most the `hold` the desired state names: the `fleet.hold` setting) and comes at once when the ' +
        'desired state changes; 304 when it did not. A poll keeps the instance connected; one whose ' +
        'connection closes before its answer ends that at once.',
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
        ...INSTANCE_REFUSALS,
      },
    }),
    noStore,
    callerCheck,
    async (c) => {
      const caller = c.get('instance')
      const known = knownVersion(c.req.header('If-None-Match'))
      const wait = waitOf(c.req.header('Prefer'), fleet.holdSeconds)
      let since = changes.generation()
      // Its version is the one the polls' last check read: it is held on it without reading it. A
      // poll that will not be held reads the revision, so its 304 is the store's word.
      const polled = await fleet.identities.poll(caller, wait > 0 ? unchanged(known) : undefined)
      if (!polled.ok) return toResponse(errorAnswerOf(polled.error))
      let desired = polled.value.state
      const { rotate } = polled.value
      const poll = new HeldPoll(c.env, () => c.req.raw.signal)
      // One held poll per instance here: a second one ends the first, answered as if its hold ended.
      held.get(caller.id)?.end()
      held.set(caller.id, poll)
      leases.started(caller.id, caller.resourceServer)
      try {
        // Held until the version changes; not when the instance is to rotate its credential.
        const deadline = Date.now() + wait * 1000
        while (
          !rotate &&
          known !== null &&
          desired.version === known &&
          Date.now() < deadline &&
          !poll.aborted
        ) {
          const over = await changes.wait(known, deadline - Date.now(), poll, since)
          since = changes.generation()
          if (poll.lost) break
          desired = await fleet.desired(unchanged(known))
          if (over || poll.ended) break
        }
      } finally {
        if (held.get(caller.id) === poll) held.delete(caller.id)
        poll.release()
        // Its connection closed before the answer: the instance went away.
        await leases.ended(caller.id, caller.resourceServer, poll.lost)
      }
      // Someone asked for the flows it runs: said in a 200, which a 304 could not carry.
      const asked = await fleet.snapshots.asked(caller.id)
      if (rotate || asked !== null) {
        const flows = await fleet.rollouts.target(caller.id, desired.version)
        const extra = {
          ...(rotate && { rotate: true }),
          ...(asked !== null && { snapshot: { name: asked.name } }),
          ...(flows !== null && { flows }),
        }
        return desiredAnswer(desired, JSON.stringify({ ...desired, ...extra }))
      }
      if (known !== null && desired.version === known) return desiredAnswer(desired, null)
      // The rollout its flows should be: every change of it bumps the version, so a 304 holds.
      const flows = await fleet.rollouts.target(caller.id, desired.version)
      if (flows !== null) return desiredAnswer(desired, JSON.stringify({ ...desired, flows }))
      return desiredAnswer(desired, textOf(desired))
    },
  )

  routes.delete(
    '/fleet/instances/:id/lease',
    describe({
      operationId: 'leaveFleetInstance',
      summary: 'An instance says it leaves',
      description:
        'For the fleet’s instances, authenticated as their resource server with HTTP Basic: its Node-RED is ' +
        'stopping, so it is `connected: false` at once (a `fleet.disconnected` event), whether or not a poll of ' +
        'it is held. Its next poll connects it again.',
      tags: ['fleet'],
      security: [{ basicAuth: [] }],
      parameters: [ID_PARAMETER],
      responses: {
        204: { description: 'Disconnected (or it was not connected). Empty body.' },
        400: { description: 'A malformed instance id.', content: adminErrorContent(['invalid_request']) },
        ...INSTANCE_REFUSALS,
      },
    }),
    noStore,
    callerCheck,
    async (c) => {
      const caller = c.get('instance')
      const leaving = await fleet.leave(caller.id, caller.resourceServer)
      if (!leaving.ok) return toResponse(errorAnswerOf(leaving.error))
      await leases.left(caller.id, caller.resourceServer)
      return emptyResponse(204)
    },
  )

  routes.post(
    '/fleet/instances/:id/report',
    describe({
      operationId: 'reportFleetInstance',
      summary: 'An instance reports what it has',
      description:
        'For the fleet’s instances, authenticated as their resource server with HTTP Basic: its Node-RED ' +
        'version, node modules and their sets, the types its flows use, the version it last finished working ' +
        'on, what Node-RED or npm refused, and what changed there by hand. A report whose `sequence` is not ' +
        `greater than the one stored is acknowledged and changes nothing. At most ${MAX_REPORT_BYTES} bytes.`,
      tags: ['fleet'],
      security: [{ basicAuth: [] }],
      parameters: [ID_PARAMETER],
      requestBody: { required: true, content: json(InstanceReportSchema) },
      responses: {
        204: { description: 'Recorded, or stale (changes nothing). Empty body.' },
        400: {
          description: 'Not JSON, or not a report (`invalid_request`, naming the field).',
          content: adminErrorContent(['invalid_request']),
        },
        413: use('AdminPayloadTooLarge'),
        ...INSTANCE_REFUSALS,
      },
    }),
    noStore,
    callerCheck,
    async (c) => {
      const caller = c.get('instance')
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
      const { sequence, ...report } = parsed.output
      const recorded = await fleet.report(
        caller.id,
        caller.resourceServer,
        report,
        sequence ?? null,
        deps.clientAddress(c),
      )
      if (!recorded.ok) return toResponse(errorAnswerOf(recorded.error))
      // The answers of changes waiting for the instances' outcomes look again.
      if (recorded.value === 'saved') reports.notify()
      return emptyResponse(204)
    },
  )

  routes.route('/', fleetIdentityRoutes(deps, held))
  return routes
}
