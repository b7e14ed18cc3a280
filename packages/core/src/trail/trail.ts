// The trail: flowadmin's own events and those its instances report, kept in one store, searched
// newest first and exported page by page.
import { type DomainEvent, EVENT_OUTCOMES } from '../ports/events.js'
import type {
  TrailEntry,
  TrailEvent,
  TrailFilter,
  TrailOutcome,
  TrailPosition,
  TrailStore,
} from '../ports/trail.js'

/** How long events are kept and how many at most; null: no such bound. */
export interface TrailRetention {
  maxAgeMs: number | null
  maxEvents: number | null
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
    server: fleet ? clientId : null,
    instance: fleet && 'instance' in event ? event.instance : null,
    actor: username ?? clientId,
    event: type,
    outcome: EVENT_OUTCOMES[type],
    address,
    addressReported: false,
    details,
  }
}

/** The entry of an instance's report, delivered with the credentials of resource server `server`. */
export function trailEntryOfReport(server: string, report: TrailReport): TrailEntry {
  const details = withoutSecrets(report.details) as Record<string, unknown>
  return {
    time: report.time,
    server,
    instance: report.instance,
    actor: report.actor,
    event: report.event,
    outcome: instanceOutcome(report.event, details),
    address: report.address,
    addressReported: report.address !== null,
    details,
  }
}

/** How far ahead of flowadmin's clock a reported time may be: clocks differ a little. */
export const MAX_REPORT_AHEAD_MS = 5 * 60_000

/** Why a report is refused for a time too far ahead of `now`, or null when none is. */
export function aheadOfClock(reports: readonly TrailReport[], now: number): string | null {
  const index = reports.findIndex((report) => report.time > now + MAX_REPORT_AHEAD_MS)
  return index < 0
    ? null
    : `events[${index}].time is more than 5 minutes ahead of flowadmin's clock: is the instance's clock right?`
}

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

export function createTrail(store: TrailStore) {
  return {
    /** Appends reports of resource server `server` (authenticated by the caller); returns how many. */
    async ingest(server: string, reports: readonly TrailReport[]): Promise<number> {
      if (reports.length === 0) return 0
      await store.append(reports.map((report) => trailEntryOfReport(server, report)))
      return reports.length
    },

    /** A page of matches, newest first, and the cursor of the next page (null: none). */
    async search(
      filter: TrailFilter,
      limit: number,
      after: TrailPosition | null,
    ): Promise<{ events: TrailEvent[]; next: string | null }> {
      // One more than asked tells whether another page follows.
      const found = await store.search(filter, limit + 1, after)
      const events = found.slice(0, limit)
      const last = events.at(-1)
      return { events, next: found.length > limit && last !== undefined ? encodeTrailCursor(last) : null }
    },

    /** Every match, newest first, read a page at a time as the consumer pulls. */
    async *export(filter: TrailFilter, pageSize = EXPORT_PAGE): AsyncGenerator<TrailEvent[]> {
      let after: TrailPosition | null = null
      for (;;) {
        const page: TrailEvent[] = await store.search(filter, pageSize, after)
        if (page.length > 0) yield page
        if (page.length < pageSize) return
        after = page.at(-1) as TrailEvent
      }
    },

    /**
     * Applies the retention at `now`, in batches of `batchSize`, at most `maxBatches` of each
     * kind; returns how many events were deleted.
     */
    async sweep(retention: TrailRetention, now: number, { batchSize = 5000, maxBatches = 20 } = {}) {
      let deleted = 0
      const drain = async (step: () => Promise<number>) => {
        for (let i = 0; i < maxBatches; i++) {
          const removed = await step()
          deleted += removed
          if (removed < batchSize) break
        }
      }
      const { maxAgeMs, maxEvents } = retention
      if (maxAgeMs !== null) await drain(() => store.deleteBefore(now - maxAgeMs, batchSize))
      if (maxEvents !== null) await drain(() => store.deleteBeyond(maxEvents, batchSize))
      return deleted
    },
  }
}

export type Trail = ReturnType<typeof createTrail>
