// Runs the built `flowadmin` command as a child process, as a user would from a shell; and the
// launcher of the built server: its temp folder, its settings file, its start and its stop.
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
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

const DEMO = fileURLToPath(new URL('../../../examples/demo', import.meta.url))

/** Copies the demo's node modules into `userDir`, and its deployed flows with `flows` (which use `greeting`). */
export async function copyDemo(userDir: string, options: { flows?: boolean } = {}): Promise<void> {
  await cp(path.join(DEMO, 'node_modules'), path.join(userDir, 'node_modules'), { recursive: true })
  if (options.flows) await cp(path.join(DEMO, 'flows.json'), path.join(userDir, 'flows.json'))
}

/** Writes `settings` as the JSON settings file `file`, making its folder. */
export async function writeSettings(file: string, settings: object): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true })
  await writeFile(file, JSON.stringify(settings, null, 2))
}

/** How a test starts the built server. */
export interface ServerOptions {
  /** Written as the settings file first, when given. */
  settings?: object
  /** The port to listen on; a free one when not given. */
  port?: number | string
  /** More arguments of `flowadmin start`. */
  args?: string[]
  cwd?: string
  env?: NodeJS.ProcessEnv
}

/** A running built server. */
export interface BuiltServer {
  run: CliRun
  /** Its base URL, from its listening line. */
  url: string
  /** The line it printed once it listened. */
  line: string
  /** Ends it as a service manager does (SIGTERM) and waits for its end; its exit code. */
  stop(): Promise<number | string>
}

/** Starts the server with `args` after `start` and waits for its listening line. */
export async function startCli(
  args: string[],
  options: { cwd?: string; bin?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<BuiltServer> {
  const run = runCli(['start', ...args], options)
  const line = await run.line(/^flowadmin listening on /)
  const url = /listening on (http:\/\/\S+)/.exec(line)?.[1]
  if (url === undefined) throw new Error(`unexpected listening line: ${line}`)
  return {
    run,
    url,
    line,
    stop() {
      run.child.kill('SIGTERM')
      return run.exited
    },
  }
}

/**
 * Starts the built server on the settings file `settingsFile` (written from `settings` first, when
 * given) on 127.0.0.1, and waits until it listens.
 */
export async function startBuiltServer(
  settingsFile: string,
  options: ServerOptions = {},
): Promise<BuiltServer> {
  if (options.settings !== undefined) await writeSettings(settingsFile, options.settings)
  const port = String(options.port ?? 0)
  return startCli(['--settings', settingsFile, '--port', port, ...(options.args ?? [])], options)
}

/** A fresh `flowadmin-<name>-…` folder in the temp folder. */
const tempFolder = (name: string) => mkdtemp(path.join(tmpdir(), `flowadmin-${name}-`))

/** A test's userDir and the path of the settings file in it. */
export interface UserDir {
  readonly userDir: string
  readonly settingsFile: string
  /** {@link startBuiltServer} on the settings file. */
  start(options?: ServerOptions): Promise<BuiltServer>
}

/**
 * The hooks of a test file that runs the built command in a userDir of its own: the build is
 * checked first; each test gets a fresh `flowadmin-<name>-…` temp folder, made ready by `prepare`;
 * after each test every command still running is killed and the folder removed.
 */
export function useUserDir(name: string, prepare?: (userDir: string) => Promise<void>): UserDir {
  const current = {
    userDir: '',
    settingsFile: '',
    start: (options?: ServerOptions) => startBuiltServer(current.settingsFile, options),
  }
  beforeAll(() => requireBuild())
  beforeEach(async () => {
    current.userDir = await tempFolder(name)
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

/**
 * The hooks of a test file whose built servers serve all its tests: the build is checked and a
 * fresh `flowadmin-<name>-…` temp folder made (`dir`) before them; after them every command still
 * running is killed and the folder removed. A file's own hooks registered after this call run
 * after these before its tests, and before these after them.
 */
export function useServerFolder(name: string): { readonly dir: string } {
  const current = { dir: '' }
  beforeAll(async () => {
    requireBuild()
    current.dir = await tempFolder(name)
  })
  afterAll(async () => {
    await killAll()
    if (current.dir !== '') await rm(current.dir, { recursive: true, force: true })
  })
  return current
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
