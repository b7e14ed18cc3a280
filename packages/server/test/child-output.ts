// What the process tests see of a child process, whichever way it was started: what it writes as
// it comes, a line it prints, its end; and killing the ones still running after a test.
import type { ChildProcess } from 'node:child_process'

export interface ChildRun {
  child: ChildProcess
  /** Everything written to stdout and stderr so far. */
  readonly stdout: string
  readonly stderr: string
  /** The exit code (or the signal's name), once the process has ended. */
  exited: Promise<number | string>
  /** Resolves with the first stdout line matching `pattern`; rejects if the process ends first. */
  line(pattern: RegExp): Promise<string>
}

/** A finished run: its exit code (or the signal's name) and all it wrote. */
export interface Ended {
  code: number | string
  stdout: string
  stderr: string
}

/**
 * Collects what `child` writes; `input`, when given, is piped to its stdin and closed. `name` is
 * the program errors speak of; `onClose` runs once the process has ended and its output is in.
 */
export function watchChild(
  child: ChildProcess,
  name: string,
  options: { input?: string; onClose?: () => void } = {},
): ChildRun {
  let stdout = ''
  let stderr = ''
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
  })
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  if (options.input !== undefined) child.stdin?.end(options.input)
  const exited = new Promise<number | string>((resolve) => {
    child.once('close', (code, signal) => {
      options.onClose?.()
      resolve(code ?? signal ?? 'unknown')
    })
  })
  return {
    child,
    get stdout() {
      return stdout
    },
    get stderr() {
      return stderr
    },
    exited,
    line(pattern) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = stdout.split('\n').find((line) => pattern.test(line))
          if (found === undefined) return false
          child.stdout?.off('data', check)
          resolve(found)
          return true
        }
        if (check()) return
        child.stdout?.on('data', check)
        exited.then((code) => {
          if (!check()) reject(new Error(`${name} ended (${code}) before printing ${pattern}:\n${stderr}`))
        })
      })
    },
  }
}

/** Waits for `run` to end; its exit code and everything it wrote. */
export async function ended(run: ChildRun): Promise<Ended> {
  const code = await run.exited
  return { code, stdout: run.stdout, stderr: run.stderr }
}

/** Kills each of `children` still running and waits until it has ended; for afterEach. */
export async function killChildren(children: Iterable<ChildProcess>): Promise<void> {
  await Promise.all(
    [...children].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve()
          child.once('close', () => resolve())
          child.kill('SIGKILL')
        }),
    ),
  )
}
