import { spawn } from 'node:child_process'

/** Seconds a settings file may take to give its settings. */
export const CHILD_EVAL_TIMEOUT_MS = 30_000

/**
 * Runs `node <args>` for the one message its IPC channel sends back: how a settings file (ours,
 * or a Node-RED settings.js) is evaluated outside this process. What the child prints goes to
 * standard error; whatever it leaves running (a timer, a socket) ends with it. Rejects when it
 * sends nothing within CHILD_EVAL_TIMEOUT_MS, or ends first (`what` is what it was to give).
 */
export function evaluateInChild(args: readonly string[], what: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...args], { stdio: ['ignore', 2, 2, 'ipc'] })
    let settled = false
    const settle = (outcome: () => void) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      outcome()
    }
    const timer = setTimeout(
      () =>
        settle(() => reject(new Error(`it gave no ${what} within ${CHILD_EVAL_TIMEOUT_MS / 1000} seconds`))),
      CHILD_EVAL_TIMEOUT_MS,
    )
    child.once('message', (message) => settle(() => resolve(message)))
    child.once('error', (error) => settle(() => reject(error)))
    // 'close' comes after every message of the channel, so a child that gave its answer is never
    // taken for one that ended its process first.
    child.once('close', (code, signal) =>
      settle(() =>
        reject(
          new Error(
            `it ended its process (${signal === null ? `exit code ${code}` : signal}) before giving its ${what}`,
          ),
        ),
      ),
    )
  })
}
