// Runs a real, stock Node-RED (the pinned devDependency) as a child process: on 127.0.0.1, a port
// of its own, a temp userDir and a settings.js the test writes, as an operator would start it.
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import * as path from 'node:path'

/** Node-RED's own launcher; FLOWADMIN_NODE_RED names another one (another version's red.js). */
export const NODE_RED =
  process.env.FLOWADMIN_NODE_RED ?? createRequire(import.meta.url).resolve('node-red/red.js')

/** The longest a Node-RED may take to load its nodes and listen. */
const START_DEADLINE_MS = 30_000
/** The longest a Node-RED may take to stop its flows after SIGTERM; then it is killed. */
const STOP_DEADLINE_MS = 10_000

/** The parts of a settings.js: code before `module.exports`, and the settings' own source. */
export interface NodeRedSettings {
  /** Statements before `module.exports` (a `require`, an options object). */
  preamble?: string
  /** The source of the `adminAuth` value. */
  adminAuth: string
  /** The source of the `httpAdminMiddleware` value, if any. */
  httpAdminMiddleware?: string
  /** The source of the `logging` value; default: the console at info, no audit. */
  logging?: string
  /** The source of more settings, e.g. `externalModules: { … },`. */
  more?: string
}

/**
 * A settings.js: Node-RED on 127.0.0.1 with flows.json, no credential encryption, no telemetry
 * prompt, info logging (its "Server now running" line is how the start is seen), and `settings`.
 */
export function settingsModule(settings: NodeRedSettings): string {
  const middleware =
    settings.httpAdminMiddleware === undefined
      ? ''
      : `  httpAdminMiddleware: ${settings.httpAdminMiddleware},\n`
  return `'use strict'
${settings.preamble ?? ''}
module.exports = {
  uiHost: '127.0.0.1',
  flowFile: 'flows.json',
  credentialSecret: false,
  telemetry: { enabled: false },
  editorTheme: { tours: false },
  logging: ${settings.logging ?? "{ console: { level: 'info', metrics: false, audit: false } }"},
  adminAuth: ${settings.adminAuth},
${middleware}${settings.more === undefined ? '' : `  ${settings.more}\n`}}
`
}

export interface NodeRedRun {
  child: ChildProcess
  /** Its admin API, e.g. `http://127.0.0.1:41234` (no trailing slash). */
  url: string
  userDir: string
  /** Everything written to stdout and stderr so far. */
  readonly stdout: string
  readonly stderr: string
  /** The exit code (or the signal's name), once the process has ended. */
  exited: Promise<number | string>
  /** SIGTERM, then SIGKILL if it has not ended within the deadline; resolves once it has. */
  stop(): Promise<void>
}

const running = new Set<ChildProcess>()

/** Ends `child`: `signal`, then SIGKILL after STOP_DEADLINE_MS; resolves once it has ended. */
function end(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    const kill = setTimeout(() => child.kill('SIGKILL'), STOP_DEADLINE_MS)
    child.once('close', () => {
      clearTimeout(kill)
      resolve()
    })
    child.kill(signal)
  })
}

/**
 * Starts Node-RED with `settings` written to `<userDir>/settings.js` (userDir is created) and
 * resolves once it listens: its "Server now running at" line names the port it got, so it is
 * given port 0 and no port can be taken in between. `extraEnv` is added to its environment (a
 * secret the settings read from `process.env`). Rejects with its output if it ends first or
 * does not listen within the deadline (it is killed then). `port`, when not 0, is one the test
 * must know beforehand (a redirect URI registered at flowadmin names it): see freePort.
 */
export async function startNodeRed(
  userDir: string,
  settings: NodeRedSettings,
  extraEnv: NodeJS.ProcessEnv = {},
  port = 0,
): Promise<NodeRedRun> {
  await mkdir(userDir, { recursive: true })
  const settingsFile = path.join(userDir, 'settings.js')
  await writeFile(settingsFile, settingsModule(settings))
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', ...extraEnv }
  const child = spawn(
    process.execPath,
    [NODE_RED, '--userDir', userDir, '--settings', settingsFile, '--port', String(port)],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  )
  running.add(child)
  let stdout = ''
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  const exited = new Promise<number | string>((resolve) => {
    child.once('close', (code, signal) => {
      running.delete(child)
      resolve(code ?? signal ?? 'unknown')
    })
  })
  const listening = new Promise<string>((resolve, reject) => {
    const deadline = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`Node-RED did not listen within ${START_DEADLINE_MS} ms:\n${stdout}\n${stderr}`))
    }, START_DEADLINE_MS)
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk
      const url = /Server now running at (http:\/\/127\.0\.0\.1:\d+)\//.exec(stdout)?.[1]
      if (url === undefined) return
      clearTimeout(deadline)
      resolve(url)
    })
    exited.then((code) => {
      clearTimeout(deadline)
      reject(new Error(`Node-RED ended (${code}) before it listened:\n${stdout}\n${stderr}`))
    })
  })
  const url = await listening
  return {
    child,
    url,
    userDir,
    get stdout() {
      return stdout
    },
    get stderr() {
      return stderr
    },
    exited,
    stop: () => end(child, 'SIGTERM'),
  }
}

/** Stops every Node-RED still running; for afterAll, also after a failure. */
export async function stopNodeReds(): Promise<void> {
  await Promise.all([...running].map((child) => end(child, 'SIGTERM')))
}

/**
 * A port free on 127.0.0.1 now, for a Node-RED whose address must be written in settings before
 * it starts (its sign-in callback, registered at flowadmin). Another process could take it in
 * between; the start then fails with Node-RED's "address in use" rather than passing wrongly.
 */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net')
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as import('node:net').AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}
