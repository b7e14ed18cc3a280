import type { SqliteDatabase } from './database.js'

/**
 * A runner of synchronous work in one write transaction. `BEGIN IMMEDIATE` takes the write lock
 * first (waiting out the busy timeout), so a read-then-write never fails halfway on another
 * process's commit. Inside a caller's open transaction it uses a savepoint instead.
 */
export function createTransaction(db: SqliteDatabase): <T>(work: () => T) => T {
  const begin = db.prepare('BEGIN IMMEDIATE')
  const commit = db.prepare('COMMIT')
  const rollback = db.prepare('ROLLBACK')
  const savepoint = db.prepare('SAVEPOINT flowadmin_store')
  const release = db.prepare('RELEASE flowadmin_store')
  const rollbackTo = db.prepare('ROLLBACK TO flowadmin_store')

  return <T>(work: () => T): T => {
    const nested = db.inTransaction
    ;(nested ? savepoint : begin).run()
    try {
      const result = work()
      ;(nested ? release : commit).run()
      return result
    } catch (error) {
      if (nested) {
        rollbackTo.run()
        release.run()
      } else if (db.inTransaction) {
        rollback.run()
      }
      throw error
    }
  }
}
