import type { CounterState, ModuleRecord, SignInMethod, TokenRecord } from '@flowadmin/core'
import { asIs, type Integer, integerOrNull, type List, listOf, type ReadText } from './values.js'

/** The columns of a token row, in the order of {@link TokenRow}. */
export const TOKEN_COLUMNS = `hash, id, kind, name, username, client_id, scope, fingerprint, created_at, expires_at,
  last_used_at, last_address, agent, audience, sign_in`

/** A token as a row of TOKEN_COLUMNS. */
export interface TokenRow {
  hash: string
  id: string
  kind: TokenRecord['kind']
  name: string | null
  username: string
  client_id: string
  scope: List
  fingerprint: string
  created_at: Integer
  expires_at: Integer | null
  last_used_at: Integer | null
  last_address: string | null
  agent: string | null
  /** null: saved before tokens had an audience (see TokenRecord.audience). */
  audience: string | null
  /** null: an API token, or a session saved before sessions recorded it (see TokenRecord.signIn). */
  sign_in: SignInMethod | null
}

/** `text` reads back the username as the dialect wrote it. */
export const tokenFromRow = (row: TokenRow, text: ReadText = asIs): TokenRecord => ({
  hash: row.hash,
  id: row.id,
  kind: row.kind,
  name: row.name,
  username: text(row.username),
  clientId: row.client_id,
  scope: listOf(row.scope),
  fingerprint: row.fingerprint,
  createdAt: Number(row.created_at),
  expiresAt: integerOrNull(row.expires_at),
  lastUsedAt: integerOrNull(row.last_used_at),
  lastAddress: row.last_address,
  agent: row.agent,
  audience: row.audience,
  signIn: row.sign_in,
})

/** A module joined with one of its node sets, in the sets' order. */
export interface ModuleRow {
  module: string
  version: string
  /** Null for a module without sets (the LEFT JOIN found none). */
  name: string | null
  types: List | null
  enabled: boolean | Integer | null
}

/** Groups joined rows into modules, keeping the rows' order. */
export function modulesFromRows(rows: ModuleRow[]): ModuleRecord[] {
  const modules = new Map<string, ModuleRecord>()
  for (const row of rows) {
    let module = modules.get(row.module)
    if (!module) {
      module = { name: row.module, version: row.version, sets: [] }
      modules.set(row.module, module)
    }
    if (row.name === null) continue
    module.sets.push({
      id: `${row.module}/${row.name}`,
      name: row.name,
      module: row.module,
      types: listOf(row.types),
      enabled: Number(row.enabled) === 1,
    })
  }
  return [...modules.values()]
}

/**
 * Modules by name in JavaScript's order (UTF-16 units), as every store lists them: the
 * databases order text by their own rules (bytes, a collation), which differ past U+FFFF.
 */
export const byModuleName = (a: ModuleRecord, b: ModuleRecord) =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : 0

/** A throttle counter as read at `now`: the failures and attempts in flight that still count. */
export interface CounterRow {
  failures: Integer
  in_flight: Integer
  reset_at: Integer
}

export const counterFromRow = (row: CounterRow | undefined): CounterState | undefined =>
  row && { failures: Number(row.failures), inFlight: Number(row.in_flight), resetAt: Number(row.reset_at) }
