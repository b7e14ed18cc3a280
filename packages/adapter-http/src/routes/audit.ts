import { decodeTrailCursor, type TrailEvent, type TrailFilter, type TrailReport } from '@flowadmin/core'
import { Hono } from 'hono'
import * as v from 'valibot'
import { requirePermission } from '../auth.js'
import { basicCredentials } from '../basic-credentials.js'
import type { AppEnv, RouteDeps } from '../env.js'
import { adminError, errorAnswerOf, toResponse } from '../errors.js'
import { readFields } from '../fields.js'
import { adminErrorContent, clientRefusals, describe, json, signedInAnswers, use } from '../openapi.js'
import {
  CSV_HEADER,
  type ExportFormat,
  exportFormatOf,
  FLOWADMIN_SOURCE,
  trailEventCsv,
  trailEventJson,
  trailEventLine,
} from './audit-format.js'

/** Most events in one report from an instance. */
export const MAX_REPORTED_EVENTS = 500
/** Largest report body from an instance, in bytes. */
export const MAX_REPORT_BYTES = 1024 * 1024
/** Events in one page of `GET /audit`: the default and the most. */
export const DEFAULT_AUDIT_PAGE = 100
export const MAX_AUDIT_PAGE = 1000

/** No control characters: they would forge lines in logs and CSV, and PostgreSQL's text holds no NUL. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses.
const PRINTABLE = /^[^\u0000-\u001f\u007f]*$/
const text = (field: string, max: number) =>
  v.pipe(
    v.string(`${field} must be a string`),
    v.maxLength(max, `${field} must be at most ${max} characters`),
    v.regex(PRINTABLE, `${field} must not contain control characters`),
  )

/** One event as an instance reports it. */
const ReportedEvent = v.strictObject(
  {
    time: v.pipe(
      v.number('events[].time must be a number'),
      v.integer('events[].time must be whole milliseconds since the epoch'),
      v.minValue(0, 'events[].time must not be before 1970'),
      v.maxValue(8.64e15, 'events[].time is too far in the future'),
      v.description(
        'Milliseconds since the epoch, as the instance’s clock says; at most 5 minutes ahead of flowadmin’s.',
      ),
    ),
    instance: v.pipe(
      text('events[].instance', 128),
      v.minLength(1, 'events[].instance must not be empty'),
      v.check(
        (name) => !name.includes('/'),
        'events[].instance must not contain "/" (the trail shows <resource server>/<instance>)',
      ),
      v.description('The instance’s name for itself, within its resource server; no `/`.'),
    ),
    actor: v.pipe(
      v.nullable(text('events[].actor', 256)),
      v.description('The username flowadmin knows, or null.'),
    ),
    event: v.pipe(
      v.string('events[].event must be a string'),
      v.regex(
        /^[A-Za-z0-9_.:-]{1,128}$/,
        'events[].event must be 1 to 128 letters, digits, `.`, `_`, `:` or `-`',
      ),
      v.description('Node-RED’s event name, e.g. `flows.set`.'),
    ),
    address: v.pipe(
      v.nullable(text('events[].address', 128)),
      v.description('The client’s address as the instance saw it (unverified).'),
    ),
    details: v.optional(
      v.pipe(
        v.unknown(),
        v.check(
          (value) => value !== null && typeof value === 'object' && !Array.isArray(value),
          'events[].details must be an object',
        ),
        v.record(v.string(), v.unknown(), 'events[].details must be an object'),
        v.description('The rest of the event; keys that look secret are dropped.'),
      ),
      {},
    ),
  },
  // No other key: a report that names a resource server or source is refused, not half-read.
  'events[] must be an object of time, instance, actor, event, address and details, and nothing else',
)

/** `POST /audit/events`: a batch from an instance. */
export const AuditReportSchema = v.object({
  events: v.pipe(
    v.array(ReportedEvent, 'events must be an array'),
    v.maxLength(MAX_REPORTED_EVENTS, `events must hold at most ${MAX_REPORTED_EVENTS} events`),
  ),
})

/** An event as `GET /audit` shows it. */
const AuditEvent = v.pipe(
  v.strictObject({
    time: v.pipe(v.string(), v.description('ISO 8601, UTC: when it happened, as its source says.')),
    instance: v.pipe(
      v.string(),
      v.description('`flowadmin` for flowadmin’s own events, else `<resource server>/<instance>`.'),
    ),
    actor: v.pipe(
      v.nullable(v.string()),
      v.description('The username (or client id) acting; null: nobody known.'),
    ),
    event: v.string(),
    outcome: v.picklist(['success', 'failure']),
    address: v.nullable(v.string()),
    address_reported: v.pipe(
      v.boolean(),
      v.description('True: the instance reported the address (unverified). False: flowadmin saw it.'),
    ),
    details: v.record(v.string(), v.unknown()),
  }),
  v.metadata({ ref: 'AuditEvent' }),
)

/** ISO 8601: a date, or a date and time with seconds optional and a zone (`Z` or `±hh:mm`). */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/

const isoTime = (name: string) =>
  v.pipe(
    v.string(),
    v.regex(ISO_8601, `${name} must be an ISO 8601 time with a zone, e.g. 2026-11-27T06:00:00Z, or a date`),
    // Date.parse rolls 31 February over into March: the day must exist in its month.
    v.check((value) => {
      const [year, month, day] = value.slice(0, 10).split('-').map(Number) as [number, number, number]
      return day >= 1 && day <= new Date(Date.UTC(year, month, 0)).getUTCDate()
    }, `${name} is not a valid date`),
    v.transform((value) => Date.parse(value)),
    v.check((time) => Number.isFinite(time), `${name} is not a valid date`),
  )

/** The query of `GET /audit`, checked; messages name the parameter. */
const AuditQuery = v.object({
  instance: v.optional(v.pipe(text('instance', 512), v.minLength(1, 'instance must not be empty'))),
  actor: v.optional(text('actor', 256)),
  event: v.optional(text('event', 128)),
  outcome: v.optional(v.picklist(['success', 'failure'], 'outcome must be success or failure')),
  since: v.optional(isoTime('since')),
  until: v.optional(isoTime('until')),
  limit: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^[1-9]\d{0,3}$/, `limit must be a whole number from 1 to ${MAX_AUDIT_PAGE}`),
      v.transform(Number),
      v.maxValue(MAX_AUDIT_PAGE, `limit must be a whole number from 1 to ${MAX_AUDIT_PAGE}`),
    ),
  ),
  cursor: v.optional(v.string()),
})

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

const MEDIA: Record<ExportFormat, string> = {
  json: 'application/json',
  csv: 'text/csv; charset=utf-8',
  ndjson: 'application/x-ndjson',
}

/**
 * Every match as one streamed body, a page read from the store at a time as the client takes
 * them, so memory stays bounded whatever the size of the export.
 */
function exportStream(
  pages: AsyncGenerator<TrailEvent[]>,
  format: 'csv' | 'ndjson',
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  const row = format === 'csv' ? trailEventCsv : trailEventLine
  let started = false
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (!started && format === 'csv') controller.enqueue(encoder.encode(CSV_HEADER))
        started = true
        const next = await pages.next()
        if (next.done === true) controller.close()
        else controller.enqueue(encoder.encode(next.value.map(row).join('')))
      },
      async cancel() {
        await pages.return(undefined)
      },
    },
    { highWaterMark: 1 },
  )
}

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
        'all of them are kept or none.',
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
          description:
            'Not JSON, an event of the wrong shape, or a time more than 5 minutes ahead of flowadmin’s ' +
            'clock; the message names the field.',
          content: adminErrorContent(['invalid_request']),
        },
        413: {
          description: `The body is larger than ${MAX_REPORT_BYTES} bytes.`,
          content: adminErrorContent(['payload_too_large']),
        },
        ...clientRefusals('client'),
        500: use('Unexpected'),
        503: use('StorageUnavailable'),
      },
    }),
    async (c) => {
      // The client first: nothing about the request is looked at for an unauthenticated caller.
      const client = basicCredentials(c.req.header('authorization'))
      if (client === null) return toResponse(errorAnswerOf({ code: 'invalid_client' }))
      // Proven before the body is read: an unknown caller's megabyte is never parsed.
      const reporter = await core.reporter(client, deps.clientAddress(c))
      if (!reporter.ok) return toResponse(errorAnswerOf(reporter.error))
      const fields = await readFields(c, MAX_REPORT_BYTES, ['json'], AuditReportSchema, 'admin')
      if (!fields.ok) return fields.error
      const reports: TrailReport[] = fields.value.events
      const kept = await reporter.value.report(reports)
      if (!kept.ok) return toResponse(adminError(400, 'invalid_request', kept.error.message))
      return c.json({ accepted: kept.value })
    },
  )

  routes.get(
    '/audit',
    describe({
      operationId: 'searchAudit',
      summary: 'The trail: flowadmin’s audit events and its instances’, the last received first',
      description:
        'Needs `audit.read`. JSON answers a page and the cursor of the next; `Accept: text/csv` or ' +
        '`Accept: application/x-ndjson` streams every match instead (`limit` and `cursor` then do not apply).',
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
        query('since', 'ISO 8601 with a zone, or a date: events at or after it.', '2026-11-27T00:00:00Z'),
        query('until', 'ISO 8601 with a zone, or a date: events before it.', '2026-11-28'),
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
    requirePermission(deps, 'audit.read'),
    async (c) => {
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
      }
      const format = exportFormatOf(c.req.header('accept'))
      if (format !== 'json') {
        const headers: Record<string, string> = { 'Content-Type': MEDIA[format], 'Cache-Control': 'no-store' }
        if (format === 'csv') headers['Content-Disposition'] = 'attachment; filename="flowadmin-audit.csv"'
        return new Response(exportStream(core.trail.export(filter), format), { headers })
      }
      const page = await core.trail.search(filter, q.limit ?? DEFAULT_AUDIT_PAGE, after)
      c.header('Cache-Control', 'no-store')
      return c.json({ events: page.events.map(trailEventJson), next: page.next })
    },
  )

  return routes
}
