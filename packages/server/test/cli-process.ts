// Runs the built `flowadmin` command as a child process, as a user would from a shell.
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest'
import { type ChildRun, type Ended, ended, killChildren, watchChild } from './child-output.js'

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

/** A running `flowadmin` command. */
export type CliRun = ChildRun

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
  return watchChild(child, 'flowadmin', { input: options.input, onClose: () => children.delete(child) })
}

/** Runs `flowadmin <args>` to its end: its exit code, stdout and stderr. */
export function runCliToEnd(
  args: string[],
  options: { cwd?: string; input?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<Ended> {
  return ended(runCli(args, options))
}

/** Kills every child still running; for afterEach. */
export async function killAll(): Promise<void> {
  await killChildren(children)
  children.clear()
}

/** A test's userDir and the path of the settings file in it (which the test writes). */
export interface UserDir {
  readonly userDir: string
  readonly settingsFile: string
}

/**
 * The hooks of a test file that runs the built command in a userDir of its own: the build is
 * checked first; each test gets a fresh `flowadmin-<name>-…` temp folder, made ready by `prepare`;
 * after each test every command still running is killed and the folder removed.
 */
export function useUserDir(name: string, prepare?: (userDir: string) => Promise<void>): UserDir {
  const current = { userDir: '', settingsFile: '' }
  beforeAll(() => requireBuild())
  beforeEach(async () => {
    current.userDir = await mkdtemp(path.join(tmpdir(), `flowadmin-${name}-`))
    current.settingsFile = path.join(current.userDir, 'settings.json')
    await prepare?.(current.userDir)
  })
  afterEach(async () => {
    await killAll()
    await rm(current.userDir, { recursive: true, force: true })
  })
  afterAll(killAll)
  return current
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
