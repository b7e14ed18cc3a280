import { codeOf, messageOf, storeUnavailable } from '@flowadmin/core'

/** Why the PostgreSQL store could not be opened. */
export type PostgresStoreErrorCode =
  /** No server answered at the address, or it refused the connection, or it timed out. */
  | 'unreachable'
  /** The server answered but refused these credentials or this database. */
  | 'refused'
  /** The database holds a newer schema than this version knows; it is left untouched. */
  | 'newer_schema'
  /** Anything else; the message carries the server's own words. */
  | 'failed'

/**
 * A failure to open the PostgreSQL store. `message` is one line naming host, port and database
 * (never a password), fit to print before exiting non-zero.
 */
export class PostgresStoreError extends Error {
  override readonly name = 'PostgresStoreError'
  readonly code: PostgresStoreErrorCode
  /** `host:port/database`. */
  readonly target: string

  constructor(code: PostgresStoreErrorCode, target: string, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.code = code
    this.target = target
  }
}

const SQLSTATE = /^[0-9A-Z]{5}$/

/**
 * True when the error says the server cannot answer now, rather than that a statement is wrong:
 * a socket error, a timeout, a terminated connection (SQLSTATE class 08, 57P01-57P03), too many
 * connections (class 53), a cancelled statement (57014) or a lock wait that ran out (55P03).
 */
export function isOutage(error: unknown): boolean {
  const code = codeOf(error)
  if (SQLSTATE.test(code)) {
    return (
      code.startsWith('08') ||
      code.startsWith('53') ||
      code.startsWith('57P0') ||
      code === '57014' ||
      code === '55P03'
    )
  }
  // Errors without a SQLSTATE come from the socket or the driver: the connection failed.
  return true
}

/** Seconds a client is told to wait after an outage answer. */
export const RETRY_AFTER_SECONDS = 2

/**
 * What a store operation throws: an outage becomes the core's StoreUnavailable (503 at the HTTP
 * edge); anything else is a bug and goes on as it is.
 */
export function toOperationError(error: unknown): unknown {
  if (!isOutage(error)) return error
  return storeUnavailable(`PostgreSQL cannot be reached: ${messageOf(error)}`, RETRY_AFTER_SECONDS, error)
}

/** The error for a store that could not be opened at `target`. */
export function toOpenError(error: unknown, target: string): PostgresStoreError {
  if (error instanceof PostgresStoreError) return error
  const code = codeOf(error)
  const detail = messageOf(error)
  if (code === '28P01' || code === '28000' || code === '3D000' || code === '42501') {
    return new PostgresStoreError(
      'refused',
      target,
      `PostgreSQL at ${target} refused the connection: ${detail}`,
      {
        cause: error,
      },
    )
  }
  if (isOutage(error)) {
    return new PostgresStoreError('unreachable', target, `cannot reach PostgreSQL at ${target}: ${detail}`, {
      cause: error,
    })
  }
  return new PostgresStoreError('failed', target, `PostgreSQL at ${target} failed: ${detail}`, {
    cause: error,
  })
}
