import type { IssuedCode, WaitingBounds, WaitingSave } from '@flowadmin/core'
import type { Integer } from './values.js'

/** The live one-time codes waiting: from one address, and in all. */
export interface WaitingCount {
  mine: Integer
  total: Integer
}

/** What saving one more record does under `bounds`, given those already waiting. */
export function waitingVerdict(counted: WaitingCount, bounds: WaitingBounds): WaitingSave {
  if (Number(counted.mine) >= bounds.perAddress) return 'address_full'
  if (Number(counted.total) >= bounds.total) return 'full'
  return 'saved'
}

/** A code as a row: its address, the rest of it as JSON text, and its end. */
export interface WaitingRow {
  address: string
  record: string
  expires_at: Integer
}

/** What a one-time code's row keeps as JSON text, beside its key, address, client and end. */
export const codeRecord = ({ binding, owner, authorization }: IssuedCode): string =>
  JSON.stringify({ binding, owner, authorization })

/** The code under `key`, from its row. */
export const codeFromRow = (key: string, row: WaitingRow): IssuedCode =>
  ({ key, address: row.address, ...JSON.parse(row.record), expiresAt: Number(row.expires_at) }) as IssuedCode
