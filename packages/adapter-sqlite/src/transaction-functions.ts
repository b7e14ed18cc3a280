import type { SqliteDatabase, SqliteStatement, TransactionFunction } from './driver.js'

/**
 * better-sqlite3's transaction functions, for a driver without them (`node:sqlite`, a wrapper):
 * `BEGIN` (or `BEGIN IMMEDIATE`), the work, `COMMIT`; inside an open transaction a savepoint
 * instead; undone when the work (or the commit) throws.
 */
function statementTransactions(db: SqliteDatabase): <T>(work: () => T) => TransactionFunction<T> {
  let statements: Record<
    'begin' | 'immediate' | 'commit' | 'rollback' | 'savepoint' | 'release' | 'rollbackTo',
    SqliteStatement
  > | null = null
  const prepared = () => {
    statements ??= {
      begin: db.prepare('BEGIN'),
      immediate: db.prepare('BEGIN IMMEDIATE'),
      commit: db.prepare('COMMIT'),
      rollback: db.prepare('ROLLBACK'),
      savepoint: db.prepare('SAVEPOINT flowadmin_change'),
      release: db.prepare('RELEASE flowadmin_change'),
      rollbackTo: db.prepare('ROLLBACK TO flowadmin_change'),
    }
    return statements
  }
  const run = <T>(work: () => T, immediate: boolean): T => {
    const s = prepared()
    const nested = db.inTransaction
    if (nested) s.savepoint.run()
    else (immediate ? s.immediate : s.begin).run()
    try {
      const result = work()
      ;(nested ? s.release : s.commit).run()
      return result
    } catch (error) {
      if (db.inTransaction) {
        if (nested) {
          s.rollbackTo.run()
          s.release.run()
        } else s.rollback.run()
      }
      throw error
    }
  }
  return <T>(work: () => T) => Object.assign(() => run(work, false), { immediate: () => run(work, true) })
}

/** The driver's own transaction functions (better-sqlite3's), when it has them. */
function driverTransactions(db: SqliteDatabase): (<T>(work: () => T) => TransactionFunction<T>) | null {
  if (typeof db.transaction !== 'function') return null
  return (work) => db.transaction?.(work) as TransactionFunction<ReturnType<typeof work>>
}

/** Wraps work as a transaction function: the driver's own, or one over plain statements. */
export const transactionFunctions = (db: SqliteDatabase): (<T>(work: () => T) => TransactionFunction<T>) =>
  driverTransactions(db) ?? statementTransactions(db)
