import type { SqliteDatabase } from './driver.js'
import { enqueue, groupOf } from './transaction.js'

/** Reads at once, or after the changes it depends on (see createReader). */
export type Reader = <T>(read: () => T, affectedBy?: (key: string) => boolean) => Promise<T>

/**
 * The read path of the stores over `db`. A read no waiting change could alter runs and answers at
 * once. One that could see a waiting change is queued after it, runs in that change's transaction
 * and answers once it is committed, failing if that commit fails: no answer shows a change before
 * it is durable. `affectedBy` says which of the keys changes name (see Transaction) the read
 * depends on; left out, every waiting change counts. Inside an open transaction (a change's work,
 * or a transaction its caller opened) the read runs and answers at once: that transaction's owner
 * decides.
 */
export function createReader(db: SqliteDatabase): Reader {
  const group = groupOf(db)
  const dependsOn = (
    waiting: ReadonlyArray<{ touched: Set<string> | 'all' }> | null,
    affectedBy?: (key: string) => boolean,
  ) =>
    waiting?.some(({ touched }) => {
      if (touched === 'all' || affectedBy === undefined) return true
      for (const key of touched) if (affectedBy(key)) return true
      return false
    }) ?? false
  return <T>(read: () => T, affectedBy?: (key: string) => boolean): Promise<T> => {
    const last = group.batches.at(-1)
    if (!db.inTransaction && last !== undefined && dependsOn(group.batches, affectedBy)) {
      return enqueue(group, last, read, false)
    }
    try {
      const value = read()
      if (!db.inTransaction && group.logSync !== null) {
        // It may show a change committed but not yet on disk: answered once that is, by the
        // sync running now if it covers every such change, else by the next.
        const later = dependsOn(group.unsynced, affectedBy)
          ? group.unsynced
          : dependsOn(group.inFlight, affectedBy)
            ? group.inFlight
            : null
        if (later !== null) {
          return new Promise<T>((resolve, reject) => {
            later.push({ touched: new Set(), answers: [() => resolve(value)], failures: [reject] })
          })
        }
      }
      return Promise.resolve(value)
    } catch (error) {
      return Promise.reject(error)
    }
  }
}
