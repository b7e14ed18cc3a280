import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { createMemoryStores } from '@flowadmin/adapter-memory'
import { type Core, storeUnavailable, type TokenStore } from '@flowadmin/core'
import { createCoreWithDoubles, createSignal, type PlainHasher } from '@flowadmin/testkit'
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { hashPassword, type RunningServer, startServer } from '../src/index.js'
import { type CapturedLog, captureLog } from './log-capture.js'
import { logInAs } from './password-grant.js'

let dir: string
let settingsFile: string
let log: CapturedLog
let hashes: Record<string, string>
const running: RunningServer[] = []

beforeAll(async () => {
  hashes = { one: await hashPassword('one-pw'), two: await hashPassword('two-pw') }
})
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'flowadmin-reload-'))
  settingsFile = path.join(dir, 'settings.json')
  log = captureLog()
})
afterEach(async () => {
  for (const server of running.splice(0)) await server.close()
  await rm(dir, { recursive: true, force: true })
})

const users = (...names: string[]) =>
  names.map((name) => ({ username: name, password: hashes[name] as string, permissions: '*' }))

async function write(settings: Record<string, unknown>): Promise<void> {
  await writeFile(settingsFile, JSON.stringify({ storage: 'memory', ...settings }))
}

async function start(options: { settingsFile?: string } = { settingsFile }): Promise<RunningServer> {
  const server = await startServer({
    ...options,
    userDir: dir,
    port: 0,
    stdout: () => {},
    logger: log.logger,
  })
  running.push(server)
  return server
}

/** `username` logs in with the password `<username>-pw`: the status of the answer. */
async function login(server: RunningServer, username: string): Promise<number> {
  return (await logInAs(server.url, username, `${username}-pw`)).status
}

describe('reloading the settings file', () => {
  it('applies new users and says which other changes wait for a restart', async () => {
    await write({ adminAuth: { type: 'credentials', users: users('one') } })
    const server = await start()
    expect(await login(server, 'two')).toBe(401)
    await write({
      apiMaxLength: 1000,
      adminAuth: { type: 'credentials', users: users('two'), sessionExpiryTime: 60 },
    })
    expect(await server.reload()).toEqual({
      ok: true,
      users: 1,
      needRestart: ['adminAuth.sessionExpiryTime', 'apiMaxLength'],
    })
    expect(await login(server, 'two')).toBe(200)
    expect(await login(server, 'one')).toBe(401)
    expect(server.settings.adminAuth?.users.map((user) => user.username)).toEqual(['two'])
    expect(server.settings.adminAuth?.sessionExpiryTime).toBeUndefined()
    expect(log.entries()).toEqual([
      { level: 'info', time: expect.any(String), users: 1, msg: 'settings reloaded' },
      {
        level: 'warn',
        time: expect.any(String),
        settings: ['adminAuth.sessionExpiryTime', 'apiMaxLength'],
        msg: 'these settings change only after a restart',
      },
    ])
  })

  it('refuses turning authentication off, a broken file, and a start without a file; the running users stay', async () => {
    await write({ adminAuth: { type: 'credentials', users: users('one') } })
    const server = await start()
    await write({})
    expect(await server.reload()).toEqual({
      ok: false,
      message: 'adminAuth: turning authentication on or off needs a restart',
    })
    await writeFile(settingsFile, '{"adminAuth": ')
    const broken = await server.reload()
    expect(broken).toMatchObject({
      ok: false,
      message: expect.stringContaining(
        'settings.json:1:15: not valid JSON: expected a value, found the end of the file',
      ),
    })
    expect(await login(server, 'one')).toBe(200)
    expect(log.entries()).toEqual([
      {
        level: 'error',
        time: expect.any(String),
        reason: 'adminAuth: turning authentication on or off needs a restart',
        msg: 'settings not reloaded, the running settings stay',
      },
      {
        level: 'error',
        time: expect.any(String),
        reason: expect.stringContaining(
          'settings.json:1:15: not valid JSON: expected a value, found the end of the file',
        ),
        msg: 'settings not reloaded, the running settings stay',
      },
    ])

    const bare = await start({})
    expect(await bare.reload()).toEqual({
      ok: false,
      message: 'the server was started without a settings file',
    })
  })

  it('runs reloads one at a time, the last file winning', async () => {
    await write({ adminAuth: { type: 'credentials', users: users('one') } })
    const server = await start()
    await write({ adminAuth: { type: 'credentials', users: users('one', 'two') } })
    const outcomes = await Promise.all([server.reload(), server.reload(), server.reload()])
    expect(outcomes.map((outcome) => outcome.ok && outcome.users)).toEqual([2, 2, 2])
    expect(await login(server, 'two')).toBe(200)
  })
})

describe('a reload whose store work fails', () => {
  const outage = () => storeUnavailable('PostgreSQL cannot be reached: connect ECONNREFUSED 127.0.0.1:9', 2)
  const refusal = {
    ok: false,
    message:
      'the tokens of removed users could not be deleted: PostgreSQL cannot be reached: connect ECONNREFUSED 127.0.0.1:9',
  }

  it('keeps the running users and settings, says why in one line, and the next reload applies', async () => {
    await write({ adminAuth: { type: 'credentials', users: users('one', 'two') } })
    const server = await start()
    const before = server.settings
    await write({ adminAuth: { type: 'credentials', users: users('two') } })
    vi.spyOn(server.core, 'setUsers').mockRejectedValueOnce(outage())
    expect(await server.reload()).toEqual(refusal)
    expect(server.settings).toBe(before)
    expect(await login(server, 'one')).toBe(200)
    expect(log.entries()).toEqual([
      {
        level: 'error',
        time: expect.any(String),
        reason: refusal.message,
        msg: 'settings not reloaded, the running settings stay',
      },
    ])

    expect(await server.reload()).toEqual({ ok: true, users: 1, needRestart: [] })
    expect(await login(server, 'one')).toBe(401)
    expect(server.settings.adminAuth?.users.map((user) => user.username)).toEqual(['two'])
  })

  it('does not hold up the reload queued behind it', async () => {
    await write({ adminAuth: { type: 'credentials', users: users('one', 'two') } })
    const server = await start()
    await write({ adminAuth: { type: 'credentials', users: users('two') } })
    vi.spyOn(server.core, 'setUsers').mockRejectedValueOnce(outage())
    const first = server.reload()
    const second = server.reload()
    expect(await first).toEqual(refusal)
    expect(await second).toEqual({ ok: true, users: 1, needRestart: [] })
    expect(await login(server, 'one')).toBe(401)
    expect(log.said()).toEqual([
      'error: settings not reloaded, the running settings stay',
      'info: settings reloaded',
    ])
  })
})

describe('the users of a reload and the store work they need, in the core', () => {
  const ADDRESS = '192.0.2.1'
  /** alice and bob, or bob and carol; each password is the name followed by `-pw`. */
  const team = (hasher: PlainHasher, ...names: string[]) =>
    names.map((username) => ({ username, password: hasher.hash(`${username}-pw`), permissions: '*' }))
  const logIn = (core: Core, username: string) =>
    core.login(
      { grantType: 'password', clientId: 'service-admin', username, password: `${username}-pw`, scope: '*' },
      ADDRESS,
    )

  /** A core over memory stores whose token store answers `usernames` as `usernames` says. */
  function world(usernames: (store: TokenStore) => Promise<string[]>) {
    const stores = createMemoryStores()
    const tokens: TokenStore = { ...stores.tokens, usernames: () => usernames(stores.tokens) }
    return createCoreWithDoubles({
      stores: { ...stores, tokens },
      adminAuth: (hasher) => ({ users: team(hasher, 'alice', 'bob') }),
    })
  }

  it('changes no user when deleting the removed users’ tokens fails', async () => {
    let down = true
    const { core, hasher } = world((store) => (down ? Promise.reject(outage()) : store.usernames()))
    const alice = await logIn(core, 'alice')
    if (!alice.ok) throw new Error('alice could not log in')
    await expect(core.setUsers(team(hasher, 'bob', 'carol'))).rejects.toThrow('PostgreSQL cannot be reached')
    expect(await core.authenticate(alice.value.accessToken, ADDRESS)).toMatchObject({ ok: true })
    expect(await logIn(core, 'carol')).toMatchObject({ ok: false })

    down = false
    expect(await core.setUsers(team(hasher, 'bob', 'carol'))).toEqual([{ username: 'alice', count: 1 }])
    expect(await core.authenticate(alice.value.accessToken, ADDRESS)).toMatchObject({ ok: false })
    expect(await logIn(core, 'carol')).toMatchObject({ ok: true })
  })

  it('needs no store for a list that removes nobody: a new user and a new password apply while it is down', async () => {
    const { core, hasher } = world(() => Promise.reject(outage()))
    const bob = await logIn(core, 'bob')
    if (!bob.ok) throw new Error('bob could not log in')
    const changed = team(hasher, 'alice', 'bob', 'carol').map((user) =>
      user.username === 'bob' ? { ...user, password: hasher.hash('new-pw') } : user,
    )
    expect(await core.setUsers(changed)).toEqual([])
    expect(await logIn(core, 'carol')).toMatchObject({ ok: true })
    expect(await core.authenticate(bob.value.accessToken, ADDRESS)).toMatchObject({ ok: false })
  })

  it('makes the new users live only once the removed users’ tokens are gone', async () => {
    const held = createSignal()
    const purging = createSignal()
    const { core, hasher, stores } = world(async (store) => {
      purging.give()
      await held.given
      return store.usernames()
    })
    expect(await logIn(core, 'alice')).toMatchObject({ ok: true })
    const applied = core.setUsers(team(hasher, 'bob', 'carol'))
    await purging.given
    // While the store work runs, the users are those of before.
    expect(await logIn(core, 'carol')).toMatchObject({ ok: false })
    held.give()
    await applied
    expect(await stores.tokens.list('alice')).toEqual([])
    expect(await logIn(core, 'carol')).toMatchObject({ ok: true })
  })

  function outage() {
    return storeUnavailable('PostgreSQL cannot be reached: connect ECONNREFUSED 127.0.0.1:9', 2)
  }
})
