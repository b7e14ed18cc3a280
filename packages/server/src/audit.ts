import { closeSync, openSync } from 'node:fs'
import type { DomainEvent, EventSink } from '@flowadmin/core'
import { pino } from 'pino'
import { StartupError } from './errors.js'
import { escapingDestination, LINE_OPTIONS, type Logger } from './log.js'

export type AuditTarget = 'stdout' | 'off' | { file: string }

export interface AuditLog extends EventSink {
  /** Releases the file, if any. */
  close(): void
  /**
   * Closes the file and opens it again by its name, so that a log rotated away is left to its
   * rotator and new lines go to a new file. Keeps the old file when the new one cannot be opened.
   */
  reopen(): void
}

// Keys an event must never carry into the log. Events hold none today; this keeps it so.
const SECRET = /pass|token|secret|credential/i

/** Longest user or client name written as it is: a flood of huge usernames must not flood the log. */
export const MAX_AUDIT_NAME = 256

const clip = (name: string | null) =>
  name !== null && name.length > MAX_AUDIT_NAME
    ? `${name.slice(0, MAX_AUDIT_NAME)}… (${name.length} characters)`
    : name

/**
 * The audit record of an event: `{"time", "event", "user", "client", "address", ...details}`. The
 * actor fields are always present (null when unknown); a password or token never is. Names as
 * sent are capped at MAX_AUDIT_NAME characters.
 */
function auditRecord(event: DomainEvent): Record<string, unknown> {
  const { type, at, username, clientId, address, ...details } = event
  const record: Record<string, unknown> = {
    time: new Date(at).toISOString(),
    event: type,
    user: clip(username),
    client: clip(clientId),
    address,
  }
  for (const [key, value] of Object.entries(details)) if (!SECRET.test(key)) record[key] = value
  return record
}

/**
 * The audit stream's own pino logger over `write`: the lines of the server's log, with the time
 * of the event instead of the time of writing.
 */
function auditLogger(write: (line: string) => void): Logger {
  return pino({ ...LINE_OPTIONS, timestamp: false }, escapingDestination(write))
}

let formatted = ''
/** The logger behind formatAuditLine, made at its first call: importing the module makes none. */
let formatter: Logger | null = null

/**
 * One audit line, as the audit stream writes it: `{"level":"info","time",...record}` and a
 * newline. Every control or format character is written as a JSON escape, so a line is one line
 * of printable text that parses back to what was sent.
 */
export function formatAuditLine(event: DomainEvent): string {
  formatter ??= auditLogger((line) => {
    formatted = line
  })
  formatter.info(auditRecord(event))
  const line = formatted
  formatted = ''
  return line
}

/** Opens `file` for appending as the audit log would, so a bad path is reported at once. */
function probe(file: string): void {
  try {
    closeSync(openSync(file, 'a', 0o600))
  } catch (error) {
    throw new StartupError(`cannot open the audit log ${file}: ${(error as Error).message}`)
  }
}

/**
 * The event sink of the server: JSON lines to stdout, appended to a file, or nowhere. The file is
 * opened at once (a bad path fails the start) and written synchronously, so no line is lost when
 * the process ends.
 */
export function createAuditLog(target: AuditTarget, stdout?: (text: string) => void): AuditLog {
  if (target === 'off') return { emit() {}, close() {}, reopen() {} }
  if (target === 'stdout') {
    const write =
      stdout ??
      ((text: string) => {
        process.stdout.write(text)
      })
    const logger = auditLogger(write)
    return {
      emit(event) {
        try {
          logger.info(auditRecord(event))
        } catch {
          // A sink must not throw into the request that caused the event.
        }
      },
      close() {},
      reopen() {},
    }
  }
  probe(target.file)
  const file = pino.destination({ dest: target.file, append: true, sync: true, mode: 0o600 })
  // Failures to write or reopen are reported by emit and reopen; the stream must not crash.
  file.on('error', () => {})
  const logger = auditLogger((line) => file.write(line))
  let open = true
  return {
    emit(event) {
      if (!open) return
      try {
        logger.info(auditRecord(event))
      } catch {
        // As above: losing an audit line must not fail the request.
      }
    },
    close() {
      if (!open) return
      open = false
      file.flushSync()
      file.destroy()
    },
    reopen() {
      if (!open) return
      // A name that cannot be opened keeps the file open now, and says so.
      probe(target.file)
      file.reopen()
    },
  }
}
