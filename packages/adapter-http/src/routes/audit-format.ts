import { claimedTimeSuspect, type TrailEvent } from '@flowadmin/core'

// How trail events look over HTTP: a JSON object, an NDJSON line, a CSV row, a streamed export.

/** The name a source goes by in answers and in the `instance` filter. */
export const FLOWADMIN_SOURCE = 'flowadmin'

/** An event as the API shows it. */
export function trailEventJson(event: TrailEvent) {
  return {
    time: new Date(event.time).toISOString(),
    received: new Date(event.received).toISOString(),
    time_suspect: claimedTimeSuspect(event),
    instance: event.server === null ? FLOWADMIN_SOURCE : `${event.server}/${event.instance ?? ''}`,
    actor: event.actor,
    event: event.event,
    outcome: event.outcome,
    address: event.address,
    address_reported: event.addressReported,
    details: event.details,
  }
}

/** The header row of the CSV export. */
export const CSV_HEADER =
  'time,instance,actor,event,outcome,address,address_reported,details,received,time_suspect\r\n'

/**
 * Where a spreadsheet may begin a cell that runs as a formula (OWASP: CSV injection): at the
 * start of a cell, and, inside one, after a `;` (the list separator of German, French, … locales,
 * which splits a cell this file quotes for `,`), a tab or a line break; spaces and quotes between
 * may be trimmed away. What begins there with `=`, `+`, `-`, `@`, a tab or a carriage return
 * gets a `'` before it, which makes it text. A `,` inside a cell needs none: every cell holding
 * one is quoted, so a split on `,` never falls inside it.
 */
const FORMULA_AT_START = /^([ "]*)(?=[=+\-@\t\r])/
const FORMULA_INSIDE = /([;\t\r\n])([ "]*)(?=[=+\-@\t\r])/g

/** One CSV cell (RFC 4180): formulas defused, and quoted when it holds a quote, separator or line break. */
function csvCell(value: string | null): string {
  if (value === null) return ''
  const text = value.replace(FORMULA_AT_START, "$1'").replace(FORMULA_INSIDE, "$1$2'")
  return /[",;\t\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text
}

/** One CSV row of an event, CRLF-terminated; `details` is its JSON. */
export function trailEventCsv(event: TrailEvent): string {
  const json = trailEventJson(event)
  return `${[
    json.time,
    csvCell(json.instance),
    csvCell(json.actor),
    csvCell(json.event),
    json.outcome,
    csvCell(json.address),
    String(json.address_reported),
    csvCell(JSON.stringify(json.details)),
    json.received,
    String(json.time_suspect),
  ].join(',')}\r\n`
}

/** One NDJSON line of an event. */
export const trailEventLine = (event: TrailEvent) => `${JSON.stringify(trailEventJson(event))}\n`

export type ExportFormat = 'json' | 'csv' | 'ndjson'

const FORMATS: Record<string, ExportFormat> = {
  'application/json': 'json',
  'text/csv': 'csv',
  'application/x-ndjson': 'ndjson',
}

/**
 * The format an `Accept` header asks for: the first of its media types (highest quality first)
 * that is one of ours; JSON when none is, or when there is no header.
 */
export function exportFormatOf(accept: string | undefined): ExportFormat {
  if (accept === undefined) return 'json'
  const ranges = accept
    .split(',')
    .map((part, index) => {
      const [type = '', ...parameters] = part.split(';').map((piece) => piece.trim().toLowerCase())
      const q = parameters.find((parameter) => parameter.startsWith('q='))
      return { type, quality: q === undefined ? 1 : Number(q.slice(2)) || 0, index }
    })
    .filter((range) => range.quality > 0 && FORMATS[range.type] !== undefined)
    .sort((a, b) => b.quality - a.quality || a.index - b.index)
  return FORMATS[ranges[0]?.type ?? 'application/json'] ?? 'json'
}

/** The media type of each format of `GET /audit`. */
export const MEDIA: Record<ExportFormat, string> = {
  json: 'application/json',
  csv: 'text/csv; charset=utf-8',
  ndjson: 'application/x-ndjson',
}

/**
 * Every match as one streamed body, a page read from the store at a time as the client takes
 * them, so memory stays bounded whatever the size of the export.
 */
export function exportStream(
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
