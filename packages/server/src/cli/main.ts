// The `flowadmin` command: reads the command's name and runs it. Each command's code (and what it
// needs: the server, the store, argon2) is loaded when that command runs, so `flowadmin --help`
// or `flowadmin secret` loads none of the server.
import { VERSION } from '../package-files.js'
import { COMMANDS } from './commands.js'
import { fail } from './fail.js'
import { HELP_OPTION, helpOf, optionLines, UsageError } from './usage.js'

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

type Command = (args: string[]) => Promise<void>

/** Each command's code by its name, loaded when it runs. */
const RUN: Record<string, () => Promise<Command>> = {
  start: async () => (await import('./start.js')).startCommand,
  'hash-pw': async () => (await import('./hash-pw.js')).hashPwCommand,
  secret: async () => (await import('./secret.js')).secretCommand,
  tokens: async () => (await import('./tokens.js')).tokensCommand,
  instances: async () => (await import('./instances.js')).instancesCommand,
  mfa: async () => (await import('./mfa.js')).mfaCommand,
  migrate: async () => (await import('./migrate.js')).migrateCommand,
  modules: async () => (await import('./modules.js')).modulesCommand,
  'import-node-red': async () => (await import('./import-node-red.js')).importNodeRedCommand,
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
    else if (command !== undefined && Object.hasOwn(RUN, command)) {
      const run = await (RUN[command] as () => Promise<Command>)()
      await run(rest)
    } else if (command === undefined) {
      // Derived from the commands, so a new one is named here too.
      const names = COMMANDS.map((spec) => spec.name)
      throw new UsageError(`a command is needed: ${names.slice(0, -1).join(', ')} or ${names.at(-1)}`)
    } else throw new UsageError(`unknown command "${command}"`)
  } catch (error) {
    fail(error)
  }
}

await main(process.argv.slice(2))
