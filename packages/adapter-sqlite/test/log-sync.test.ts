import { existsSync, statSync, symlinkSync } from 'node:fs'
import { tokenRecord } from '@flowadmin/testkit'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { createSqliteStores, openDatabase } from '../src/index.js'
import { createLogSync } from '../src/log-sync.js'
import { type LogSync, syncLogAsync } from '../src/transaction.js'
import { createTempFolder } from './temp.js'

const temp = createTempFolder()
afterAll(() => temp.remove())

const turn = () => new Promise((resolve) => setTimeout(resolve, 20))

/** A token record that has not expired. */
const live = (hash: string) => tokenRecord(hash, { createdAt: 0, expiresAt: Date.now() + 60_000 })

/** Opens the file at `path` afresh and finds the token `hash` in it. */
async function expectKept(path: string, hash: string) {
  const reopened = createSqliteStores(path)
  expect((await reopened.tokens.findByHash(hash))?.hash).toBe(hash)
  await reopened.close()
}

/** One sync of `sync`, as a promise. */
const synced = (sync: LogSync) =>
  new Promise<void>((resolve, reject) => sync((error) => (error ? reject(error) : resolve())))

/** A log sync the test completes by hand, counting the syncs asked for. */
function heldSync() {
  const pending: Array<(error?: unknown) => void> = []
  const sync: LogSync = (done) => pending.push(done)
  return {
    sync,
    pending,
    finish: (error?: unknown) => pending.shift()?.(error),
  }
}

/** Stores over a new database file whose log is synced by a {@link heldSync}. */
function storesWithHeldSync() {
  const path = temp.file()
  const db = openDatabase(path)
  const held = heldSync()
  syncLogAsync(db, held.sync)
  return { path, db, held, stores: createSqliteStores(db) }
}

/** Settled or not, without waiting. */
function state(promise: Promise<unknown>) {
  const seen = { settled: false, error: undefined as unknown }
  promise.then(
    () => {
      seen.settled = true
    },
    (error: unknown) => {
      seen.settled = true
      seen.error = error
    },
  )
  return seen
}

describe('the log synced after the commit, off the event loop', () => {
  it('answers a change only once its sync is done; a read that could see it waits too, an unrelated one does not', async () => {
    const { path, db, held, stores } = storesWithHeldSync()
    const first = stores.tokens.save(live('other'))
    await turn()
    expect(held.pending).toHaveLength(1)
    held.finish()
    await first

    const saving = state(stores.tokens.save(live('h1')))
    await turn()
    // Committed (another connection sees it) but not answered: the log is not synced yet.
    const other = new Database(path, { readonly: true })
    expect(other.prepare('SELECT count(*) AS n FROM tokens WHERE hash = ?').get('h1')).toEqual({ n: 1 })
    other.close()
    expect(saving.settled).toBe(false)
    expect(held.pending).toHaveLength(1)
    const reading = state(stores.tokens.findById('id-h1'))
    // The modules depend on no token change: listed at once.
    expect(await stores.modules.list()).toEqual([])
    await turn()
    expect(reading.settled).toBe(false)

    // Changes made while a sync runs wait for it to end, then are committed together and share
    // the next sync.
    const more = [1, 2, 3].map((i) => state(stores.tokens.save(live(`m${i}`))))
    await turn()
    expect(held.pending).toHaveLength(1)
    const seenElsewhere = () => {
      const reader = new Database(path, { readonly: true })
      const { n } = reader.prepare("SELECT count(*) AS n FROM tokens WHERE hash LIKE 'm%'").get() as {
        n: number
      }
      reader.close()
      return n
    }
    expect(seenElsewhere()).toBe(0)
    held.finish()
    await turn()
    expect(saving).toEqual({ settled: true, error: undefined })
    expect(reading).toEqual({ settled: true, error: undefined })
    expect(seenElsewhere()).toBe(3)
    expect(more.every((m) => !m.settled)).toBe(true)
    expect(held.pending).toHaveLength(1)
    held.finish(new Error('EIO: the disk failed'))
    await turn()
    for (const m of more) expect(String(m.error)).toContain('EIO')
    await stores.close()
    db.close()
  }, 20_000)

  it('commits the changes that waited for a failed sync, and answers them after a sync of their own', async () => {
    const { path, db, held, stores } = storesWithHeldSync()
    const failing = state(stores.tokens.save(live('first')))
    await turn()
    const waiting = state(stores.tokens.save(live('second')))
    await turn()
    held.finish(new Error('EIO: the disk failed'))
    await turn()
    expect(String(failing.error)).toContain('EIO')
    // Committed once the failed sync ended, and waiting for the next one.
    const reader = new Database(path, { readonly: true })
    expect(reader.prepare('SELECT count(*) AS n FROM tokens WHERE hash = ?').get('second')).toEqual({ n: 1 })
    reader.close()
    expect(waiting.settled).toBe(false)
    expect(held.pending).toHaveLength(1)
    held.finish()
    await turn()
    expect(waiting).toEqual({ settled: true, error: undefined })
    await stores.close()
    db.close()
  })

  it('over a file it opens: the connection syncs at checkpoints only, and changes are still answered and kept', async () => {
    const path = temp.file()
    const stores = createSqliteStores(path)
    for (let i = 0; i < 20; i++) {
      await stores.tokens.save(live(`t${i}`))
    }
    expect(existsSync(`${path}-wal`)).toBe(true)
    expect((await stores.tokens.findByHash('t19'))?.hash).toBe('t19')
    await stores.close()
    await expectKept(path, 't0')
  })

  it('has nothing to sync before the log exists, then syncs the log the connection writes to', async () => {
    const path = temp.file()
    const sync = createLogSync(path)
    await synced(sync)
    const db = new Database(path)
    db.pragma('journal_mode = WAL')
    db.exec('CREATE TABLE t (x); INSERT INTO t VALUES (1)')
    await synced(sync)
    db.close()
    sync.close()
  })

  it('keeps the log it opened: another connection opening and closing the database leaves it in place', async () => {
    const path = temp.file()
    const stores = createSqliteStores(path)
    await stores.tokens.save(live('first'))
    const before = statSync(`${path}-wal`).ino
    // The command line (flowadmin tokens, migrate) opens the same file while the server runs.
    const other = new Database(path)
    other.exec('INSERT INTO tokens SELECT * FROM tokens WHERE 0')
    other.close()
    expect(statSync(`${path}-wal`).ino).toBe(before)
    await stores.tokens.save(live('second'))
    expect(statSync(`${path}-wal`).ino).toBe(before)
    await stores.close()
    await expectKept(path, 'second')
  })

  it('fails the sync when the log cannot be opened (the changes waiting for it fail with it, as above)', async () => {
    const path = temp.file()
    symlinkSync(`${path}-wal`, `${path}-wal`) // a link to itself: opening it fails (ELOOP)
    const sync = createLogSync(path)
    await expect(synced(sync)).rejects.toMatchObject({ code: 'ELOOP' })
    sync.close()
  })
})
