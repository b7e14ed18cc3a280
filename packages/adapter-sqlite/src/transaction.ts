import type { SqliteDatabase, SqliteStatement } from './database.js'

/**
 * Runs synchronous work as one change; resolves once the change is durable (see createTransaction).
 * `touches` names what the change may alter, as the keys readers ask about (see createReader);
 * left out, the change may alter anything. `durability` 'relaxed' marks a change that may be lost
 * to a power cut (never to a crash of the process): see createTransaction.
 */
export type Transaction = <T>(
  work: () => T,
  touches?: readonly string[],
  durability?: Durability,
) => Promise<T>

/** 'full': synced to disk at its commit (synchronous=FULL). 'relaxed': see Transaction. */
export type Durability = 'full' | 'relaxed'

/** `PRAGMA synchronous` values: NORMAL syncs the WAL at checkpoints, FULL at every commit. */
const SYNC_NORMAL = 1

/** Reads at once; answers once no pending change touches a key `affectedBy` accepts (see createReader). */
export type Reader = <T>(read: () => T, affectedBy?: (key: string) => boolean) => Promise<T>

interface Waiter {
  resolve(value: unknown): void
  reject(error: unknown): void
  value: unknown
}

/**
 * The group commit of one connection: the open transaction, the changes made in it so far (each
 * waiting for its commit), and the promise of that commit (for readers and close).
 */
interface Group {
  /** True while this committer's own transaction is open. */
  open: boolean
  /** True while a change's work runs (a store call made from inside it nests). */
  working: boolean
  waiters: Waiter[]
  /** The keys the open group's changes touch; `all` when one of them did not say. */
  touched: Set<string> | 'all'
  /**
   * While a relaxed group is open (see createTransaction): the connection's own
   * `PRAGMA synchronous`, set back once it is committed; null otherwise.
   */
  relaxedFrom: number | null
  /** Settles when the open transaction has been committed or rolled back. */
  settled: Promise<void> | null
  done: (() => void) | null
  statements: Record<
    'begin' | 'commit' | 'rollback' | 'savepoint' | 'release' | 'rollbackTo' | 'synchronous',
    SqliteStatement
  >
  /** `PRAGMA synchronous = N` statements, prepared when first needed. */
  syncLevels: Map<number, SqliteStatement>
}

const groups = new WeakMap<SqliteDatabase, Group>()

function groupOf(db: SqliteDatabase): Group {
  let group = groups.get(db)
  if (!group) {
    group = {
      open: false,
      working: false,
      waiters: [],
      touched: new Set(),
      relaxedFrom: null,
      settled: null,
      done: null,
      statements: {
        begin: db.prepare('BEGIN IMMEDIATE'),
        commit: db.prepare('COMMIT'),
        rollback: db.prepare('ROLLBACK'),
        savepoint: db.prepare('SAVEPOINT flowadmin_change'),
        release: db.prepare('RELEASE flowadmin_change'),
        rollbackTo: db.prepare('ROLLBACK TO flowadmin_change'),
        synchronous: db.prepare('PRAGMA synchronous'),
      },
      syncLevels: new Map(),
    }
    groups.set(db, group)
  }
  return group
}

/** Runs `work` in a savepoint: kept when it returns, undone (alone) when it throws. */
function inSavepoint<T>(group: Group, work: () => T): T {
  const { savepoint, release, rollbackTo } = group.statements
  savepoint.run()
  const outer = group.working
  group.working = true
  try {
    const result = work()
    release.run()
    return result
  } catch (error) {
    rollbackTo.run()
    release.run()
    throw error
  } finally {
    group.working = outer
  }
}

/** `value`, once the open group is committed; the commit's error if it fails. */
function untilCommitted<T>(group: Group, value: T): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    group.waiters.push({ resolve: resolve as (value: unknown) => void, reject, value })
  })
}

function syncStatement(db: SqliteDatabase, group: Group, level: number): SqliteStatement {
  let statement = group.syncLevels.get(level)
  if (statement === undefined) {
    statement = db.prepare(`PRAGMA synchronous = ${level}`)
    group.syncLevels.set(level, statement)
  }
  return statement
}

/** Commits the open group: every change in it is acknowledged, or every one fails, together. */
function commit(db: SqliteDatabase, group: Group): void {
  const waiters = group.waiters
  const done = group.done
  group.waiters = []
  group.touched = new Set()
  const relaxedFrom = group.relaxedFrom
  group.relaxedFrom = null
  group.open = false
  group.settled = null
  group.done = null
  let failure: { error: unknown } | null = null
  try {
    group.statements.commit.run()
  } catch (error) {
    failure = { error }
    try {
      if (db.inTransaction) group.statements.rollback.run()
    } catch {
      // The connection is unusable (closed, I/O error); the changes are reported failed below.
    }
  }
  if (relaxedFrom !== null) {
    group.relaxedFrom = relaxedFrom
    try {
      restore(db, group)
    } catch {
      // Closed meanwhile: nothing left to restore.
    }
  }
  for (const waiter of waiters) {
    if (failure) waiter.reject(failure.error)
    else waiter.resolve(waiter.value)
  }
  done?.()
}

/**
 * The write path of every store over `db` (group commit). `BEGIN IMMEDIATE` takes the write lock
 * first (waiting out the busy timeout), so a read-then-write never fails halfway on another
 * process's commit. Each change runs synchronously in its own savepoint, so one that throws is
 * undone alone and rejects alone. Changes made while a commit is pending (in the same turn of the
 * event loop: concurrent requests, any store) join that transaction, and it is committed once,
 * right after the current I/O callbacks (`setImmediate`): each change's promise resolves only then,
 * once its commit is durable (under `synchronous=FULL`), and rejects if the commit fails.
 *
 * Every write a store makes must go through here: a bare statement run while a group is open
 * would land in that group yet be answered before its commit. Inside a transaction the caller
 * opened itself (or inside another change's work) the change is a savepoint of it and resolves at
 * once: the caller owns that commit.
 */
export function createTransaction(db: SqliteDatabase): Transaction {
  const group = groupOf(db)
  const transaction = <T>(
    work: () => T,
    touches?: readonly string[],
    durability: Durability = 'full',
  ): Promise<T> => {
    try {
      if (group.working || (db.inTransaction && !group.open)) {
        return Promise.resolve(inSavepoint(group, work))
      }
      // A change that must be synced never joins a relaxed group: it waits for that commit.
      if (group.open && group.relaxedFrom !== null && durability === 'full') {
        const after = group.settled ?? Promise.resolve()
        return after.then(() => transaction(work, touches, durability))
      }
      if (!group.open) {
        if (durability === 'relaxed') relax(db, group)
        group.statements.begin.run()
        group.open = true
        group.settled = new Promise<void>((resolve) => {
          group.done = resolve
        })
        setImmediate(() => commit(db, group))
      }
      const value = inSavepoint(group, work)
      if (touches === undefined) group.touched = 'all'
      else if (group.touched !== 'all') for (const key of touches) group.touched.add(key)
      return untilCommitted(group, value)
    } catch (error) {
      if (group.relaxedFrom !== null && !group.open) restore(db, group)
      return Promise.reject(error)
    }
  }
  return transaction
}

/**
 * Before a relaxed group's BEGIN: `synchronous=NORMAL` (in WAL mode its commit is not synced: it
 * survives the process crashing, not the machine losing power). SQLite allows the change only
 * outside a transaction, so the level is a group's, chosen by the change that opens it.
 */
function relax(db: SqliteDatabase, group: Group): void {
  const own = Number((group.statements.synchronous.get() as { synchronous: number | bigint }).synchronous)
  if (own <= SYNC_NORMAL) return
  syncStatement(db, group, SYNC_NORMAL).run()
  group.relaxedFrom = own
}

/** The connection's own sync level back, after a relaxed group (or its failed BEGIN). */
function restore(db: SqliteDatabase, group: Group): void {
  const level = group.relaxedFrom
  group.relaxedFrom = null
  if (level !== null) syncStatement(db, group, level).run()
}

/**
 * Runs `work` in a transaction of its own, committed before it returns (for opening: migrations).
 * Inside an open transaction it is a savepoint of it.
 */
export function transactNow<T>(db: SqliteDatabase, work: () => T): T {
  const group = groupOf(db)
  if (db.inTransaction) return inSavepoint(group, work)
  const { begin, commit, rollback } = group.statements
  begin.run()
  try {
    const result = work()
    commit.run()
    return result
  } catch (error) {
    if (db.inTransaction) rollback.run()
    throw error
  }
}

/** Resolves when no change on `db` is waiting for its commit (at once when none is): for close. */
export function committed(db: SqliteDatabase): Promise<void> {
  return groups.get(db)?.settled ?? Promise.resolve()
}

/**
 * The read path of the stores over `db`. The read runs at once and sees every change made so far;
 * while a change it may see waits for its commit, its answer waits too, and fails if that commit
 * fails: no answer shows a change before it is durable. `affectedBy` says which of the keys
 * changes name (see Transaction) the read depends on; left out, every pending change counts.
 * Inside a change's work, or a transaction its caller opened, the answer comes at once (that
 * transaction's owner decides).
 */
export function createReader(db: SqliteDatabase): Reader {
  const group = groupOf(db)
  const dependsOnPending = (affectedBy?: (key: string) => boolean) => {
    if (!group.open || group.working) return false
    if (group.touched === 'all' || affectedBy === undefined) return true
    for (const key of group.touched) if (affectedBy(key)) return true
    return false
  }
  return <T>(read: () => T, affectedBy?: (key: string) => boolean): Promise<T> => {
    try {
      const value = read()
      return dependsOnPending(affectedBy) ? untilCommitted(group, value) : Promise.resolve(value)
    } catch (error) {
      return Promise.reject(error)
    }
  }
}
