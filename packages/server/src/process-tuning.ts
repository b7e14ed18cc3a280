// Process-wide tuning of the `flowadmin` command, applied by its start path only (cli.ts): the
// pieces an embedder imports (createServer, the verifier, the stores) never change the process.
import { readdirSync } from 'node:fs'
import { setPriority } from 'node:os'

/** Niceness given to the threads that hash, so requests that need no hashing go first. */
export const HASHING_NICENESS = 10

/**
 * Lowers the priority of every thread of the process but the main one: libuv's thread pool, where
 * argon2 works, and V8's helper threads. The event loop keeps its priority, so requests that need
 * no hashing are answered first while logins use every core left. Call it once the thread pool
 * has started (after the first hash). Linux only (threads are tasks with their own niceness
 * there); elsewhere, or without /proc, it changes nothing.
 */
export function lowerHelperThreadPriority(): void {
  let tasks: string[]
  try {
    tasks = readdirSync('/proc/self/task')
  } catch {
    return
  }
  for (const tid of tasks) {
    if (Number(tid) === process.pid) continue
    try {
      setPriority(Number(tid), HASHING_NICENESS)
    } catch {
      // Not permitted or already gone: that thread keeps its priority.
    }
  }
}
