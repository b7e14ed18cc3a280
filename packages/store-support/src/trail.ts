import type { TrailEntry, TrailEvent, TrailFilter, TrailPosition } from '@flowadmin/core'
import { asIs, type ReadText } from './values.js'

// The trail's rows and search conditions, the same in every SQL dialect but for placeholders.

/** The columns an entry is written to, in the order of trailValues. */
export const TRAIL_ENTRY_COLUMNS =
  'time, received, reporter, server, instance, actor, event, outcome, address, address_reported, details'

/** The columns of a trail row, in the order of {@link TrailRow}. */
export const TRAIL_COLUMNS = `seq, ${TRAIL_ENTRY_COLUMNS}`

/** An event as a row of TRAIL_COLUMNS. */
export interface TrailRow {
  seq: number | bigint | string
  time: number | bigint | string
  received: number | bigint | string
  reporter: string | null
  server: string | null
  instance: string | null
  actor: string | null
  event: string
  outcome: TrailEvent['outcome']
  address: string | null
  /** 0/1 (SQLite) or a boolean (PostgreSQL). */
  address_reported: number | boolean
  /** JSON text (SQLite) or an object (PostgreSQL's jsonb). */
  details: string | Record<string, unknown>
}

/** `text` reads back the reporter as the dialect wrote it. */
export function trailFromRow(row: TrailRow, text: ReadText = asIs): TrailEvent {
  return {
    seq: Number(row.seq),
    time: Number(row.time),
    received: Number(row.received),
    reporter: row.reporter === null ? null : text(row.reporter),
    server: row.server,
    instance: row.instance,
    actor: row.actor,
    event: row.event,
    outcome: row.outcome,
    address: row.address,
    addressReported: row.address_reported === true || row.address_reported === 1,
    details:
      typeof row.details === 'string' ? (JSON.parse(row.details) as Record<string, unknown>) : row.details,
  }
}

/** The values of an entry, in the order of TRAIL_ENTRY_COLUMNS; `details` as JSON text. */
export function trailValues(entry: TrailEntry): unknown[] {
  return [
    entry.time,
    entry.received,
    entry.reporter,
    entry.server,
    entry.instance,
    entry.actor,
    entry.event,
    entry.outcome,
    entry.address,
    entry.addressReported,
    JSON.stringify(entry.details),
  ]
}

/**
 * The WHERE clause (with `WHERE`, or '') of a search for `filter` after `after`, and its
 * parameters; `placeholder(n)` writes the n-th parameter (1-based) as the dialect does.
 */
export function trailConditions(
  filter: TrailFilter,
  after: TrailPosition | null,
  placeholder: (index: number) => string,
): { where: string; params: unknown[] } {
  const params: unknown[] = []
  const conditions: string[] = []
  const param = (value: unknown) => {
    params.push(value)
    return placeholder(params.length)
  }
  const { source } = filter
  if (source !== undefined) {
    conditions.push(source.server === null ? 'server IS NULL' : `server = ${param(source.server)}`)
    if (source.instance !== undefined) conditions.push(`instance = ${param(source.instance)}`)
  }
  if (filter.actor !== undefined) conditions.push(`actor = ${param(filter.actor)}`)
  if (filter.eventPrefix !== undefined && filter.eventPrefix !== '') {
    // Case-sensitive in both dialects (SQLite's LIKE is not); lengths in characters, as SQL counts.
    const length = [...filter.eventPrefix].length
    conditions.push(`substr(event, 1, ${param(length)}) = ${param(filter.eventPrefix)}`)
  }
  if (filter.outcome !== undefined) conditions.push(`outcome = ${param(filter.outcome)}`)
  if (filter.since !== undefined) conditions.push(`time >= ${param(filter.since)}`)
  if (filter.until !== undefined) conditions.push(`time < ${param(filter.until)}`)
  if (filter.receivedSince !== undefined) conditions.push(`received >= ${param(filter.receivedSince)}`)
  if (filter.receivedUntil !== undefined) conditions.push(`received < ${param(filter.receivedUntil)}`)
  if (after !== null) conditions.push(`seq < ${param(after.seq)}`)
  return { where: conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`, params }
}
