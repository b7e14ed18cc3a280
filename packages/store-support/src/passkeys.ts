import type { PasskeyChallenge, PasskeyCredential, PasskeyPurpose } from '@flowadmin/core'
import { asIs, booleanOf, type Integer, integerOrNull, type List, listOf, type ReadText } from './values.js'

/** The columns of a passkey row, in the order of {@link PasskeyRow}. */
export const PASSKEY_COLUMNS =
  'id, username, name, public_key, counter, transports, backed_up, created_at, last_used_at'

/** A passkey as a row of PASSKEY_COLUMNS. */
export interface PasskeyRow {
  id: string
  username: string
  name: string
  public_key: string
  counter: Integer
  transports: List
  backed_up: boolean | Integer
  created_at: Integer
  last_used_at: Integer | null
}

/** `text` reads back the id, username, name and transports as the dialect wrote them. */
export const passkeyFromRow = (row: PasskeyRow, text: ReadText = asIs): PasskeyCredential => ({
  id: text(row.id),
  username: text(row.username),
  name: text(row.name),
  publicKey: row.public_key,
  counter: Number(row.counter),
  transports: listOf(row.transports).map(text),
  backedUp: booleanOf(row.backed_up),
  createdAt: Number(row.created_at),
  lastUsedAt: integerOrNull(row.last_used_at),
})

/** A passkey ceremony's challenge as a row. */
export interface ChallengeRow {
  purpose: PasskeyPurpose
  username: string | null
  address: string | null
  expires_at: Integer
}

/** The challenge, or null when there is none or its time ended at `now`; `text` as for passkeys. */
export function liveChallenge(
  row: ChallengeRow | undefined,
  now: number,
  text: ReadText = asIs,
): PasskeyChallenge | null {
  if (row === undefined || Number(row.expires_at) <= now) return null
  return {
    purpose: row.purpose,
    username: row.username === null ? null : text(row.username),
    address: row.address === null ? null : text(row.address),
    expiresAt: Number(row.expires_at),
  }
}
