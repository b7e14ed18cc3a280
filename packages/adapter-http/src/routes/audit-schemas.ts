import * as v from 'valibot'

// What the audit routes read: an instance's report of its events, and the query of a search.

/** Most events in one report from an instance. */
export const MAX_REPORTED_EVENTS = 500
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
        'Milliseconds since the epoch, as the instance’s clock says. Kept as claimed, beside the time flowadmin ' +
          'received it; more than 24 hours before or 5 minutes after that, the event is shown as `time_suspect`.',
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
export const AuditEvent = v.pipe(
  v.strictObject({
    time: v.pipe(v.string(), v.description('ISO 8601, UTC: when it happened, as its source claims.')),
    received: v.pipe(
      v.string(),
      v.description(
        'ISO 8601, UTC: when flowadmin received it, by its own clock (for its own events, `time`).',
      ),
    ),
    time_suspect: v.pipe(
      v.boolean(),
      v.description(
        'True: the claimed `time` is more than 24 hours before or 5 minutes after `received` (a wrong clock, ' +
          'an instance back after a day away, or a lie).',
      ),
    ),
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
export const AuditQuery = v.object({
  instance: v.optional(v.pipe(text('instance', 512), v.minLength(1, 'instance must not be empty'))),
  actor: v.optional(text('actor', 256)),
  event: v.optional(text('event', 128)),
  outcome: v.optional(v.picklist(['success', 'failure'], 'outcome must be success or failure')),
  since: v.optional(isoTime('since')),
  until: v.optional(isoTime('until')),
  received_since: v.optional(isoTime('received_since')),
  received_until: v.optional(isoTime('received_until')),
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
