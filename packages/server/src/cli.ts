import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { messageOf } from '@flowadmin/core'
import { hashPassword } from './argon2.js'
import { migrateStore, type RunningServer, startServer, VERSION } from './compose.js'
import { EXIT_RUNTIME, EXIT_USAGE, StartupError } from './errors.js'
import { createLogger, type Logger } from './log.js'
import { forgetModule } from './modules-cli.js'
import { readPassword } from './password-input.js'
import { lowerHelperThreadPriority } from './process-tuning.js'
import { tokensCommand } from './tokens-cli.js'

const HELP = `Usage: flowadmin <command> [options]

Commands:
  start      Start the admin API server
  hash-pw    Read a password and print its argon2id hash, for adminAuth.users[].password
  tokens     List, revoke or create sessions and API tokens (flowadmin tokens --help)
  migrate    Apply the store's schema migrations and exit (start applies them too)
  modules forget NAME
             Drop the stored state (enabled flags) of a module that is gone for good
             (accepts --settings and --user-dir, as start does)

Options of start:
  -s, --settings FILE     settings file (.json, or .js/.mjs exporting the settings object)
  -p, --port N            port to listen on (overrides uiPort; 0 picks a free port)
      --host H            address to listen on (overrides uiHost)
  -u, --user-dir DIR      folder with node_modules/, flows.json and flowadmin.db (overrides userDir)
      --allow-open-admin  allow listening on a non-loopback address without adminAuth
      --demo              run the demo: the repository's examples/demo settings and userDir
                          (users admin / flowadmin-demo and viewer / flowadmin-view); no --settings
      --pretty            write the log for people to read, not JSON lines (the default when
                          standard error is a terminal)

  -h, --help              show this help
  -v, --version           show the version

Options of migrate: -s/--settings and -u/--user-dir, as for start. With "storage": "postgres",
instances starting at once, or a migrate beside them, take turns under an advisory lock.

hash-pw reads the first line of standard input when it is piped, or prompts without echo.

Exit codes: 0 success, 1 run-time failure (port in use, unreadable database or file),
2 usage or settings error, 130 interrupted prompt.
`

const DEMO_WARNING =
  'warning: demo credentials are in use (admin / flowadmin-demo, viewer / flowadmin-view); ' +
  'never expose this server'

/**
 * The demo's settings file, `examples/demo/settings.json` of the repository this command was
 * built in; its folder is the demo's userDir (example node modules, deployed flows).
 */
function demoSettings(): string {
  const file = fileURLToPath(new URL('../../../examples/demo/settings.json', import.meta.url))
  if (!existsSync(file)) {
    throw new StartupError(
      '--demo runs the demo of the flowadmin repository (examples/demo), which this installation does not include',
      EXIT_USAGE,
    )
  }
  return file
}

class UsageError extends StartupError {
  constructor(message: string) {
    super(`${message}\nRun "flowadmin --help" for usage.`, EXIT_USAGE)
  }
}

function fail(error: unknown): void {
  const lines = messageOf(error).split('\n')
  for (const line of lines) process.stderr.write(`flowadmin: ${line}\n`)
  process.exitCode = error instanceof StartupError ? error.exitCode : EXIT_RUNTIME
}

function parsePort(value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65_535) {
    throw new UsageError(`--port must be a whole number from 0 to 65535, not "${value}"`)
  }
  return Number(value)
}

async function start(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      settings: { type: 'string', short: 's' },
      port: { type: 'string', short: 'p' },
      host: { type: 'string' },
      'user-dir': { type: 'string', short: 'u' },
      'allow-open-admin': { type: 'boolean' },
      demo: { type: 'boolean' },
      pretty: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  })
  if (values.help) {
    process.stdout.write(HELP)
    return
  }
  if (values.host === '') throw new UsageError('--host must not be empty')
  if (values.demo && values.settings !== undefined) {
    throw new UsageError('--demo runs the demo with its own settings; leave out --settings')
  }
  const settingsFile = values.demo ? demoSettings() : values.settings
  if (values.demo) process.stderr.write(`flowadmin: ${DEMO_WARNING}\n`)

  // The one logger of the process: JSON lines on stderr, or pino-pretty's lines for a person.
  const logger = createLogger({ pretty: values.pretty === true || process.stderr.isTTY === true })
  const server = await startServer({
    logger,
    settingsFile,
    port: parsePort(values.port),
    host: values.host,
    userDir: values['user-dir'],
    allowOpenAdmin: values['allow-open-admin'],
  })
  // The start read its files on libuv's thread pool, so the pool's threads exist by now: they yield
  // to the event loop.
  lowerHelperThreadPriority()
  // Before the listening line: whoever reads it may signal at once.
  stopOnSignals(server, logger)
  process.stdout.write(
    `flowadmin listening on ${server.url} (storage: ${server.storage}, auth: ${server.authEnabled ? 'on' : 'off'})\n`,
  )
  if (server.metricsUrl !== null) process.stdout.write(`flowadmin metrics on ${server.metricsUrl}\n`)
}

function stopOnSignals(server: RunningServer, logger: Logger): void {
  let stopping = false
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      // A second signal: the operator does not want to wait for requests in flight.
      logger.warn({ signal }, 'signal again, exiting now')
      process.exit(EXIT_RUNTIME)
    }
    stopping = true
    // close() stops accepting before it returns, so the line below is true when it is read.
    const closed = server.close()
    const seconds = server.settings.shutdownTimeout / 1000
    logger.info(
      { signal, graceSeconds: seconds },
      'no new connections; finishing requests in flight, then stopping',
    )
    closed.then(
      () => {
        logger.info('stopped')
        process.exitCode = 0
        // Anything left (a client that never hangs up) must not keep the process alive.
        setTimeout(() => process.exit(0), 1_000).unref()
      },
      (error: unknown) => {
        fail(error)
        process.exit()
      },
    )
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
  // Users, passwords and permissions from the settings file again; the outcome is logged.
  process.on('SIGHUP', () => {
    if (!stopping) void server.reload()
  })
}

async function migrate(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      settings: { type: 'string', short: 's' },
      'user-dir': { type: 'string', short: 'u' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  })
  if (values.help) {
    process.stdout.write(HELP)
    return
  }
  const line = await migrateStore({ settingsFile: values.settings, userDir: values['user-dir'] })
  process.stdout.write(`flowadmin: ${line}\n`)
}

async function hashPw(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { help: { type: 'boolean', short: 'h' } }, strict: true })
  if (values.help) {
    process.stdout.write(HELP)
    return
  }
  const password = await readPassword()
  process.stdout.write(`${await hashPassword(password)}\n`)
}

async function modules(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      settings: { type: 'string', short: 's' },
      'user-dir': { type: 'string', short: 'u' },
      help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: true,
    strict: true,
  })
  if (values.help) {
    process.stdout.write(HELP)
    return
  }
  const [action, name, ...extra] = positionals
  if (action !== 'forget') throw new UsageError('modules takes one action: forget NAME')
  if (name === undefined || name === '' || extra.length > 0) {
    throw new UsageError('modules forget takes exactly one module name')
  }
  const line = await forgetModule({ settingsFile: values.settings, userDir: values['user-dir'] }, name)
  process.stdout.write(`${line}\n`)
}

/** Runs the command line; sets process.exitCode instead of exiting while work remains. */
export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv
  try {
    if (command === '-h' || command === '--help' || command === 'help') process.stdout.write(HELP)
    else if (command === '-v' || command === '--version') process.stdout.write(`${VERSION}\n`)
    else if (command === 'start') await start(rest)
    else if (command === 'hash-pw') await hashPw(rest)
    else if (command === 'tokens') await tokensCommand(rest)
    else if (command === 'migrate') await migrate(rest)
    else if (command === 'modules') await modules(rest)
    else if (command === undefined) {
      throw new UsageError('a command is needed: start, hash-pw, tokens, modules or migrate')
    } else throw new UsageError(`unknown command "${command}"`)
  } catch (error) {
    // parseArgs reports unknown or malformed options with these codes.
    const code = (error as { code?: string }).code
    fail(code?.startsWith('ERR_PARSE_ARGS') ? new UsageError(messageOf(error)) : error)
  }
}

await main(process.argv.slice(2))
