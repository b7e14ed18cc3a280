// How the command tells a failure: its message, what to do about it, and the exit code.
import { messageOf } from '@flowadmin/core'
import { EXIT_RUNTIME, StartupError } from '../errors.js'
import type { PortInUseError } from '../http/listen.js'

/** Where PostgreSQL's address comes from, in the order the server looks. */
const POSTGRES_ADDRESS_SOURCES =
  'its address comes from "postgres.url" in the settings, else the DATABASE_URL variable, ' +
  'else the PG* variables (PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD)'

/**
 * What to do about a failure, when the command knows better than the message: another port for
 * one in use, where PostgreSQL's address comes from when it cannot be used. Never the address
 * itself, which may hold a password.
 */
function hintOf(error: unknown): string | null {
  // Told by its name, as the PostgreSQL store's below: the listener is loaded by `start` only.
  if (error instanceof Error && error.name === 'PortInUseError') {
    return `port ${(error as PortInUseError).port} is taken: pick another with --port N, or "uiPort" in the settings`
  }
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    // The PostgreSQL store's error, told by its name: its package is loaded only when used.
    if (cause.name !== 'PostgresStoreError') continue
    const { code, target } = cause as Error & { code?: string; target?: string }
    if (code === 'unreachable')
      return `is PostgreSQL running at ${target?.replace(/\/.*$/, '')}? ${POSTGRES_ADDRESS_SOURCES}`
    if (code === 'refused')
      return `check the user, password and database name of the address: ${POSTGRES_ADDRESS_SOURCES}`
  }
  return null
}

/**
 * Tells a failure on standard error, a `flowadmin: ` line each (with what to do about it, when
 * known), and sets the exit code: the StartupError's own, else 1.
 */
export function fail(error: unknown): void {
  const hint = hintOf(error)
  const lines = [...messageOf(error).split('\n'), ...(hint === null ? [] : [hint])]
  for (const line of lines) process.stderr.write(`flowadmin: ${line}\n`)
  process.exitCode = error instanceof StartupError ? error.exitCode : EXIT_RUNTIME
}
