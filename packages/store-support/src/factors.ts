import type { PasswordPassed, TotpFactor } from '@flowadmin/core'
import { booleanOf, type Integer, integerOrNull, type List, listOf } from './values.js'

/** A TOTP factor as a row, without its username (the one asked for is the one answered). */
export interface TotpRow {
  secret: string
  created_at: Integer
  confirmed_at: Integer | null
  confirmed_at_sign_in: boolean | Integer
  last_step: Integer | null
}

/**
 * The factor of `username`. The name asked for, not a column read back: some drivers
 * (node:sqlite) cut a text value at a NUL when they read it.
 */
export const totpFromRow = (username: string, row: TotpRow): TotpFactor => ({
  username,
  secret: row.secret,
  createdAt: Number(row.created_at),
  confirmedAt: integerOrNull(row.confirmed_at),
  confirmedAtSignIn: booleanOf(row.confirmed_at_sign_in),
  lastStep: integerOrNull(row.last_step),
})

/** A sign-in awaiting its second factor, as a row. */
export interface PendingRow {
  username: string
  client_id: string
  scope: List
  address: string
  agent: string | null
  created_at: Integer
  expires_at: Integer
}

export const pendingFromRow = (row: PendingRow): PasswordPassed => ({
  username: row.username,
  clientId: row.client_id,
  scope: listOf(row.scope),
  address: row.address,
  agent: row.agent,
  createdAt: Number(row.created_at),
  expiresAt: Number(row.expires_at),
})
