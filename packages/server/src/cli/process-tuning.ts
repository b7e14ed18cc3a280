// Process-wide tuning of the `flowadmin` command, applied by its start path only (cli/main.ts): the
// pieces an embedder imports (createServer, the verifier, the stores) never change the process.
import { execFile } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { setPriority } from 'node:os'

/** Niceness given to the threads that hash, so requests that need no hashing go first. */
export const HASHING_NICENESS = 10

/**
 * Lowers the priority of every thread of the process but the main one: libuv's thread pool, where
 * argon2 works, and V8's helper threads. The event loop keeps its priority, so requests that need
 * no hashing are answered first while logins use the cores left. Call it once the thread pool has
 * started (after the first hash). Linux only (threads are tasks with their own priority there);
 * elsewhere, or without /proc, it changes nothing.
 *
 * Each helper gets niceness HASHING_NICENESS at once, then the SCHED_IDLE policy through util-linux's
 * `chrt`, in the background. Niceness alone still lets a running hash finish its time slice before
 * a thread woken for a request gets the core; a SCHED_IDLE thread gives it up at once (measured on
 * two cores during a storm of logins: authenticated GET p99 2.8 ms instead of 4.3 ms, and
 * ten-connection toggles no slower). A thread still runs whenever no other wants its core. Without
 * `chrt`, or where the policy may not be changed, the niceness stays.
 *
 * The niceness is set before it returns (a few system calls); the returned function starts `chrt`,
 * so a caller may start that process after whatever it need not delay.
 */
export function lowerHelperThreadPriority(): () => void {
  let tasks: string[]
  try {
    tasks = readdirSync('/proc/self/task')
  } catch {
    return () => {}
  }
  const helpers = tasks.filter((tid) => Number(tid) !== process.pid)
  for (const tid of helpers) {
    try {
      setPriority(Number(tid), HASHING_NICENESS)
    } catch {
      // Not permitted or already gone: that thread keeps its priority.
    }
  }
  if (helpers.length === 0) return () => {}
  return () => {
    // One shell for every thread; a thread gone meanwhile, or a missing chrt, changes nothing else.
    const child = execFile(
      'sh',
      ['-c', 'for tid do chrt --idle --pid 0 "$tid"; done', 'sh', ...helpers],
      { timeout: 10_000 },
      () => {},
    )
    child.unref()
  }
}
