// Tokens that follow their user, over a real socket with the built `flowadmin` command, a SQLite
// file and argon2 hashes: a removed user, a downgraded user and a changed password, after a
// restart and after SIGHUP; the session inventory on the command line while the server runs.
import { writeFile } from 'node:fs/promises'
import * as path from 'node:path'
import { createSqliteStores } from '@flowadmin/adapter-sqlite'
import { webDigest } from '@flowadmin/core'
import * as argon2 from 'argon2'
import { beforeAll, describe, expect, it } from 'vitest'
import { type CliRun, logEntries, runCliToEnd, useUserDir, writeSettings } from './cli-process.js'
import { logInAs } from './password-grant.js'

const dir = useUserDir('e2e-tokens')
const PASSWORDS = ['alice-pw', 'bob-pw', 'carol-pw', 'dave-pw', 'carol-new-pw', 'fleet-secret']
const hashes = new Map<string, string>()

beforeAll(async () => {
  for (const password of PASSWORDS) {
    hashes.set(
      password,
      await argon2.hash(password, { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 }),
    )
  }
})

type Team = Array<[username: string, password: string, permissions: string]>

/** alice, bob and carol with `*`, dave with `read`. */
const BEFORE: Team = [
  ['alice', 'alice-pw', '*'],
  ['bob', 'bob-pw', '*'],
  ['carol', 'carol-pw', '*'],
  ['dave', 'dave-pw', 'read'],
]
/** alice removed, bob downgraded to `read`, carol's password changed; dave as he was. */
const AFTER: Team = [
  ['bob', 'bob-pw', 'read'],
  ['carol', 'carol-new-pw', '*'],
  ['dave', 'dave-pw', 'read'],
]

async function writeTeam(team: Team, extra: Record<string, unknown> = {}): Promise<void> {
  const users = team.map(([username, password, permissions]) => ({
    username,
    password: hashes.get(password),
    permissions,
  }))
  await writeSettings(dir.settingsFile, {
    userDir: dir.userDir,
    adminAuth: { type: 'credentials', users, ...extra },
  })
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

async function login(url: string, username: string, password: string, scope = '*'): Promise<string> {
  const res = await logInAs(url, username, password, scope)
  expect(res.status).toBe(200)
  return ((await res.json()) as { access_token: string }).access_token
}

const start = () => dir.start()
const get = (url: string, route: string, token: string) => fetch(`${url}${route}`, { headers: bearer(token) })
const disable = (url: string, token: string) =>
  fetch(`${url}/nodes/no-such-module`, {
    method: 'PUT',
    headers: { ...bearer(token), 'content-type': 'application/json' },
    body: '{"enabled":false}',
  })

/** What a token may do now: the status of a read, and of a write (404: allowed, no such module). */
async function rights(url: string, token: string) {
  const read = await get(url, '/settings', token)
  const write = await disable(url, token)
  return { read: read.status, write: write.status, challenge: write.headers.get('www-authenticate') }
}
const FULL = { read: 200, write: 404, challenge: null }
const READ_ONLY = { read: 200, write: 401, challenge: 'Bearer realm="flowadmin", error="insufficient_scope"' }
const NONE = { read: 401, write: 401, challenge: 'Bearer realm="flowadmin", error="invalid_token"' }

/** Runs `flowadmin tokens ...` to the end; returns its exit code and output. */
const tokensCli = (...args: string[]) => runCliToEnd(['tokens', ...args, '--settings', dir.settingsFile])

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 25))
  if (!condition()) throw new Error(`timed out waiting for ${what}`)
}

async function stop(run: CliRun): Promise<void> {
  run.child.kill('SIGTERM')
  expect(await run.exited).toBe(0)
}

interface Tokens {
  alice: string
  bob: string
  carol: string
  carolApi: string
  dave: string
}

/** Logs the team in and gives carol an API token; every one works with its full rights. */
async function signIn(url: string): Promise<Tokens> {
  const tokens = {
    alice: await login(url, 'alice', 'alice-pw'),
    bob: await login(url, 'bob', 'bob-pw'),
    carol: await login(url, 'carol', 'carol-pw'),
    dave: await login(url, 'dave', 'dave-pw', 'read'),
  }
  const created = await fetch(`${url}/auth/tokens`, {
    method: 'POST',
    headers: { ...bearer(tokens.carol), 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'carol ci' }),
  })
  expect(created.status).toBe(201)
  const carolApi = ((await created.json()) as { token: string }).token
  for (const token of [tokens.alice, tokens.bob, tokens.carol, carolApi])
    expect(await rights(url, token)).toEqual(FULL)
  expect(await rights(url, tokens.dave)).toEqual(READ_ONLY)
  return { ...tokens, carolApi }
}

/** After the change: alice's and carol's tokens refused, bob's acts as `read`, dave's works. */
async function expectChanged(url: string, tokens: Tokens): Promise<void> {
  expect(await rights(url, tokens.alice)).toEqual(NONE)
  expect(await rights(url, tokens.bob)).toEqual(READ_ONLY)
  expect(await rights(url, tokens.carol)).toEqual(NONE)
  expect(await rights(url, tokens.carolApi)).toEqual(NONE)
  expect(await rights(url, tokens.dave)).toEqual(READ_ONLY)
  // carol's new password works; bob's new login gets `read` only.
  expect(await rights(url, await login(url, 'carol', 'carol-new-pw'))).toEqual(FULL)
  expect((await logInAs(url, 'alice', 'alice-pw')).status).toBe(401)
}

const auditOf = (run: CliRun, event: string) =>
  run.stdout
    .split('\n')
    .filter((line) => line.includes(`"event":"${event}"`))
    .map((line) => JSON.parse(line) as Record<string, unknown>)

describe('tokens follow their user', () => {
  it('after a restart: removed, downgraded and re-passworded users lose what they lost; others keep working', async () => {
    await writeTeam(BEFORE)
    const first = await start()
    const tokens = await signIn(first.url)
    await stop(first.run)

    await writeTeam(AFTER)
    const second = await start()
    // alice's token was deleted at start, with one audit event naming the count.
    expect(auditOf(second.run, 'tokens.revoked_all')).toEqual([
      expect.objectContaining({ owner: 'alice', count: 1, reason: 'user_removed' }),
    ])
    await expectChanged(second.url, tokens)
    expect(auditOf(second.run, 'token.invalidated').map((event) => [event.owner, event.reason])).toEqual([
      ['carol', 'credential_changed'],
      ['carol', 'credential_changed'],
    ])
    const listed = await tokensCli('list', '--json')
    expect(listed.code).toBe(0)
    const users = (JSON.parse(listed.stdout) as Array<{ user: string }>).map((token) => token.user).sort()
    expect(users).toEqual(['bob', 'carol', 'dave'])
  })

  it('after SIGHUP, from the next request; an invalid file is refused, naming the field, and the running settings stay', async () => {
    await writeTeam(BEFORE)
    const { run, url } = await start()
    const tokens = await signIn(url)

    await writeTeam(AFTER, { sessionExpiryTime: 60 })
    run.child.kill('SIGHUP')
    await until(() => run.stderr.includes('settings reloaded'), 'the reload')
    expect(logEntries(run.stderr)).toEqual(
      expect.arrayContaining([
        { level: 'info', time: expect.any(String), users: 3, msg: 'settings reloaded' },
        {
          level: 'warn',
          time: expect.any(String),
          settings: ['adminAuth.sessionExpiryTime'],
          msg: 'these settings change only after a restart',
        },
      ]),
    )
    await expectChanged(url, tokens)

    await writeFile(
      dir.settingsFile,
      JSON.stringify({
        userDir: dir.userDir,
        adminAuth: {
          type: 'credentials',
          users: [{ username: 'dave', password: 'plain', permissions: 'read' }],
        },
      }),
    )
    run.child.kill('SIGHUP')
    await until(() => run.stderr.includes('settings not reloaded'), 'the refusal')
    expect(logEntries(run.stderr)).toContainEqual({
      level: 'error',
      time: expect.any(String),
      reason: expect.stringMatching(/adminAuth\.users\[0\]\.password: must be an argon2 hash/),
      msg: 'settings not reloaded, the running settings stay',
    })
    expect(await rights(url, tokens.bob)).toEqual(READ_ONLY)
    expect(await rights(url, tokens.dave)).toEqual(READ_ONLY)
    expect(await rights(url, await login(url, 'carol', 'carol-new-pw'))).toEqual(FULL)
    expect(run.child.exitCode).toBeNull()
  })
})

describe('flowadmin tokens, on the database while the server runs', () => {
  it('lists, revokes by id and by user, and creates an API token the server accepts', async () => {
    await writeTeam(BEFORE, { resourceServers: [{ id: 'fleet', secret: hashes.get('fleet-secret') }] })
    const { run, url } = await start()
    const alice = await login(url, 'alice', 'alice-pw')
    const bob1 = await login(url, 'bob', 'bob-pw')
    const bob2 = await login(url, 'bob', 'bob-pw', 'read')
    const dave = await login(url, 'dave', 'dave-pw', 'read')

    const table = await tokensCli('list')
    expect(table.code).toBe(0)
    const lines = table.stdout.trim().split('\n')
    expect(lines[0]).toMatch(
      /^ID +USER +KIND +NAME +CLIENT +AUDIENCE +SCOPE +CREATED +EXPIRES +LAST USED +FROM +SIGN-IN$/,
    )
    for (const line of lines.slice(1)) expect(line).toMatch(/ password$/)
    expect(lines.slice(1).map((line) => line.split(/ +/).slice(1, 6))).toEqual([
      ['alice', 'session', '-', 'service-admin', 'flowadmin'],
      ['bob', 'session', '-', 'service-admin', 'flowadmin'],
      ['bob', 'session', '-', 'service-admin', 'flowadmin'],
      ['dave', 'session', '-', 'service-admin', 'flowadmin'],
    ])
    for (const token of [alice, bob1, bob2, dave]) expect(table.stdout).not.toContain(token)

    const aliceId = (
      JSON.parse((await tokensCli('list', '--user', 'alice', '--json')).stdout) as Array<{ id: string }>
    )[0]?.id
    const revoked = await tokensCli('revoke', aliceId as string)
    // A refusal names its reason on stderr: shown with the failure.
    expect(revoked, revoked.stderr).toMatchObject({ code: 0, stdout: `revoked token ${aliceId} of alice\n` })
    expect(await rights(url, alice)).toEqual(NONE)
    expect(await tokensCli('revoke', aliceId as string)).toMatchObject({
      code: 1,
      stderr: `flowadmin: no token with id ${aliceId}\n`,
    })

    expect(await tokensCli('revoke', '--user', 'bob')).toMatchObject({
      code: 0,
      stdout: 'revoked 2 tokens\n',
    })
    expect(await rights(url, bob1)).toEqual(NONE)
    expect(await rights(url, bob2)).toEqual(NONE)
    expect(await rights(url, dave)).toEqual(READ_ONLY)

    const created = await tokensCli('create', '--user', 'dave', '--name', 'backup job', '--expires', '30d')
    expect(created.code).toBe(0)
    expect(created.stdout).toMatch(/^fa_[A-Za-z0-9_-]{43}\n$/)
    expect(created.stderr).toMatch(
      /created API token \S+ "backup job" for dave, scope read, audience flowadmin, expires /,
    )
    const api = created.stdout.trim()
    expect(await rights(url, api)).toEqual(READ_ONLY)
    const [listed] = JSON.parse((await tokensCli('list', '--user', 'dave', '--json')).stdout).filter(
      (token: { kind: string }) => token.kind === 'api',
    )
    expect(listed).toMatchObject({
      name: 'backup job',
      client_id: 'cli',
      audience: 'flowadmin',
      scope: ['read'],
      sign_in: null,
    })
    expect(Date.parse(listed.expires_at) - Date.parse(listed.created_at)).toBe(30 * 86_400_000)

    // A token for the resource server `fleet`: active when fleet asks, refused by flowadmin's API.
    const probe = await tokensCli('create', '--user', 'dave', '--name', 'probe', '--audience', 'fleet')
    expect(probe.code, probe.stderr).toBe(0)
    expect(probe.stderr).toMatch(
      /created API token \S+ "probe" for dave, scope read, audience fleet, expires /,
    )
    const probeToken = probe.stdout.trim()
    expect(await rights(url, probeToken)).toEqual(NONE)
    const introspected = await fetch(`${url}/auth/introspect`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from('fleet:fleet-secret').toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ token: probeToken }).toString(),
    })
    expect(await introspected.json()).toMatchObject({ active: true, username: 'dave', aud: 'fleet' })
    expect((await tokensCli('list', '--user', 'dave')).stdout).toMatch(/ probe +cli +fleet +read /)
    expect(
      (
        await tokensCli(
          'revoke',
          JSON.parse((await tokensCli('list', '--user', 'dave', '--json')).stdout).find(
            (token: { name: string }) => token.name === 'probe',
          ).id,
        )
      ).code,
    ).toBe(0)
    expect(await tokensCli('create', '--user', 'dave', '--name', 'x', '--audience', 'nowhere')).toEqual({
      code: 2,
      stdout: '',
      stderr: 'flowadmin: Unknown audience: nowhere (flowadmin, or the id of a configured resource server)\n',
    })

    expect(await tokensCli('create', '--user', 'dave', '--name', 'x', '--scope', '*')).toMatchObject({
      code: 2,
    })
    expect(await tokensCli('create', '--user', 'dave', '--name', 'x', '--expires', 'never')).toMatchObject({
      code: 2,
      stderr:
        'flowadmin: Tokens that never expire are not allowed here: set adminAuth.apiTokens.allowNoExpiry to true to allow them\n',
    })
    expect(await tokensCli('create', '--user', 'nobody', '--name', 'x')).toMatchObject({ code: 2 })
    expect(await tokensCli('revoke')).toMatchObject({ code: 2 })

    expect(await tokensCli('revoke', '--all')).toMatchObject({ code: 0, stdout: 'revoked 2 tokens\n' })
    expect(await rights(url, api)).toEqual(NONE)
    expect(await rights(url, dave)).toEqual(NONE)
    expect((await tokensCli('list')).stdout).toBe('no tokens\n')
    expect(run.child.exitCode).toBeNull()
  })
})

describe('tokens saved before tokens had an audience', () => {
  it('get their client’s at start, for good: a resource server’s id, or flowadmin', async () => {
    await writeTeam(BEFORE, { resourceServers: [{ id: 'fleet', secret: hashes.get('fleet-secret') }] })
    // Two sessions of alice as an earlier version saved them: the console's and a fleet editor's.
    const stores = createSqliteStores(path.join(dir.userDir, 'flowadmin.db'))
    const fingerprint = await webDigest.hmacSha256(
      hashes.get('alice-pw') as string,
      'flowadmin token credential v1',
    )
    const saved = {
      console: 'console-token-saved-before-audiences',
      editor: 'editor-token-saved-before-audiences',
    }
    for (const [name, clientId] of [
      ['console', 'service-admin'],
      ['editor', 'fleet'],
    ] as const) {
      await stores.tokens.save({
        hash: await webDigest.sha256(saved[name]),
        id: `${name}-before`,
        kind: 'session',
        name: null,
        username: 'alice',
        clientId,
        audience: null,
        scope: ['*'],
        fingerprint,
        createdAt: Date.now(),
        expiresAt: Date.now() + 86_400_000,
        lastUsedAt: null,
        lastAddress: null,
        agent: null,
        signIn: null,
      })
    }
    await stores.close()

    const { run, url } = await start()
    const introspect = async (token: string) =>
      (
        await fetch(`${url}/auth/introspect`, {
          method: 'POST',
          headers: {
            authorization: `Basic ${Buffer.from('fleet:fleet-secret').toString('base64')}`,
            'content-type': 'application/x-www-form-urlencoded',
          },
          body: new URLSearchParams({ token }).toString(),
        })
      ).json()
    expect(await rights(url, saved.console)).toEqual(FULL)
    // Saved before sessions recorded how they signed in: the inventory says it does not know.
    const listed = (await (await get(url, '/auth/tokens', saved.console)).json()) as {
      tokens: Array<{ id: string; sign_in: string | null }>
    }
    expect(listed.tokens.map(({ id, sign_in }) => ({ id, sign_in }))).toEqual([
      { id: 'console-before', sign_in: null },
      { id: 'editor-before', sign_in: null },
    ])
    expect(await introspect(saved.console)).toEqual({ active: false })
    expect(await rights(url, saved.editor)).toEqual(NONE)
    expect(await introspect(saved.editor)).toMatchObject({ active: true, username: 'alice', aud: 'fleet' })
    await stop(run)

    // Settled in the database: a settings file without the fleet no longer changes them.
    const reopened = createSqliteStores(path.join(dir.userDir, 'flowadmin.db'))
    expect((await reopened.tokens.list('alice')).map((token) => [token.id, token.audience])).toEqual([
      ['console-before', 'flowadmin'],
      ['editor-before', 'fleet'],
    ])
    await reopened.close()
    await writeTeam(BEFORE)
    const again = await start()
    expect(await rights(again.url, saved.editor)).toEqual(NONE)
    expect(await rights(again.url, saved.console)).toEqual(FULL)
    await stop(again.run)
  })
})
