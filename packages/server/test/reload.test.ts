import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { hashPassword, type RunningServer, startServer } from '../src/index.js'
import { type CapturedLog, captureLog } from './log-capture.js'

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

async function login(server: RunningServer, username: string): Promise<number> {
  const res = await fetch(`${server.url}/auth/token`, {
    method: 'POST',
    body: new URLSearchParams({
      client_id: 'service-admin',
      grant_type: 'password',
      scope: '*',
      username,
      password: `${username}-pw`,
    }),
  })
  return res.status
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
      message: expect.stringContaining('settings.json: not valid JSON'),
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
        reason: expect.stringContaining('settings.json: not valid JSON'),
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
