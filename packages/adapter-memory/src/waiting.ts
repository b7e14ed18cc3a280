import type { WaitingBounds, WaitingSave } from '@flowadmin/core'
import { deleteEnded } from './expiring.js'

/** A record waiting until `expiresAt`, counted against the address it came from. */
interface Waiting {
  address: string | null
  expiresAt: number
}

/**
 * What saving a record from `address` does under `bounds`, given the `records` that are live at
 * `now`: from that address, and in all.
 */
function waitingVerdict<T extends Waiting>(
  records: Iterable<T>,
  address: string | null,
  bounds: WaitingBounds,
  now: number,
): WaitingSave {
  let total = 0
  let mine = 0
  for (const other of records) {
    if (other.expiresAt <= now) continue
    total++
    if (other.address === address) mine++
  }
  if (mine >= bounds.perAddress) return 'address_full'
  if (total >= bounds.total) return 'full'
  return 'saved'
}

/** A deep copy of plain data (strings, numbers, null, arrays and objects of them). */
const copyPlain = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T

/** Records that wait until they expire, keyed by a hash, each counted against its address. */
export function createWaitingRecords<T extends { key: string; address: string; expiresAt: number }>() {
  const records = new Map<string, T>()
  return {
    save(record: T, bounds: WaitingBounds, now: number): WaitingSave {
      const allowed = waitingVerdict(records.values(), record.address, bounds, now)
      if (allowed === 'saved') records.set(record.key, copyPlain(record))
      return allowed
    },
    find(key: string, now: number): T | null {
      const record = records.get(key)
      return record === undefined || record.expiresAt <= now ? null : copyPlain(record)
    },
    /** Deletes the record under `key` when it is live and `accept` says so, and returns it. */
    take(key: string, now: number, accept: (record: T) => boolean = () => true): T | null {
      const record = records.get(key)
      if (record === undefined) return null
      if (record.expiresAt <= now) {
        records.delete(key)
        return null
      }
      if (!accept(record)) return null
      records.delete(key)
      return record
    },
    deleteExpired(now: number, limit: number): number {
      return deleteEnded(records, (record) => record.expiresAt, now, limit)
    },
  }
}
