// Runs the built `flowadmin` command as a child process, as a user would from a shell.
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

export const BIN = fileURLToPath(new URL('../bin/flowadmin.cjs', import.meta.url))

const BUILT = [
  'server/dist/cli/main.js',
  'adapter-http/dist/index.js',
  'adapter-sqlite/dist/index.js',
  'adapter-postgres/dist/index.js',
  'core/dist/index.js',
]

/** Throws a message saying what to do when the packages have not been built. */
export function requireBuild(): void {
  const missing = BUILT.filter(
    (file) => !existsSync(fileURLToPath(new URL(`../../${file}`, import.meta.url))),
  )
  if (missing.length > 0) {
    throw new Error(
      `The end-to-end tests run the built CLI, but ${missing.join(', ')} is missing under packages/. ` +
        'Run `pnpm build` first.',
    )
  }
}

export interface CliRun {
  child: ChildProcess
  /** Everything written to stdout and stderr so far. */
  readonly stdout: string
  readonly stderr: string
  /** The exit code (or the signal's name), once the process has ended. */
  exited: Promise<number | string>
  /** Resolves with the first stdout line matching `pattern`; rejects if the process ends first. */
  line(pattern: RegExp): Promise<string>
}

const children = new Set<ChildProcess>()

/**
 * Starts `flowadmin <args>`; `input`, when given, is piped to stdin and closed. `bin` runs another
 * `flowadmin` launcher than the workspace's (an installed one, say).
 */
export function runCli(
  args: string[],
  options: { cwd?: string; input?: string; bin?: string; env?: NodeJS.ProcessEnv } = {},
): CliRun {
  const child = spawn(process.execPath, [options.bin ?? BIN, ...args], {
    cwd: options.cwd,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1', ...options.env },
  })
  children.add(child)
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
      children.delete(child)
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
          if (!check()) reject(new Error(`flowadmin ended (${code}) before printing ${pattern}:\n${stderr}`))
        })
      })
    },
  }
}

/** Kills every child still running; for afterEach. */
export async function killAll(): Promise<void> {
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
  children.clear()
}

/** Starts the server and waits for its listening line; returns the run and its base URL. */
export async function startCli(
  args: string[],
  options: { cwd?: string; bin?: string; env?: NodeJS.ProcessEnv } = {},
) {
  const run = runCli(['start', ...args], options)
  const line = await run.line(/^flowadmin listening on /)
  const url = /listening on (http:\/\/\S+)/.exec(line)?.[1]
  if (url === undefined) throw new Error(`unexpected listening line: ${line}`)
  return { run, url, line }
}

/** One line of the server's log, as the command writes it to stderr. */
export type LogEntry = Record<string, unknown> & { level: string; time: string; msg: string }

/**
 * The log lines in `stderr`: every line that is not a message of the command itself
 * (`flowadmin: ...`, written before the server runs or when it fails), parsed as JSON.
 */
export function logEntries(stderr: string): LogEntry[] {
  return stderr
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('flowadmin: '))
    .map((line) => JSON.parse(line))
}
