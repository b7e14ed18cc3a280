import { closeSync, fstatSync, openSync, writeSync } from 'node:fs'
import type { DomainEvent, EventSink } from '@flowadmin/core'
import { pino } from 'pino'
import { StartupError } from '../errors.js'
import { escapingDestination, LINE_OPTIONS, type Logger } from '../log.js'

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

/** Opens `file` for appending (created 0600), naming the file in what it throws. */
function openAppending(file: string): number {
  try {
    return openSync(file, 'a', 0o600)
  } catch (error) {
    throw new StartupError(`cannot open the audit log ${file}: ${(error as Error).message}`)
  }
}

/** What the audit file says of itself when writing fails, and when it works again. */
export type AuditFileReport = (message: string, fields: Record<string, unknown>) => void

/**
 * The audit file: each line written synchronously, whole, before the event's request goes on. A
 * line that cannot be written (a full disk, an I/O error) is dropped, never kept to try again, so
 * memory stays bounded and closing never waits on the disk. A line cut short by such an error is
 * ended before the next one, so every later line still parses. The first drop of a run of them
 * is reported, and so is the first line written after it, with how many were dropped.
 */
function openAuditFile(file: string, report: AuditFileReport) {
  let fd = openAppending(file)
  let torn = false
  let dropped = 0
  return {
    write(line: string) {
      const bytes = Buffer.from(torn ? `\n${line}` : line)
      let written = 0
      try {
        while (written < bytes.length) {
          const count = writeSync(fd, bytes, written)
          if (count === 0) throw new Error('the file took no bytes')
          written += count
        }
      } catch (error) {
        torn ||= written > 0
        if (dropped++ === 0) {
          report('audit log lines are being dropped: a line could not be written', {
            file,
            reason: (error as Error).message,
          })
        }
        return
      }
      torn = false
      if (dropped > 0) {
        report('audit log written again', { file, dropped })
        dropped = 0
      }
    },
    /** Opens the file again by its name; the old one stays when that fails (and this throws). */
    reopen() {
      const next = openAppending(file)
      const [before, after] = [fstatSync(fd), fstatSync(next)]
      // A line cut short stays to be ended only if the name still leads to its file.
      torn &&= before.ino === after.ino && before.dev === after.dev
      closeSync(fd)
      fd = next
    },
    close() {
      closeSync(fd)
    },
  }
}

/**
 * The event sink of the server: JSON lines to stdout, appended to a file, or nowhere. The file is
 * opened at once (a bad path fails the start) and written synchronously, so no line is lost when
 * the process ends; `report` hears when its lines are being dropped and when they are written
 * again.
 */
export function createAuditLog(
  target: AuditTarget,
  stdout?: (text: string) => void,
  report: AuditFileReport = () => {},
): AuditLog {
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
  const file = openAuditFile(target.file, report)
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
      file.close()
    },
    reopen() {
      if (open) file.reopen()
    },
  }
}
