import { parseArgs } from 'node:util'
import { messageOf } from '@flowadmin/core'
import { EXIT_USAGE, StartupError } from '../errors.js'

/** One option of a command: its one-letter form, the value it takes (none: a switch), what it does. */
export interface OptionSpec {
  short?: string
  /** The value's name in the help, e.g. `FILE`; absent for a switch. */
  value?: string
  /** What it does; a `\n` starts a line of its own, indented under the first. */
  text: string
}

/**
 * A command's options by name: the one source of both what `parseArgs` accepts and what the help
 * says. Declare tables with `satisfies`, so each option's `value` keeps telling a string from a
 * switch.
 */
export type OptionTable = Record<string, OptionSpec>

/** A command: its usage lines, what it does, its options and its exit codes. */
export interface CommandSpec<T extends OptionTable = OptionTable> {
  name: string
  /** What follows `flowadmin <name>` in the usage, one line each. */
  usage: string[]
  /** One line for the list of commands. */
  summary: string
  /** Paragraphs after the summary: actions, how input is read, and so on. */
  details?: string
  options: T
  /** The `Exit codes:` paragraph. */
  exitCodes: string
}

export const SETTINGS_OPTION = {
  short: 's',
  value: 'FILE',
  text: 'settings file (.json, or .js/.mjs exporting the settings object)',
} satisfies OptionSpec

export const USER_DIR_OPTION = {
  short: 'u',
  value: 'DIR',
  text: 'folder with node_modules/, flows.json and flowadmin.db (overrides userDir)',
} satisfies OptionSpec

export const HELP_OPTION = { short: 'h', text: 'show this help' } satisfies OptionSpec

/** Where the option descriptions start in a help text. */
const TEXT_COLUMN = 26

/** `-s, --settings FILE`, or `    --host H` for an option without a one-letter form. */
function flagOf(name: string, option: OptionSpec): string {
  const long = `--${name}${option.value === undefined ? '' : ` ${option.value}`}`
  return option.short === undefined ? `    ${long}` : `-${option.short}, ${long}`
}

/** The option lines of a help text, descriptions aligned. */
export function optionLines(options: OptionTable): string {
  return Object.entries(options)
    .map(([name, option]) => {
      const flag = `  ${flagOf(name, option)}`
      const [first, ...rest] = option.text.split('\n')
      const lead =
        flag.length < TEXT_COLUMN ? flag.padEnd(TEXT_COLUMN) : `${flag}\n${' '.repeat(TEXT_COLUMN)}`
      return [`${lead}${first}`, ...rest.map((line) => `${' '.repeat(TEXT_COLUMN)}${line}`)].join('\n')
    })
    .join('\n')
}

/** The help of one command, printed by `flowadmin <command> --help`. */
export function helpOf(command: CommandSpec): string {
  const usage = command.usage.map(
    (line, i) =>
      `${i === 0 ? 'Usage: ' : '       '}flowadmin ${command.name}${line === '' ? '' : ` ${line}`}`,
  )
  const details = command.details === undefined ? '' : `${command.details}\n\n`
  return `${usage.join('\n')}\n\n${command.summary}.\n\n${details}Options:\n${optionLines(command.options)}\n\n${command.exitCodes}\n`
}

/**
 * A mistake on the command line: the message, then where to read the usage (`flowadmin --help`,
 * or the command's own help). Exits with 2.
 */
export class UsageError extends StartupError {
  constructor(message: string, command?: string) {
    super(
      `${message}\nRun "flowadmin ${command === undefined ? '' : `${command} `}--help" for usage.`,
      EXIT_USAGE,
    )
  }
}

type ArgsOf<T extends OptionTable> = {
  [K in keyof T]: T[K] extends { value: string }
    ? { type: 'string'; short?: string }
    : { type: 'boolean'; short?: string }
}

/** The `parseArgs` options of a table. */
function argsOf<T extends OptionTable>(options: T): ArgsOf<T> {
  const args: Record<string, { type: 'string' | 'boolean'; short?: string }> = {}
  for (const [name, option] of Object.entries(options)) {
    args[name] = {
      type: option.value === undefined ? 'boolean' : 'string',
      ...(option.short !== undefined && { short: option.short }),
    }
  }
  return args as ArgsOf<T>
}

/** What `parseArgs` makes of a command's arguments: its options' values and the positionals. */
export type ParsedCommand<T extends OptionTable> = ReturnType<
  typeof parseArgs<{ options: ArgsOf<T>; strict: true; allowPositionals: boolean }>
>

/**
 * The options and positionals of `args` by the command's table. An unknown or malformed option is
 * a UsageError pointing at the command's help.
 */
export function parseCommand<T extends OptionTable>(
  command: CommandSpec<T>,
  args: string[],
  allowPositionals = false,
): ParsedCommand<T> {
  try {
    return parseArgs({ args, options: argsOf(command.options), strict: true, allowPositionals })
  } catch (error) {
    // parseArgs reports unknown or malformed options with these codes.
    if ((error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      throw new UsageError(messageOf(error), command.name)
    }
    throw error
  }
}
