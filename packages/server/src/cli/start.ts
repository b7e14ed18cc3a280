// `flowadmin start`: starts the server, says where it listens, and stops it on a signal.
import { existsSync } from 'node:fs'
import type { RunningServer } from '../compose/options.js'
import { startServer } from '../compose/start.js'
import { EXIT_RUNTIME, EXIT_USAGE, StartupError } from '../errors.js'
import { createLogger, type Logger } from '../log.js'
import { DEMO_SETTINGS } from '../package-files.js'
import { START } from './commands.js'
import { fail } from './fail.js'
import { lowerHelperThreadPriority } from './process-tuning.js'
import { helpOf, parseCommand, UsageError } from './usage.js'

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

function parsePort(value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65_535) {
    throw new UsageError(`--port must be a whole number from 0 to 65535, not "${value}"`, START.name)
  }
  return Number(value)
}

/** `flowadmin start`: the server, until a signal stops it. */
export async function startCommand(args: string[]): Promise<void> {
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
    // The demo's second-factor key is the examples' own, and the warning above says so.
    allowExampleMfaKey: values.demo === true,
  })
  // The start read its files on libuv's thread pool, so the pool's threads exist by now: they yield
  // to the event loop from before the listening line, and go idle (a process the start need not
  // wait for) after it.
  const idleHelpers = lowerHelperThreadPriority()
  // Before the listening line: whoever reads it may signal at once.
  stopOnSignals(server, logger)
  process.stdout.write(
    `flowadmin listening on ${server.url} (storage: ${server.storage}, auth: ${server.authEnabled ? 'on' : 'off'})\n`,
  )
  if (server.metricsUrl !== null) process.stdout.write(`flowadmin metrics on ${server.metricsUrl}\n`)
  idleHelpers()
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
