// `flowadmin tokens`, from the built command, as a person reads it: the result on stdout, one line
// for people on stderr, never a raw audit line; the audit goes to the audit file of the settings.
// Refusals say what to change.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import * as argon2 from 'argon2'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { killAll, requireBuild, runCli } from './cli-process.js'

let userDir: string
let settingsFile: string
let users: object[]

beforeAll(async () => {
  requireBuild()
  const password = await argon2.hash('dave-pw', { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2 })
  users = [{ username: 'dave', password, permissions: 'read' }]
})
beforeEach(async () => {
  userDir = await mkdtemp(path.join(tmpdir(), 'flowadmin-cli-tokens-'))
  settingsFile = path.join(userDir, 'settings.json')
})
afterEach(async () => {
  await killAll()
  await rm(userDir, { recursive: true, force: true })
})
afterAll(killAll)

async function writeSettings(extra: Record<string, unknown> = {}, apiTokens?: object): Promise<void> {
  await writeFile(
    settingsFile,
    JSON.stringify({ adminAuth: { type: 'credentials', users, ...(apiTokens && { apiTokens }) }, ...extra }),
  )
}

async function tokens(args: string[], options: { cwd?: string } = {}) {
  const run = runCli(['tokens', ...args], options)
  const code = await run.exited
  return { code, stdout: run.stdout, stderr: run.stderr }
}

const CREATED =
  /^flowadmin: created API token \S+ "nightly" for dave, scope read, expires \S+; it is shown only now\n$/

describe('flowadmin tokens create and revoke', () => {
  it('print their result for people, without a raw audit line (auditLog "stdout")', async () => {
    await writeSettings()
    const created = await tokens([
      'create',
      '--user',
      'dave',
      '--name',
      'nightly',
      '--settings',
      settingsFile,
    ])
    expect(created.code).toBe(0)
    expect(created.stdout).toMatch(/^fa_[A-Za-z0-9_-]{43}\n$/)
    expect(created.stderr).toMatch(CREATED)
    const revoked = await tokens(['revoke', '--all', '--settings', settingsFile])
    expect(revoked).toEqual({ code: 0, stdout: 'revoked 1 token\n', stderr: '' })
  })

  it('append their audit events to the audit file of the settings, and print nothing more', async () => {
    const audit = path.join(userDir, 'audit.log')
    await writeSettings({ auditLog: { file: audit } })
    const created = await tokens([
      'create',
      '--user',
      'dave',
      '--name',
      'nightly',
      '--settings',
      settingsFile,
    ])
    expect(created.code).toBe(0)
    expect(created.stderr).toMatch(CREATED)
    const revoked = await tokens(['revoke', '--user', 'dave', '--settings', settingsFile])
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
    const listed = await tokens(['list'], { cwd: userDir })
    expect(listed).toEqual({
      code: 2,
      stdout: '',
      stderr:
        "flowadmin: no settings file given: tokens needs the server's settings (adminAuth and the database); add --settings FILE\n" +
        'flowadmin: Run "flowadmin tokens --help" for usage.\n',
    })
  })

  it('a token that never expires names the setting that allows it', async () => {
    await writeSettings()
    const refused = await tokens([
      'create',
      '--user',
      'dave',
      '--name',
      'forever',
      '--expires',
      'never',
      '--settings',
      settingsFile,
    ])
    expect(refused).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'flowadmin: Tokens that never expire are not allowed here: set adminAuth.apiTokens.allowNoExpiry to true to allow them\n',
    })
  })

  it('an unsupported scope lists the valid scopes', async () => {
    await writeSettings()
    const refused = await tokens([
      'create',
      '--user',
      'dave',
      '--name',
      'x',
      '--scope',
      'read,write',
      '--settings',
      settingsFile,
    ])
    expect(refused).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'flowadmin: Unsupported scope: read,write (a scope is permission words separated by spaces: *, read, write, *.read, *.write or <resource>.read|write)\n',
    })
  })
})
