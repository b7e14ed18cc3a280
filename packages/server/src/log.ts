import { createRequire } from 'node:module'
import { type DestinationStream, type Logger, type LoggerOptions, pino } from 'pino'

export type { Logger } from 'pino'

/**
 * Fields that may hold a secret, at the top of a line and one or two levels down (a request's
 * headers, a body, an error's details). Lines that carry them show `[redacted]` instead.
 */
const SECRET_FIELDS = ['authorization', 'password', 'token', 'access_token', 'refresh_token', 'cookie']

const REDACTED_PATHS: readonly string[] = SECRET_FIELDS.flatMap((field) => [
  field,
  `*.${field}`,
  `*.*.${field}`,
])

/**
 * What every line of the server's log and audit stream shares: `{"level":"info","time":"<ISO
 * 8601 UTC>",...}`, no pid or hostname, secrets redacted. The audit stream sets its own time.
 */
export const LINE_OPTIONS: LoggerOptions = {
  base: null,
  timestamp: pino.stdTimeFunctions.isoTime,
  formatters: { level: (label) => ({ level: label }) },
  redact: { paths: [...REDACTED_PATHS], censor: '[redacted]' },
}

/**
 * Characters JSON leaves as they are but a terminal, a log viewer or a line-based tool may act on:
 * DEL and the C1 controls, format characters (bidirectional overrides, zero-width ones) and the
 * Unicode line and paragraph separators. JSON escapes the C0 controls itself.
 */
const UNSAFE = /[\u007f-\u009f\p{Cf}\p{Zl}\p{Zp}]/gu

/** `\uXXXX` for each UTF-16 unit, so characters beyond the BMP become their surrogate pair. */
const escapeUnsafe = (json: string): string =>
  json.replace(UNSAFE, (char) =>
    Array.from(
      { length: char.length },
      (_, i) => `\\u${char.charCodeAt(i).toString(16).padStart(4, '0')}`,
    ).join(''),
  )

/**
 * A destination that writes each JSON line with every unsafe character escaped: still the same
 * JSON, but one line of printable text whatever a request path or a username held.
 */
export function escapingDestination(write: (line: string) => void): DestinationStream {
  return { write: (line) => write(escapeUnsafe(line)) }
}

export interface LoggerSetup {
  /** Human-readable lines (pino-pretty) instead of JSON. Default: false. */
  pretty?: boolean | undefined
  /** Where lines go. Default: standard error, written synchronously. */
  write?: ((line: string) => void) | undefined
}

/**
 * The server's logger: JSON lines on standard error (or `write`), one object a line. Messages are
 * fixed texts; what a request or a user sent (paths, names) travels in fields of its own, JSON
 * escaped, so it can never start a line of its own.
 */
export function createLogger(setup: LoggerSetup = {}): Logger {
  const write = setup.write ?? ((line: string) => process.stderr.write(line))
  const options = { ...LINE_OPTIONS, level: 'info' }
  if (!setup.pretty) return pino(options, escapingDestination(write))
  // Loaded only when asked for: it costs a command that logs JSON a good part of its start.
  const { prettyFactory } = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty')
  const human = prettyFactory({
    colorize: setup.write === undefined && process.stderr.isTTY === true,
    translateTime: 'SYS:standard',
  })
  // The pretty form turns escapes back into the characters: escape its output.
  return pino(options, { write: (line: string) => write(escapeUnsafe(human(line))) })
}

/** A log call of the pieces that take one: a fixed message and, apart, the fields it is about. */
export type Log = (
  level: 'warning' | 'error' | 'info',
  message: string,
  fields?: Record<string, unknown>,
) => void

/** The Log of a pino logger. */
export function logTo(logger: Logger): Log {
  return (level, message, fields = {}) => logger[level === 'warning' ? 'warn' : level](fields, message)
}
