import { codeOf, messageOf } from '@flowadmin/core'

/** Why a database could not be opened or used. */
export type SqliteStoreErrorCode =
  /** The file is not a SQLite database, or its pages fail the integrity check. */
  | 'corrupt'
  /** The file (or its folder) cannot be read, or the path is not a regular file. */
  | 'unreadable'
  /** The file or its folder cannot be written, or a read-only open would need a migration. */
  | 'read_only'
  /** The file was written by a newer schema than this version knows; it is left untouched. */
  | 'newer_schema'
  /** The folder does not exist, or a read-only open found no file. */
  | 'missing'
  /** Another connection held a lock for longer than the busy timeout. */
  | 'locked'
  /** Any other failure of SQLite or the file system; the message carries SQLite's own words. */
  | 'failed'

/**
 * An infrastructure failure of the SQLite store: the file is broken, unreachable or too new.
 * `message` names the path and says what to do, fit to print before exiting non-zero.
 */
export class SqliteStoreError extends Error {
  override readonly name = 'SqliteStoreError'
  readonly code: SqliteStoreErrorCode
  /** The database file, as an absolute path. */
  readonly path: string

  constructor(code: SqliteStoreErrorCode, path: string, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.code = code
    this.path = path
  }
}

/** Turns a driver or file-system error met while opening `path` into a SqliteStoreError. */
export function toStoreError(error: unknown, path: string): SqliteStoreError {
  if (error instanceof SqliteStoreError) return error
  const code = codeOf(error)
  const detail = messageOf(error)
  const fail = (kind: SqliteStoreErrorCode, text: string) =>
    new SqliteStoreError(kind, path, `Cannot open the database ${path}: ${text}`, { cause: error })

  if (code.startsWith('SQLITE_NOTADB') || code.startsWith('SQLITE_CORRUPT')) {
    return fail(
      'corrupt',
      `it is not a SQLite database or it is damaged (${detail}). The file was left as it is: restore it from a backup or move it aside.`,
    )
  }
  if (code.startsWith('SQLITE_READONLY')) {
    return fail('read_only', `it cannot be written (${detail}). Make the file and its folder writable.`)
  }
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return fail('locked', `another process kept it locked for too long (${detail}).`)
  }
  if (code.startsWith('SQLITE_CANTOPEN') || code === 'EACCES' || code === 'EPERM') {
    return fail('unreadable', `it cannot be opened (${detail}). Check the path and its permissions.`)
  }
  if (code === 'ENOENT') return fail('missing', `it does not exist (${detail}).`)
  return fail('failed', detail)
}

/** The error for a file whose schema version `found` is beyond the `known` one. */
export function newerSchemaError(path: string, found: number, known: number): SqliteStoreError {
  return new SqliteStoreError(
    'newer_schema',
    path,
    `Cannot open the database ${path}: it was written by a newer version (schema ${found}; this version knows up to ${known}). It was left untouched: upgrade, or restore an older copy.`,
  )
}
