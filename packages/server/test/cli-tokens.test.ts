// `flowadmin tokens`, from the built command, as a person reads it: the result on stdout, one line
// for people on stderr, never a raw audit line; the audit goes to the audit file of the settings.
// Refusals say what to change.
import { readFile, writeFile } from 'node:fs/promises'
import * as path from 'node:path'
import * as argon2 from 'argon2'
import { beforeAll, describe, expect, it } from 'vitest'
import { runCliToEnd, useUserDir } from './cli-process.js'

const dir = useUserDir('cli-tokens')
let users: object[]

beforeAll(async () => {
  const password = await argon2.hash('dave-pw', { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2 })
  users = [{ username: 'dave', password, permissions: 'read' }]
})

async function writeSettings(extra: Record<string, unknown> = {}, apiTokens?: object): Promise<void> {
  await writeFile(
    dir.settingsFile,
    JSON.stringify({ adminAuth: { type: 'credentials', users, ...(apiTokens && { apiTokens }) }, ...extra }),
  )
}

const tokens = (args: string[], options: { cwd?: string } = {}) => runCliToEnd(['tokens', ...args], options)

/** `flowadmin tokens create` of a token named `name` for dave, with the settings file and `options`. */
const createForDave = (name: string, ...options: string[]) =>
  tokens(['create', '--user', 'dave', '--name', name, ...options, '--settings', dir.settingsFile])

const CREATED =
  /^flowadmin: created API token \S+ "nightly" for dave, scope read, audience flowadmin, expires \S+; it is shown only now\n$/

describe('flowadmin tokens create and revoke', () => {
  it('print their result for people, without a raw audit line (auditLog "stdout")', async () => {
    await writeSettings()
    const created = await createForDave('nightly')
    expect(created.code).toBe(0)
    expect(created.stdout).toMatch(/^fa_[A-Za-z0-9_-]{43}\n$/)
    expect(created.stderr).toMatch(CREATED)
    const revoked = await tokens(['revoke', '--all', '--settings', dir.settingsFile])
    expect(revoked).toEqual({ code: 0, stdout: 'revoked 1 token\n', stderr: '' })
  })

  it('append their audit events to the audit file of the settings, and print nothing more', async () => {
    const audit = path.join(dir.userDir, 'audit.log')
    await writeSettings({ auditLog: { file: audit } })
    const created = await createForDave('nightly')
    expect(created.code).toBe(0)
    expect(created.stderr).toMatch(CREATED)
    const revoked = await tokens(['revoke', '--user', 'dave', '--settings', dir.settingsFile])
    expect(revoked).toEqual({ code: 0, stdout: 'revoked 1 token\n', stderr: '' })
    const lines = (await readFile(audit, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(lines.map((line) => line.event)).toEqual(['token.created', 'tokens.revoked_all'])
    expect(lines[0]).toMatchObject({ owner: 'dave', name: 'nightly' })
  })
})

describe('flowadmin tokens, refusing', () => {
  it('without --settings, says that the settings file is missing and how to give it', async () => {
    // In a folder without settings, as a newcomer would run it first.
    const listed = await tokens(['list'], { cwd: dir.userDir })
    expect(listed).toEqual({
      code: 2,
      stdout: '',
      stderr:
        "flowadmin: no settings file given: tokens needs the server's settings (adminAuth and the database); add --settings FILE\n" +
        'flowadmin: Run "flowadmin tokens --help" for usage.\n',
    })
  })

  it.each<[title: string, name: string, options: string[], stderr: string]>([
    [
      'a token that never expires names the setting that allows it',
      'forever',
      ['--expires', 'never'],
      'flowadmin: Tokens that never expire are not allowed here: set adminAuth.apiTokens.allowNoExpiry to true to allow them\n',
    ],
    [
      'an unsupported scope lists the valid scopes',
      'x',
      ['--scope', 'read,write'],
      'flowadmin: Unsupported scope: read,write (a scope is permission words separated by spaces: *, read, write, *.read, *.write or <resource>.read|write, or role:<name>; each may end in @flowadmin or @<group>)\n',
    ],
  ])('%s', async (_, name, options, stderr) => {
    await writeSettings()
    expect(await createForDave(name, ...options)).toEqual({ code: 2, stdout: '', stderr })
  })
})
