import { closeSync, fsync, openSync } from 'node:fs'
import type { LogSync } from './transaction.js'

/**
 * Syncs the write-ahead log of the database at `file` (its `-wal` file) on libuv's thread pool.
 *
 * The log is opened at the first sync that finds it and kept open: nothing is asked of the file
 * system on the event loop after that. It stays the log for as long as this sync is used, because
 * the store uses it only while its own connection is open, and SQLite deletes the log only when
 * the last connection to the database closes (it rewrites or truncates it in place otherwise).
 * Should someone delete the file meanwhile, the open descriptor still reaches the one SQLite
 * writes to. Before the log exists there is nothing to sync; a log that cannot be opened fails the
 * sync, and so the changes waiting for it.
 */
export function createLogSync(file: string): LogSync & { close(): void } {
  const path = `${file}-wal`
  let fd: number | null = null
  const sync: LogSync = (done) => {
    if (fd === null) {
      try {
        fd = openSync(path, 'r')
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') done()
        else done(error)
        return
      }
    }
    fsync(fd, (error) => done(error ?? undefined))
  }
  return Object.assign(sync, {
    close() {
      if (fd !== null) closeSync(fd)
      fd = null
    },
  })
}
