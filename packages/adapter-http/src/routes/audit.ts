import {
  decodeTrailCursor,
  hasPermission,
  type TrailEvent,
  type TrailFilter,
  type TrailReport,
} from '@flowadmin/core'
import { Hono } from 'hono'
import * as v from 'valibot'
import { requirePermission } from '../auth.js'
import { basicCredentials } from '../basic-credentials.js'
import type { AppEnv, RouteDeps } from '../env.js'
import { adminError, errorAnswerOf, toResponse } from '../errors.js'
import { readFields } from '../fields.js'
import {
  adminErrorContent,
  clientRefusals,
  describe,
  json,
  RETRY_AFTER,
  signedInAnswers,
  use,
} from '../openapi.js'
import { AdminError, OAuthError } from '../schemas.js'
import { exportFormatOf, exportStream, FLOWADMIN_SOURCE, MEDIA, trailEventJson } from './audit-format.js'
import {
  AuditEvent,
  AuditQuery,
  AuditReportSchema,
  DEFAULT_AUDIT_PAGE,
  MAX_AUDIT_PAGE,
  MAX_REPORTED_EVENTS,
} from './audit-schemas.js'

/** Largest report body from an instance, in bytes. */
export const MAX_REPORT_BYTES = 1024 * 1024

/** `instance=flowadmin`, `instance=<server>` or `instance=<server>/<instance>`. */
function sourceOf(instance: string): TrailFilter['source'] {
  if (instance === FLOWADMIN_SOURCE) return { server: null }
  const slash = instance.indexOf('/')
  return slash < 0
    ? { server: instance }
    : { server: instance.slice(0, slash), instance: instance.slice(slash + 1) }
}

const query = (name: string, description: string, example: string) => ({
  name,
  in: 'query' as const,
  required: false,
  description,
  schema: { type: 'string' as const },
  examples: { search: { summary: 'A search', value: example } },
})

/** `POST /audit/events` (instances report) and `GET /audit` (search and export). Only when auth is on. */
export function auditRoutes(deps: RouteDeps): Hono<AppEnv> {
  const { core } = deps
  const routes = new Hono<AppEnv>()
  if (!core.authEnabled) return routes

  routes.post(
    '/audit/events',
    describe({
      operationId: 'reportAuditEvents',
      summary: 'An instance reports its audit events',
      description:
        'For resource servers (`adminAuth.resourceServers`), authenticated with HTTP Basic `id:secret` as for ' +
        '`POST /auth/introspect`. The events are kept under the resource server the credentials prove: a ' +
        `report cannot name another. At most ${MAX_REPORTED_EVENTS} events and ${MAX_REPORT_BYTES} bytes; ` +
        'all of them are kept or none. Each resource server may send `auditTrail.reported.eventsPerMinute` ' +
        'events a minute (a minute’s worth at once), across every flowadmin sharing the store; past that, 429 ' +
        'with `Retry-After`, and nothing of the report is kept. Each event keeps the time it claims beside the ' +
        'time flowadmin received it. An enrolled instance (its own credential) reports its own events only: a ' +
        'report with an event naming another instance is refused whole (403 `instance_mismatch`) and audited.',
      tags: ['audit'],
      security: [{ basicAuth: [] }],
      requestBody: {
        required: true,
        content: json(AuditReportSchema, {
          deploy: {
            summary: 'A deploy',
            value: {
              events: [
                {
                  time: 1_764_226_800_000,
                  instance: 'line-1',
                  actor: 'alice',
                  event: 'flows.set',
                  address: '10.0.0.7',
                  details: { type: 'full' },
                },
              ],
            },
          },
        }),
      },
      responses: {
        200: {
          description: 'Kept.',
          content: json(v.strictObject({ accepted: v.pipe(v.number(), v.integer()) })),
        },
        400: {
          description: 'Not JSON, or an event of the wrong shape; the message names the field.',
          content: adminErrorContent(['invalid_request']),
        },
        413: {
          description: `The body is larger than ${MAX_REPORT_BYTES} bytes.`,
          content: adminErrorContent(['payload_too_large']),
        },
        ...clientRefusals('client'),
        ...(deps.core.fleet !== null && {
          403: {
            description: 'An enrolled instance’s report names another instance; nothing was kept.',
            content: adminErrorContent(['instance_mismatch']),
          },
        }),
        429: {
          description:
            'Past the resource server’s allowance of events (or too many wrong secrets from its address: ' +
            '`{"error": "temporarily_unavailable"}`); nothing was kept. Send it again after `Retry-After` seconds.',
          headers: { 'Retry-After': RETRY_AFTER },
          content: json(v.union([AdminError(['too_many_events']), OAuthError(['temporarily_unavailable'])])),
        },
        500: use('Unexpected'),
        503: use('StorageUnavailable'),
      },
    }),
    async (c) => {
      // The client first: nothing about the request is looked at for an unauthenticated caller.
      const client = basicCredentials(c.req.header('authorization'))
      if (client === null) return toResponse(errorAnswerOf({ code: 'invalid_client' }))
      // Proven before the body is read: an unknown caller's megabyte is never parsed.
      // So is a reporter told to wait: its report is not read before its time.
      const reporter = await core.reporter(client, deps.clientAddress(c))
      if (!reporter.ok) return toResponse(errorAnswerOf(reporter.error))
      const fields = await readFields(c, MAX_REPORT_BYTES, ['json'], AuditReportSchema, 'admin')
      if (!fields.ok) return fields.error
      const reports: TrailReport[] = fields.value.events
      const kept = await reporter.value.report(reports)
      if (!kept.ok) return toResponse(errorAnswerOf(kept.error))
      return c.json({ accepted: kept.value })
    },
  )

  routes.get(
    '/audit',
    describe({
      operationId: 'searchAudit',
      summary: 'The trail: flowadmin’s audit events and its instances’, the last received first',
      description:
        'With `audit.read` on flowadmin, every event; otherwise the events of the instances where the caller has ' +
        '`audit.read` (`read`) through a grant on a group they are in, and none of flowadmin’s own: such a page ' +
        'may hold fewer events than `limit` while `next` says there are more to look at. JSON answers a page and ' +
        'the cursor of the next; `Accept: text/csv` or `Accept: application/x-ndjson` streams every match instead ' +
        '(`limit` and `cursor` then do not apply).',
      tags: ['audit'],
      parameters: [
        query(
          'instance',
          '`flowadmin`, a resource server id, or `<resource server>/<instance>`.',
          'node-red/line-1',
        ),
        query('actor', 'A username (or client id), exactly.', 'alice'),
        query('event', 'A prefix of the event name: `flows.` matches `flows.set`.', 'flows.'),
        query('outcome', '`success` or `failure`.', 'success'),
        query(
          'since',
          'ISO 8601 with a zone, or a date: events that claim a time at or after it.',
          '2026-11-27T00:00:00Z',
        ),
        query('until', 'ISO 8601 with a zone, or a date: events that claim a time before it.', '2026-11-28'),
        query(
          'received_since',
          'ISO 8601 with a zone, or a date: events flowadmin received at or after it.',
          '2026-11-27T00:00:00Z',
        ),
        query(
          'received_until',
          'ISO 8601 with a zone, or a date: events flowadmin received before it.',
          '2026-11-28',
        ),
        query('limit', `Events in a page, 1 to ${MAX_AUDIT_PAGE}; default ${DEFAULT_AUDIT_PAGE}.`, '50'),
        query('cursor', 'The `next` of the page before.', '42'),
      ],
      responses: {
        200: {
          description: 'A page of events, the last received first, or (CSV, NDJSON) every match, streamed.',
          content: {
            ...json(v.strictObject({ events: v.array(AuditEvent), next: v.nullable(v.string()) })),
            'text/csv': { schema: { type: 'string' as const } },
            'application/x-ndjson': { schema: { type: 'string' as const } },
          },
        },
        400: {
          description: 'A parameter that is not what it should be; the message names it.',
          content: adminErrorContent(['invalid_request']),
        },
        ...signedInAnswers(),
      },
    }),
    requirePermission(deps, ''),
    async (c) => {
      const principal = c.get('principal')
      // Without audit.read on flowadmin, a person reads the events of the instances they may read.
      let visible: ((event: TrailEvent) => boolean) | undefined
      if (!hasPermission(principal.permissions, 'audit.read')) {
        if (!core.permitsSomewhere(principal, 'audit.read', c.get('address')))
          return toResponse(
            errorAnswerOf(
              { code: 'forbidden', permission: 'audit.read' },
              { tokenSent: principal.kind === 'user' },
            ),
          )
        visible = (event) => event.instance !== null && core.permits(principal, 'audit.read', event.instance)
      }
      const parsed = v.safeParse(AuditQuery, c.req.query())
      // Every check of AuditQuery has a message naming its parameter.
      if (!parsed.success)
        return toResponse(
          adminError(400, 'invalid_request', parsed.issues[0]?.message ?? 'Invalid parameter'),
        )
      const q = parsed.output
      const after = q.cursor === undefined ? null : decodeTrailCursor(q.cursor)
      if (q.cursor !== undefined && after === null)
        return toResponse(adminError(400, 'invalid_request', 'cursor is not one this API gave'))
      const filter: TrailFilter = {
        source: q.instance === undefined ? undefined : sourceOf(q.instance),
        actor: q.actor,
        eventPrefix: q.event === '' ? undefined : q.event,
        outcome: q.outcome,
        since: q.since,
        until: q.until,
        receivedSince: q.received_since,
        receivedUntil: q.received_until,
      }
      const format = exportFormatOf(c.req.header('accept'))
      if (format !== 'json') {
        const headers: Record<string, string> = { 'Content-Type': MEDIA[format], 'Cache-Control': 'no-store' }
        if (format === 'csv') headers['Content-Disposition'] = 'attachment; filename="flowadmin-audit.csv"'
        return new Response(exportStream(core.trail.export(filter, undefined, visible), format), { headers })
      }
      const page = await core.trail.search(filter, q.limit ?? DEFAULT_AUDIT_PAGE, after, visible)
      c.header('Cache-Control', 'no-store')
      return c.json({ events: page.events.map(trailEventJson), next: page.next })
    },
  )

  return routes
}
