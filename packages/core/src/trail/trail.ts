// The trail: flowadmin's own events and those its instances report, kept in one store, searched
// newest first and exported page by page; each reporter at its pace, each source kept apart.
import { type ErrorOf, err, ok, type Result } from '../errors.js'
import { type DomainEvent, EVENT_OUTCOMES } from '../ports/events.js'
import type { Clock } from '../ports/system.js'
import type {
  TrailEntry,
  TrailEvent,
  TrailFilter,
  TrailOutcome,
  TrailPosition,
  TrailStore,
} from '../ports/trail.js'
import { createReporterPace, DEFAULT_REPORTED_PER_MINUTE } from './pace.js'
import { DEFAULT_TRAIL_RETENTION, type SweepLimits, sweepTrail, type TrailRetention } from './retention.js'

/** How the trail keeps events, and how fast reporters may add them. */
export interface TrailOptions {
  retention: TrailRetention
  /** Events one reporter may add per minute; up to a minute's worth at once. */
  reportedPerMinute: number
}

/** The retention of DEFAULT_TRAIL_RETENTION, and 6000 events a minute for each reporter. */
export const DEFAULT_TRAIL_OPTIONS: TrailOptions = {
  retention: DEFAULT_TRAIL_RETENTION,
  reportedPerMinute: DEFAULT_REPORTED_PER_MINUTE,
}

/** One event as an instance reports it (the HTTP adapter has checked its shape and size). */
export interface TrailReport {
  time: number
  /** The instance's own name for itself, within its resource server. */
  instance: string
  actor: string | null
  event: string
  address: string | null
  details: Record<string, unknown>
}

/**
 * Who reports: `reporter`, whose allowance and budget the events count in, and `server`, the
 * resource server whose credentials proved it. The same id until instances have identities of
 * their own; then `reporter` is the instance's.
 */
export interface TrailSource {
  reporter: string
  server: string
  /**
   * The enrolled instance whose own credential proved it: its events are filed under it, whatever
   * they say. Absent or null for a resource server's shared secret.
   */
  instance?: string | null | undefined
}

/** A reporter past its allowance: nothing of its report was kept. */
export type TooManyEvents = ErrorOf<'too_many_events'>

/**
 * Keys whose values never enter the trail, at any depth: passwords, tokens, secrets, cookies.
 * Only text and objects under such keys are dropped: a number or a boolean (`sessionsEnded`,
 * `tokenCount`) cannot hold a secret and stays. The helper (`@flowadmin/node-red`, plain JS) has
 * its own copy; a test holds them the same.
 */
export const SECRET_KEY = /pass|token|secret|credential|authori[sz]ation|cookie|session|api.?key/i

/** True when `value` under `key` may hold a secret: text or an object under a secret-looking key. */
function isSecret(key: string, value: unknown): boolean {
  return (typeof value === 'string' || (typeof value === 'object' && value !== null)) && SECRET_KEY.test(key)
}

/** Deepest nesting of details kept; deeper values are replaced by a note. */
const MAX_DEPTH = 6

/** `value` without any key that looks secret, at any depth. */
function withoutSecrets(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return value
  if (depth >= MAX_DEPTH) return '(nested too deep)'
  if (Array.isArray(value)) return value.map((item) => withoutSecrets(item, depth + 1))
  const kept: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) {
    if (!isSecret(key, item)) kept[key] = withoutSecrets(item, depth + 1)
  }
  return kept
}

/** A Node-RED audit event that records a refusal or failure: `*.fail*`, or one carrying an error. */
export function instanceOutcome(event: string, details: Record<string, unknown>): TrailOutcome {
  return /(^|\.)fail(\.|$)/.test(event) || details.error !== undefined ? 'failure' : 'success'
}

/** flowadmin's events about what a fleet instance did or is: filed under that instance. */
const INSTANCE_EVENTS: ReadonlySet<DomainEvent['type']> = new Set([
  'fleet.applied',
  'fleet.refused',
  'fleet.restart_needed',
  'fleet.version_mismatch',
  'fleet.changed_by_hand',
  'fleet.reverted',
  'fleet.module_reported',
  'fleet.connected',
  'fleet.disconnected',
] as const)

/** The trail entry of one of flowadmin's own events: actor the user, else the client. */
export function trailEntryOf(event: DomainEvent): TrailEntry {
  // A fleet instance's event is its own: its resource server and instance, as its reports are.
  const fleet = INSTANCE_EVENTS.has(event.type) && 'instance' in event
  const { type, at, username, clientId, address, ...rest } = event
  const details = withoutSecrets(rest) as Record<string, unknown>
  if (fleet) {
    delete details.instance
    delete details.resourceServer
  }
  if (username !== null && clientId !== null) details.client = clientId
  return {
    time: at,
    received: at,
    // What an instance told the fleet counts in its resource server's budget, as its reports do.
    reporter: fleet ? clientId : null,
    server: fleet ? clientId : null,
    instance: fleet && 'instance' in event ? event.instance : null,
    actor: username ?? clientId,
    event: type,
    outcome: outcomeOf(event),
    address,
    addressReported: false,
    details,
  }
}

/**
 * How the event ends: its type's, but for what an instance said of a rollout, which failed or not
 * (see EVENT_OUTCOMES), and a rollout's end.
 */
function outcomeOf(event: DomainEvent): 'success' | 'failure' {
  if (event.type === 'fleet.rollout_outcome' || event.type === 'fleet.flows_restored')
    return event.outcome === 'failed' ? 'failure' : 'success'
  if (event.type === 'fleet.rollout_finished') return event.state === 'succeeded' ? 'success' : 'failure'
  return EVENT_OUTCOMES[event.type]
}

/** The entry of an instance's report from `source`, received at `received`. */
export function trailEntryOfReport(source: TrailSource, report: TrailReport, received: number): TrailEntry {
  const details = withoutSecrets(report.details) as Record<string, unknown>
  return {
    time: report.time,
    received,
    reporter: source.reporter,
    server: source.server,
    instance: source.instance ?? report.instance,
    actor: report.actor,
    event: report.event,
    outcome: instanceOutcome(report.event, details),
    address: report.address,
    addressReported: report.address !== null,
    details,
  }
}

/**
 * How far before, and after, the moment flowadmin received an event the time it claims may lie
 * and still be taken as likely: an instance may send what it kept while flowadmin was away, and
 * clocks differ a little.
 */
export const CLAIMED_TIME_WINDOW = { beforeMs: 24 * 3_600_000, afterMs: 5 * 60_000 }

/**
 * True when the time an event claims lies outside CLAIMED_TIME_WINDOW around its receipt (a
 * wrong clock, an instance back after more than a day away, or a lie). Such an event is kept all
 * the same, and shown as suspect: its receipt is what retention and the trail's order go by.
 */
export const claimedTimeSuspect = (entry: Pick<TrailEntry, 'time' | 'received'>): boolean =>
  entry.time < entry.received - CLAIMED_TIME_WINDOW.beforeMs ||
  entry.time > entry.received + CLAIMED_TIME_WINDOW.afterMs

/** A page's end as text for a client to hand back: the seq of its last event. */
function encodeTrailCursor(position: TrailPosition): string {
  return String(position.seq)
}

/** The position a cursor names, or null when it is not one. */
export function decodeTrailCursor(cursor: string): TrailPosition | null {
  if (!/^\d{1,16}$/.test(cursor)) return null
  const seq = Number(cursor)
  return Number.isSafeInteger(seq) ? { seq } : null
}

/** Events read per store call while exporting: memory stays bounded by one page. */
const EXPORT_PAGE = 1000

/** Most events one page of a search looks at past those the caller may not read, and per read. */
const MAX_SCANNED = 10_000
const SCAN_BATCH = 200

export function createTrail(store: TrailStore, clock: Clock, options: TrailOptions = DEFAULT_TRAIL_OPTIONS) {
  const pace = createReporterPace(options.reportedPerMinute)
  return {
    /**
     * Whole seconds `reporter` must wait before its next report, when a refusal seen by this
     * process says so; null when none does (the store decides). Lets a caller refuse a report
     * before reading it.
     */
    waitOf: (reporter: string): number | null => pace.waitOf(reporter, clock.now()),

    /**
     * Appends reports from `source` (authenticated by the caller) when its reporter's allowance
     * takes them, all or none; returns how many were kept, or how long to wait.
     */
    async ingest(
      source: TrailSource,
      reports: readonly TrailReport[],
    ): Promise<Result<number, TooManyEvents>> {
      if (reports.length === 0) return ok(0)
      const now = clock.now()
      const entries = reports.map((report) => trailEntryOfReport(source, report, now))
      const admission = await store.appendReport(source.reporter, entries, pace.of(entries.length), now)
      if (admission.appended) return ok(entries.length)
      return err({
        code: 'too_many_events',
        retryAfter: pace.refused(source.reporter, admission.retryAt, now),
      })
    },

    /**
     * A page of matches, newest first, and the cursor of the next page (null: none). With
     * `visible`, only the events it accepts (what the caller may read): the store is read on past
     * the others, at most MAX_SCANNED events a page, so such a page may hold fewer than `limit`
     * events while `next` says there are more to look at.
     */
    async search(
      filter: TrailFilter,
      limit: number,
      after: TrailPosition | null,
      visible?: (event: TrailEvent) => boolean,
    ): Promise<{ events: TrailEvent[]; next: string | null }> {
      if (visible === undefined) {
        // One more than asked tells whether another page follows.
        const found = await store.search(filter, limit + 1, after)
        const events = found.slice(0, limit)
        const last = events.at(-1)
        return { events, next: found.length > limit && last !== undefined ? encodeTrailCursor(last) : null }
      }
      const events: TrailEvent[] = []
      let position = after
      for (let scanned = 0; scanned < MAX_SCANNED; ) {
        const batch = Math.max(limit + 1, SCAN_BATCH)
        const found = await store.search(filter, batch, position)
        for (const event of found) {
          scanned++
          if (!visible(event)) {
            position = event
            continue
          }
          // One more than asked: another page follows, from the last one shown.
          if (events.length === limit) return { events, next: encodeTrailCursor(position ?? event) }
          events.push(event)
          position = event
        }
        if (found.length < batch) return { events, next: null }
      }
      return { events, next: position === null ? null : encodeTrailCursor(position) }
    },

    /** Every match (that `visible` accepts, when given), newest first, read a page at a time as the consumer pulls. */
    async *export(
      filter: TrailFilter,
      pageSize = EXPORT_PAGE,
      visible?: (event: TrailEvent) => boolean,
    ): AsyncGenerator<TrailEvent[]> {
      let after: TrailPosition | null = null
      for (;;) {
        const page: TrailEvent[] = await store.search(filter, pageSize, after)
        const shown = visible === undefined ? page : page.filter(visible)
        if (shown.length > 0) yield shown
        if (page.length < pageSize) return
        after = page.at(-1) as TrailEvent
      }
    },

    /**
     * Applies the retention at `now`: flowadmin's own events and each reporter's apart, in
     * batches (see sweepTrail); returns how many events were deleted.
     */
    sweep: (now: number, limits?: SweepLimits): Promise<number> =>
      sweepTrail(store, options.retention, now, limits),
  }
}

export type Trail = ReturnType<typeof createTrail>
