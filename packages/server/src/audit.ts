import { closeSync, openSync, writeSync } from 'node:fs'
import type { DomainEvent, EventSink } from '@flowadmin/core'
import { StartupError } from './errors.js'

export type AuditTarget = 'stdout' | 'off' | { file: string }

export interface AuditLog extends EventSink {
  /** Releases the file, if any. */
  close(): void
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
 * Characters JSON leaves as they are but a terminal, a log viewer or a line-based tool may act on:
 * DEL and the C1 controls, format characters (bidirectional overrides, zero-width ones) and the
 * Unicode line and paragraph separators. JSON escapes the C0 controls itself.
 */
const UNSAFE = /[\u007f-\u009f\p{Cf}\p{Zl}\p{Zp}]/gu

/** `\uXXXX` for each UTF-16 unit, so characters beyond the BMP become their surrogate pair. */
const escapeUnsafe = (json: string) =>
  json.replace(UNSAFE, (char) =>
    Array.from(
      { length: char.length },
      (_, i) => `\\u${char.charCodeAt(i).toString(16).padStart(4, '0')}`,
    ).join(''),
  )

/**
 * One audit line: `{"time", "event", "user", "client", "address", ...details}`. The actor fields
 * are always present (null when unknown); a password or token never is. Names as sent are capped
 * at MAX_AUDIT_NAME characters, and every control or format character is written as a JSON
 * escape, so a line is one line of printable text that parses back to what was sent.
 */
export function formatAuditLine(event: DomainEvent): string {
  const { type, at, username, clientId, address, ...details } = event
  const line: Record<string, unknown> = {
    time: new Date(at).toISOString(),
    event: type,
    user: clip(username),
    client: clip(clientId),
    address,
  }
  for (const [key, value] of Object.entries(details)) if (!SECRET.test(key)) line[key] = value
  return `${escapeUnsafe(JSON.stringify(line))}\n`
}

/**
 * The event sink of the server: JSON lines to stdout, appended to a file, or nowhere. The file is
 * opened at once (a bad path fails the start) and written synchronously, so no line is lost when
 * the process ends.
 */
export function createAuditLog(target: AuditTarget, stdout: (text: string) => void = writeStdout): AuditLog {
  if (target === 'off') return { emit() {}, close() {} }
  if (target === 'stdout') {
    return {
      emit(event) {
        try {
          stdout(formatAuditLine(event))
        } catch {
          // A sink must not throw into the request that caused the event.
        }
      },
      close() {},
    }
  }
  let fd: number | null
  try {
    fd = openSync(target.file, 'a', 0o600)
  } catch (error) {
    throw new StartupError(`cannot open the audit log ${target.file}: ${(error as Error).message}`)
  }
  return {
    emit(event) {
      if (fd === null) return
      try {
        writeSync(fd, formatAuditLine(event))
      } catch {
        // As above: losing an audit line must not fail the request.
      }
    },
    close() {
      if (fd !== null) closeSync(fd)
      fd = null
    },
  }
}

function writeStdout(text: string): void {
  process.stdout.write(text)
}
