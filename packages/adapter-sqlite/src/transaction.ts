import type { SqliteDatabase, SqliteStatement, TransactionFunction } from './driver.js'
import { transactionFunctions } from './transaction-functions.js'

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

/** One change (or one read that depends on changes) waiting in a batch. */
interface Item {
  work: () => unknown
  /** A change runs in a savepoint of its own; a read needs none. */
  savepoint: boolean
  resolve(value: unknown): void
  reject(error: unknown): void
}

/** Changes that share one transaction and its commit. */
interface Batch {
  /** Committed without a sync (synchronous=NORMAL): every change in it is relaxed. */
  relaxed: boolean
  items: Item[]
  /** The keys its changes touch; `all` when one of them did not say. */
  touched: Set<string> | 'all'
}

/**
 * Syncs the connection's write-ahead log to disk off the event loop, calling back when done
 * (see syncLogAsync).
 */
export type LogSync = (done: (error?: unknown) => void) => void

/** Committed changes waiting for the log sync that makes them durable. */
interface Unsynced {
  touched: Set<string> | 'all'
  answers: Array<() => void>
  failures: Array<(error: unknown) => void>
}

/** The group commit of one connection: the batches waiting for the next flush. */
export interface Group {
  db: SqliteDatabase
  /** Wraps work as a transaction function: the driver's own, or one over plain statements. */
  transaction: <T>(work: () => T) => TransactionFunction<T>
  batches: Batch[]
  /** Settles when the batches waiting now have been committed or rolled back. */
  settled: Promise<void> | null
  done: (() => void) | null
  synchronous: SqliteStatement
  /** `PRAGMA synchronous = N` statements, prepared when first needed. */
  syncLevels: Map<number, SqliteStatement>
  /** Set by syncLogAsync: commits are not synced in place, this syncs the log afterwards. */
  logSync: LogSync | null
  /** Committed, not yet synced: answered after the next sync (the one in flight covers less). */
  unsynced: Unsynced[]
  /** What the log sync running now covers (null when none runs); answered when it is done. */
  inFlight: Unsynced[] | null
  /** The waiting batches are to be committed once the log sync running now is done. */
  flushAfterSync: boolean
  /** Settles when no committed change waits for a sync. */
  synced: Promise<void> | null
  syncedDone: (() => void) | null
}

const groups = new WeakMap<SqliteDatabase, Group>()

/** The group commit of `db`, made at its first use. */
export function groupOf(db: SqliteDatabase): Group {
  let group = groups.get(db)
  if (!group) {
    group = {
      db,
      transaction: transactionFunctions(db),
      batches: [],
      settled: null,
      done: null,
      synchronous: db.prepare('PRAGMA synchronous'),
      syncLevels: new Map(),
      logSync: null,
      unsynced: [],
      inFlight: null,
      flushAfterSync: false,
      synced: null,
      syncedDone: null,
    }
    groups.set(db, group)
  }
  return group
}

function syncStatement(db: SqliteDatabase, group: Group, level: number): SqliteStatement {
  let statement = group.syncLevels.get(level)
  if (statement === undefined) {
    statement = db.prepare(`PRAGMA synchronous = ${level}`)
    group.syncLevels.set(level, statement)
  }
  return statement
}

/**
 * Before a relaxed batch's BEGIN: `synchronous=NORMAL` (in WAL mode its commit is not synced: it
 * survives the process crashing, not the machine losing power). SQLite allows the change only
 * outside a transaction, so the level is a batch's. Returns the connection's own level, to set
 * back after the commit, or null when it is NORMAL or lower already.
 */
function relax(db: SqliteDatabase, group: Group): number | null {
  const own = Number((group.synchronous.get() as { synchronous: number | bigint }).synchronous)
  if (own <= SYNC_NORMAL) return null
  syncStatement(db, group, SYNC_NORMAL).run()
  return own
}

/**
 * Commits one batch in one IMMEDIATE transaction: each change in its own savepoint (one that
 * throws is undone alone), each read after the changes queued before it. Every item is answered
 * once the commit is durable; if the commit fails, every one fails with it.
 */
function commitBatch(db: SqliteDatabase, group: Group, batch: Batch): void {
  const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = []
  let failure: { error: unknown } | null = null
  let relaxedFrom: number | null = null
  try {
    if (batch.relaxed) relaxedFrom = relax(db, group)
    group
      .transaction(() => {
        for (const item of batch.items) {
          try {
            const value = item.savepoint ? group.transaction(item.work)() : item.work()
            outcomes.push({ ok: true, value })
          } catch (error) {
            // SQLite rolls the whole transaction back on some errors (a full disk, an I/O
            // error): the changes before this one are gone too, so the batch fails as a whole.
            if (!db.inTransaction) throw error
            outcomes.push({ ok: false, error })
          }
        }
      })
      .immediate()
  } catch (error) {
    failure = { error }
  }
  if (relaxedFrom !== null) {
    try {
      syncStatement(db, group, relaxedFrom).run()
    } catch {
      // Closed meanwhile: nothing left to restore.
    }
  }
  const answers: Array<() => void> = []
  const failures: Array<(error: unknown) => void> = []
  batch.items.forEach((item, i) => {
    const outcome = outcomes[i]
    if (failure) item.reject(failure.error)
    else if (outcome?.ok) {
      answers.push(() => item.resolve(outcome.value))
      failures.push(item.reject)
    } else item.reject(outcome?.error)
  })
  if (failure === null && !batch.relaxed && group.logSync !== null) {
    group.unsynced.push({ touched: batch.touched, answers, failures })
    syncSoon(group)
  } else for (const answer of answers) answer()
}

/**
 * Starts a log sync for the committed changes waiting for one, unless one runs: those committed
 * meanwhile wait for the next, which covers them all (a second level of group commit).
 */
function syncSoon(group: Group): void {
  if (group.inFlight !== null || group.unsynced.length === 0 || group.logSync === null) return
  group.synced ??= new Promise<void>((resolve) => {
    group.syncedDone = resolve
  })
  const covered = group.unsynced
  group.unsynced = []
  group.inFlight = covered
  group.logSync((error) => {
    group.inFlight = null
    for (const { answers, failures } of covered) {
      if (error === undefined) for (const answer of answers) answer()
      else for (const fail of failures) fail(error)
    }
    if (group.flushAfterSync) {
      group.flushAfterSync = false
      flush(group) // commits what waited for this sync, and starts the next one
    }
    syncSoon(group)
    if (group.inFlight === null) {
      const done = group.syncedDone
      group.synced = null
      group.syncedDone = null
      done?.()
    }
  })
}

/**
 * Commits the waiting batches, in the order they were opened. While a log sync runs they wait for
 * it to end, then commit together: their changes could not be answered before the next sync
 * anyway, and one commit costs less than several, and writes a page they share to the log once.
 */
function flush(group: Group): void {
  if (group.inFlight !== null) {
    group.flushAfterSync = true
    return
  }
  const { batches, done } = group
  group.batches = []
  group.settled = null
  group.done = null
  for (const batch of batches) commitBatch(group.db, group, batch)
  done?.()
}

/** Queues `item` in `batch`; the first item queued schedules the flush. */
export function enqueue<T>(group: Group, batch: Batch, work: () => T, savepoint: boolean): Promise<T> {
  if (group.settled === null) {
    group.settled = new Promise<void>((resolve) => {
      group.done = resolve
    })
    setImmediate(() => flush(group))
  }
  return new Promise<T>((resolve, reject) => {
    batch.items.push({ work, savepoint, resolve: resolve as (value: unknown) => void, reject })
  })
}

/**
 * The write path of every store over `db` (group commit). A change is queued, and the changes
 * queued in the same turn of the event loop (concurrent requests, any store) are run and committed
 * together right after the current I/O callbacks (`setImmediate`), in one transaction
 * (better-sqlite3's `db.transaction(…).immediate()`: `BEGIN IMMEDIATE` takes the write lock first,
 * waiting out the busy timeout, so a read-then-write never fails halfway on another process's
 * commit). Each change runs in a nested transaction function, a savepoint of its own, so one that
 * throws is undone alone and rejects alone. Each change's promise resolves only once its commit is
 * durable (under `synchronous=FULL`), and rejects if the commit fails. The write lock is held only
 * while the batch runs.
 *
 * A change that must be synced never joins a relaxed batch: it opens the next one. Inside a
 * transaction already open on the connection (one the caller opened itself, or another change's
 * work calling a store) the change runs at once as a savepoint of it and resolves at once: that
 * transaction's owner commits it.
 */
export function createTransaction(db: SqliteDatabase): Transaction {
  const group = groupOf(db)
  return <T>(work: () => T, touches?: readonly string[], durability: Durability = 'full'): Promise<T> => {
    if (db.inTransaction) {
      try {
        return Promise.resolve(group.transaction(work)())
      } catch (error) {
        return Promise.reject(error)
      }
    }
    const relaxed = durability === 'relaxed'
    let batch = group.batches.at(-1)
    if (batch === undefined || (batch.relaxed && !relaxed)) {
      batch = { relaxed, items: [], touched: new Set() }
      group.batches.push(batch)
    }
    if (touches === undefined) batch.touched = 'all'
    else if (batch.touched !== 'all') for (const key of touches) batch.touched.add(key)
    return enqueue(group, batch, work, true)
  }
}

/**
 * Runs `work` in a transaction of its own, committed before it returns (for opening: migrations).
 * Inside an open transaction it is a savepoint of it.
 */
export function transactNow<T>(db: SqliteDatabase, work: () => T): T {
  return groupOf(db).transaction(work).immediate()
}

/** Resolves when no change on `db` is waiting for its commit (at once when none is): for close. */
export async function committed(db: SqliteDatabase): Promise<void> {
  const group = groups.get(db)
  if (group === undefined) return
  await group.settled
  await group.synced
}

/**
 * Commits on `db` no longer sync in place (`synchronous=NORMAL`, which in WAL mode syncs the log
 * only at checkpoints); instead `sync` syncs the log after each commit, off the event loop, and
 * each change of a batch that must be synced is answered only then. A change answered is as
 * durable as under `synchronous=FULL`; the event loop no longer waits for the disk, and the
 * commits made while one sync runs share the next. Relaxed changes are answered at their commit,
 * as before. For a connection opened by openDatabase, on a file; call before any change.
 */
export function syncLogAsync(db: SqliteDatabase, sync: LogSync): void {
  const group = groupOf(db)
  db.exec(`PRAGMA synchronous = ${SYNC_NORMAL}`)
  group.logSync = sync
}
