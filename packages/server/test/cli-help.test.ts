// Help and usage of the built `flowadmin` command: each command explains itself (`<command>
// --help`), the global help lists the commands, and a command that needs an action and gets none
// is a usage error (exit 2) naming the actions there are.
import { readFile } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { killAll, requireBuild, runCliToEnd } from './cli-process.js'

beforeAll(() => requireBuild())
afterAll(killAll)

const run = (...args: string[]) => runCliToEnd(args)

/** The option lines of a help text: those starting with a dash after the indentation. */
const optionLines = (help: string) => help.split('\n').filter((line) => /^\s+-/.test(line))

describe('flowadmin --help', () => {
  it('lists every command and says how to get the help of one', async () => {
    const global = await run('--help')
    expect(global).toMatchObject({ code: 0, stderr: '' })
    expect(global.stdout).toMatch(/^Usage: flowadmin <command> \[options\]\n/)
    for (const command of ['start', 'hash-pw', 'secret', 'tokens', 'mfa', 'migrate', 'modules']) {
      expect(global.stdout).toMatch(new RegExp(`^  ${command} `, 'm'))
    }
    expect(global.stdout).toContain('flowadmin <command> --help')
    expect(global.stdout).toMatch(/Exit codes: 0 success, 1 run-time failure/)
    // `help` and `-h` say the same.
    expect((await run('help')).stdout).toBe(global.stdout)
    expect((await run('-h')).stdout).toBe(global.stdout)
  })
})

describe('flowadmin <command> --help', () => {
  const cases: Array<[command: string, options: string[], exitCodes: RegExp]> = [
    [
      'start',
      [
        '--settings FILE',
        '--port N',
        '--host H',
        '--user-dir DIR',
        '--allow-open-admin',
        '--demo',
        '--pretty',
      ],
      /Exit codes: 0 stopped on SIGINT or SIGTERM, 1 run-time failure[\s\S]*2 usage or settings error/,
    ],
    [
      'hash-pw',
      [],
      /Exit codes: 0 success, 2 empty password or passwords that differ, 130 interrupted prompt/,
    ],
    ['secret', ['--id ID'], /Exit codes: 0 success, 2 usage error/],
    [
      'migrate',
      ['--settings FILE', '--user-dir DIR'],
      /Exit codes: 0 success, 1 [\s\S]*2 usage or settings error/,
    ],
    [
      'modules',
      ['--settings FILE', '--user-dir DIR'],
      /Exit codes: 0 success, 1 [\s\S]*2 usage or settings error/,
    ],
    [
      'tokens',
      [
        '--settings FILE',
        '--user-dir DIR',
        '--user U',
        '--name N',
        '--scope',
        '--expires',
        '--audience ID',
        '--json',
        '--all',
      ],
      /Exit codes: 0 success, 1 [\s\S]*2 usage or settings error/,
    ],
    [
      'mfa',
      ['--settings FILE', '--user-dir DIR'],
      /Exit codes: 0 removed, 1 USER has no second factor[\s\S]*2 usage or settings error/,
    ],
  ]

  it.each(cases)(
    '%s --help prints the usage of that command, its options and exit codes',
    async (command, options, exitCodes) => {
      const help = await run(command, '--help')
      expect(help).toMatchObject({ code: 0, stderr: '' })
      expect(help.stdout).toMatch(new RegExp(`^Usage: flowadmin ${command}\\b`))
      // Not the global help.
      expect(help.stdout).not.toContain('Commands:')
      for (const option of options) expect(help.stdout).toContain(option)
      expect(help.stdout).toMatch(/-h, --help +show this help/)
      expect(help.stdout).toMatch(exitCodes)
      // Options of other commands are not listed.
      if (command !== 'start') expect(help.stdout).not.toContain('--allow-open-admin')
      if (command !== 'tokens') expect(help.stdout).not.toContain('--expires')
      expect((await run(command, '-h')).stdout).toBe(help.stdout)
    },
  )

  it('describes an option shared by several commands in the same words', async () => {
    const lines = await Promise.all(
      ['start', 'migrate', 'modules', 'tokens', 'mfa'].map(async (command) =>
        optionLines((await run(command, '--help')).stdout),
      ),
    )
    for (const option of ['--settings FILE', '--user-dir DIR']) {
      const described = lines.map((help) => help.find((line) => line.includes(option)))
      expect(new Set(described).size, option).toBe(1)
    }
  })

  it('modules forget --help and tokens create --help print the help of their command', async () => {
    expect((await run('modules', 'forget', '--help')).stdout).toBe((await run('modules', '--help')).stdout)
    expect((await run('tokens', 'create', '--help')).stdout).toBe((await run('tokens', '--help')).stdout)
  })
})

describe('docs/cli.md', () => {
  it('gives tokens create as its usage line does, and --expires as its help does', async () => {
    const docs = await readFile(new URL('../../../docs/cli.md', import.meta.url), 'utf8')
    const help = (await run('tokens', '--help')).stdout
    const usage = /flowadmin tokens (create .*) --settings FILE$/m.exec(help)?.[1] ?? ''
    expect(usage).toContain('--expires TIME')
    expect(docs).toContain(`| \`tokens ${usage}\``)
    const expires = /^\s+--expires TIME\s+create: (.*)$/m.exec(help)?.[1] ?? ''
    expect(expires).toMatch(/or never$/)
    expect(docs).toContain(`TIME: ${expires}.`)
  })
})

describe('a command without its action', () => {
  it('tokens and modules exit 2 and name the actions there are', async () => {
    expect(await run('tokens')).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'flowadmin: tokens needs an action: list, revoke or create\n' +
        'flowadmin: Run "flowadmin tokens --help" for usage.\n',
    })
    expect(await run('modules')).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'flowadmin: modules needs an action: forget NAME\n' +
        'flowadmin: Run "flowadmin modules --help" for usage.\n',
    })
  })

  it('an unknown action is a usage error that names the actions', async () => {
    expect(await run('tokens', 'show')).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'flowadmin: unknown tokens action "show": the actions are list, revoke and create\n' +
        'flowadmin: Run "flowadmin tokens --help" for usage.\n',
    })
    expect(await run('modules', 'remove', 'x')).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'flowadmin: unknown modules action "remove": the action is forget NAME\n' +
        'flowadmin: Run "flowadmin modules --help" for usage.\n',
    })
  })

  it('no command at all is a usage error too', async () => {
    expect(await run()).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'flowadmin: a command is needed: start, hash-pw, secret, tokens, instances, mfa, migrate, modules or import-node-red\n' +
        'flowadmin: Run "flowadmin --help" for usage.\n',
    })
  })
})

describe('docs/cli.md', () => {
  it('shows the help of flowadmin secret as the command prints it', async () => {
    const docs = await readFile(new URL('../../../docs/cli.md', import.meta.url), 'utf8')
    const { stdout } = await run('secret', '--help')
    expect(docs).toContain(`\n\`\`\`\n${stdout}\`\`\`\n`)
    expect(docs).toContain(`\n${stdout.split('\n')[0]?.replace('Usage: ', '')}\n`)
  })
})
