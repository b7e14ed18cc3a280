import { existsSync } from 'node:fs'
import { messageOf } from '@flowadmin/core'
import { hashPassword } from '../adapters/argon2.js'
import type { RunningServer } from '../compose/options.js'
import { startServer } from '../compose/start.js'
import { migrateStore } from '../compose/stores.js'
import { EXIT_RUNTIME, EXIT_USAGE, StartupError } from '../errors.js'
import { PortInUseError } from '../http/listen.js'
import { createLogger, type Logger } from '../log.js'
import { DEMO_SETTINGS, VERSION } from '../package-files.js'
import { IMPORT_NODE_RED, importNodeRedCommand } from './import-node-red.js'
import { MFA, mfaCommand } from './mfa.js'
import { forgetModule } from './modules.js'
import { readPassword } from './password-input.js'
import { lowerHelperThreadPriority } from './process-tuning.js'
import { SECRET, secretCommand } from './secret.js'
import { TOKENS, tokensCommand } from './tokens.js'
import {
  type CommandSpec,
  HELP_OPTION,
  helpOf,
  optionLines,
  parseCommand,
  SETTINGS_OPTION,
  USER_DIR_OPTION,
  UsageError,
} from './usage.js'

/** The exit codes of a command that fails at run time when its database cannot be used. */
const STORE_EXIT_CODES =
  'Exit codes: 0 success, 1 run-time failure (unreadable database or file, PostgreSQL unreachable\n' +
  'or refusing), 2 usage or settings error.'

const START = {
  name: 'start',
  usage: ['[options]'],
  summary: 'Start the admin API server',
  options: {
    settings: SETTINGS_OPTION,
    port: { short: 'p', value: 'N', text: 'port to listen on (overrides uiPort; 0 picks a free port)' },
    host: { value: 'H', text: 'address to listen on (overrides uiHost)' },
    'user-dir': USER_DIR_OPTION,
    'allow-open-admin': { text: 'allow listening on a non-loopback address without adminAuth' },
    demo: {
      text:
        "run the demo: the repository's examples/demo settings and userDir\n" +
        '(users admin / flowadmin-demo and viewer / flowadmin-view); no --settings',
    },
    pretty: {
      text: 'write the log for people to read, not JSON lines (the default when\nstandard error is a terminal)',
    },
    help: HELP_OPTION,
  },
  exitCodes:
    'Exit codes: 0 stopped on SIGINT or SIGTERM, 1 run-time failure (port in use, unreadable\n' +
    'database or file, PostgreSQL unreachable or refusing), 2 usage or settings error.',
} satisfies CommandSpec

const HASH_PW = {
  name: 'hash-pw',
  usage: [''],
  summary: 'Read a password and print its argon2id hash, for adminAuth.users[].password',
  details: 'hash-pw reads the first line of standard input when it is piped, or prompts twice without echo.',
  options: { help: HELP_OPTION },
  exitCodes: 'Exit codes: 0 success, 2 empty password or passwords that differ, 130 interrupted prompt.',
} satisfies CommandSpec

const MIGRATE = {
  name: 'migrate',
  usage: ['[options]'],
  summary: "Apply the store's schema migrations and exit (start applies them too)",
  details:
    'With "storage": "postgres", instances starting at once, or a migrate beside them, take turns\n' +
    'under an advisory lock.',
  options: { settings: SETTINGS_OPTION, 'user-dir': USER_DIR_OPTION, help: HELP_OPTION },
  exitCodes: STORE_EXIT_CODES,
} satisfies CommandSpec

const MODULES = {
  name: 'modules',
  usage: ['forget NAME [options]'],
  summary: 'Drop the stored state (enabled flags) of a module that is gone for good',
  details:
    'The store is the one of the settings (SQLite in userDir, or PostgreSQL); it may run while the\n' +
    'server runs. A forgotten module that is still installed starts enabled at the next start.',
  options: { settings: SETTINGS_OPTION, 'user-dir': USER_DIR_OPTION, help: HELP_OPTION },
  exitCodes: STORE_EXIT_CODES,
} satisfies CommandSpec

const COMMANDS: CommandSpec[] = [START, HASH_PW, SECRET, TOKENS, MFA, MIGRATE, MODULES, IMPORT_NODE_RED]

/** The column the summaries of the list of commands start at: after the longest name. */
const NAME_WIDTH = Math.max(...COMMANDS.map((command) => command.name.length))

const HELP = `Usage: flowadmin <command> [options]

Commands:
${COMMANDS.map((command) => `  ${command.name.padEnd(NAME_WIDTH)}  ${command.summary}`).join('\n')}

Run "flowadmin <command> --help" for the options of a command.

Options:
${optionLines({ help: HELP_OPTION, version: { short: 'v', text: 'show the version' } })}

Exit codes: 0 success, 1 run-time failure (port in use, unreadable database or file,
PostgreSQL unreachable or refusing), 2 usage or settings error, 130 interrupted prompt.
`

const DEMO_WARNING =
  'warning: demo credentials are in use (admin / flowadmin-demo, viewer / flowadmin-view, a published second-factor key); ' +
  'never expose this server'

/**
 * The demo's settings file, `examples/demo/settings.json` of the repository this command was
 * built in; its folder is the demo's userDir (example node modules, deployed flows).
 */
function demoSettings(): string {
  const file = DEMO_SETTINGS
  if (!existsSync(file)) {
    throw new StartupError(
      '--demo runs the demo of the flowadmin repository (examples/demo), which this installation does not include',
      EXIT_USAGE,
    )
  }
  return file
}

/** Where PostgreSQL's address comes from, in the order the server looks. */
const POSTGRES_ADDRESS_SOURCES =
  'its address comes from "postgres.url" in the settings, else the DATABASE_URL variable, ' +
  'else the PG* variables (PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD)'

/**
 * What to do about a failure, when the command knows better than the message: another port for
 * one in use, where PostgreSQL's address comes from when it cannot be used. Never the address
 * itself, which may hold a password.
 */
function hintOf(error: unknown): string | null {
  if (error instanceof PortInUseError) {
    return `port ${error.port} is taken: pick another with --port N, or "uiPort" in the settings`
  }
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    // The PostgreSQL store's error, told by its name: its package is loaded only when used.
    if (cause.name !== 'PostgresStoreError') continue
    const { code, target } = cause as Error & { code?: string; target?: string }
    if (code === 'unreachable')
      return `is PostgreSQL running at ${target?.replace(/\/.*$/, '')}? ${POSTGRES_ADDRESS_SOURCES}`
    if (code === 'refused')
      return `check the user, password and database name of the address: ${POSTGRES_ADDRESS_SOURCES}`
  }
  return null
}

function fail(error: unknown): void {
  const hint = hintOf(error)
  const lines = [...messageOf(error).split('\n'), ...(hint === null ? [] : [hint])]
  for (const line of lines) process.stderr.write(`flowadmin: ${line}\n`)
  process.exitCode = error instanceof StartupError ? error.exitCode : EXIT_RUNTIME
}

function parsePort(value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65_535) {
    throw new UsageError(`--port must be a whole number from 0 to 65535, not "${value}"`, START.name)
  }
  return Number(value)
}

async function start(args: string[]): Promise<void> {
  const { values } = parseCommand(START, args)
  if (values.help) {
    process.stdout.write(helpOf(START))
    return
  }
  if (values.host === '') throw new UsageError('--host must not be empty', START.name)
  if (values.demo && values.settings !== undefined) {
    throw new UsageError('--demo runs the demo with its own settings; leave out --settings', START.name)
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
  const { values } = parseCommand(MIGRATE, args)
  if (values.help) {
    process.stdout.write(helpOf(MIGRATE))
    return
  }
  const line = await migrateStore({ settingsFile: values.settings, userDir: values['user-dir'] })
  process.stdout.write(`flowadmin: ${line}\n`)
}

async function hashPw(args: string[]): Promise<void> {
  const { values } = parseCommand(HASH_PW, args)
  if (values.help) {
    process.stdout.write(helpOf(HASH_PW))
    return
  }
  const password = await readPassword()
  process.stdout.write(`${await hashPassword(password)}\n`)
}

async function modules(args: string[]): Promise<void> {
  const { values, positionals } = parseCommand(MODULES, args, true)
  if (values.help) {
    process.stdout.write(helpOf(MODULES))
    return
  }
  const [action, name, ...extra] = positionals
  if (action === undefined) throw new UsageError('modules needs an action: forget NAME', MODULES.name)
  if (action !== 'forget') {
    throw new UsageError(`unknown modules action "${action}": the action is forget NAME`, MODULES.name)
  }
  if (name === undefined || name === '' || extra.length > 0) {
    throw new UsageError('modules forget takes exactly one module name', MODULES.name)
  }
  const line = await forgetModule({ settingsFile: values.settings, userDir: values['user-dir'] }, name)
  process.stdout.write(`${line}\n`)
}

/** Runs the command line; sets process.exitCode instead of exiting while work remains. */
export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv
  try {
    if (command === '-h' || command === '--help' || command === 'help') {
      // `flowadmin help start` is `flowadmin start --help`.
      const named = COMMANDS.find((spec) => spec.name === rest[0])
      process.stdout.write(named === undefined ? HELP : helpOf(named))
    } else if (command === '-v' || command === '--version') process.stdout.write(`${VERSION}\n`)
    else if (command === 'start') await start(rest)
    else if (command === 'hash-pw') await hashPw(rest)
    else if (command === 'secret') await secretCommand(rest)
    else if (command === 'tokens') await tokensCommand(rest)
    else if (command === 'mfa') await mfaCommand(rest)
    else if (command === 'migrate') await migrate(rest)
    else if (command === 'modules') await modules(rest)
    else if (command === 'import-node-red') await importNodeRedCommand(rest)
    else if (command === undefined) {
      // Derived from the commands, so a new one is named here too.
      const names = COMMANDS.map((spec) => spec.name)
      throw new UsageError(`a command is needed: ${names.slice(0, -1).join(', ')} or ${names.at(-1)}`)
    } else throw new UsageError(`unknown command "${command}"`)
  } catch (error) {
    fail(error)
  }
}

await main(process.argv.slice(2))
