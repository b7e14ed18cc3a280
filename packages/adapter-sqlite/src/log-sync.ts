import { closeSync, fstatSync, fsync, openSync, statSync } from 'node:fs'
import type { LogSync } from './transaction.js'

/**
 * Syncs the write-ahead log of the database at `file` (its `-wal` file) on libuv's thread pool.
 * The log is opened once and opened again when SQLite has replaced it (another inode at the
 * path); a log that is not there has nothing to sync.
 */
export function createLogSync(file: string): LogSync & { close(): void } {
  const path = `${file}-wal`
  let fd: number | null = null
  const current = (): number | null => {
    let onDisk: ReturnType<typeof statSync>
    try {
      onDisk = statSync(path)
    } catch {
      return null
    }
    if (fd !== null && fstatSync(fd).ino !== onDisk.ino) {
      closeSync(fd)
      fd = null
    }
    fd ??= openSync(path, 'r')
    return fd
  }
  const sync: LogSync = (done) => {
    let target: number | null
    try {
      target = current()
    } catch (error) {
      done(error)
      return
    }
    if (target === null) done()
    else fsync(target, (error) => done(error ?? undefined))
  }
  return Object.assign(sync, {
    close() {
      if (fd !== null) closeSync(fd)
      fd = null
    },
  })
}
