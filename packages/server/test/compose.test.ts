import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  EXIT_RUNTIME,
  EXIT_USAGE,
  hashPassword,
  isLoopback,
  type RunningServer,
  type ServerOptions,
  SettingsError,
  StartupError,
  startServer,
} from '../src/index.js'
import { type CapturedLog, captureLog } from './log-capture.js'
import { logIn } from './password-grant.js'

let userDir: string
let log: CapturedLog
const running: RunningServer[] = []

beforeEach(async () => {
  userDir = await mkdtemp(path.join(tmpdir(), 'flowadmin-compose-'))
  log = captureLog()
})
afterEach(async () => {
  for (const server of running.splice(0)) await server.close()
  await rm(userDir, { recursive: true, force: true })
})

async function start(options: ServerOptions = {}): Promise<RunningServer> {
  const server = await startServer({
    port: 0,
    userDir,
    stdout: () => {},
    logger: log.logger,
    ...options,
  })
  running.push(server)
  return server
}

async function failure(options: ServerOptions): Promise<StartupError> {
  const error = await start(options).catch((caught: unknown) => caught)
  expect(error).toBeInstanceOf(StartupError)
  return error as StartupError
}

async function installGreeting(): Promise<void> {
  const dir = path.join(userDir, 'node_modules', 'greeting-nodes')
  await mkdir(dir, { recursive: true })
  await writeFile(
    path.join(dir, 'package.json'),
    JSON.stringify({
      name: 'greeting-nodes',
      version: '1.2.3',
      'node-red': { nodes: { greeting: 'greeting.js' } },
    }),
  )
  await writeFile(path.join(dir, 'greeting.js'), 'module.exports = function (RED) {}\n')
  await writeFile(
    path.join(dir, 'greeting.html'),
    '<script type="text/html" data-template-name="greeting"></script>',
  )
}

const put = (url: string, enabled: boolean) =>
  fetch(url, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ enabled }),
  })

describe('isLoopback', () => {
  it.each(['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', 'LOCALHOST', '::ffff:127.0.0.1'])(
    '%s is',
    (host) => {
      expect(isLoopback(host)).toBe(true)
    },
  )
  it.each(['0.0.0.0', '::', '10.0.0.1', '128.0.0.1', 'example.com', '127.example.com', ''])(
    '%s is not',
    (host) => {
      expect(isLoopback(host)).toBe(false)
    },
  )
})

describe('startServer', () => {
  it('serves the API with the settings given, and warns when it is open', async () => {
    const server = await start({ settings: { storage: 'memory' } })
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`)
    expect(server.storage).toBe('memory')
    expect(server.authEnabled).toBe(false)
    expect(await (await fetch(`${server.url}/auth/login`)).json()).toEqual({})
    expect(log.said()).toEqual([
      'warn: adminAuth is not set: the admin API is open to anyone who can reach it',
    ])
  })

  it('mounts the API below httpAdminRoot', async () => {
    const server = await start({ settings: { storage: 'memory', httpAdminRoot: '/admin' } })
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/admin`)
    expect((await fetch(`${server.url}/auth/login`)).status).toBe(200)
    expect((await fetch(`http://127.0.0.1:${server.port}/auth/login`)).status).toBe(404)
  })

  it('refuses an open API on a non-loopback address unless allowed', async () => {
    const error = await failure({ settings: { storage: 'memory' }, host: '0.0.0.0' })
    expect(error.exitCode).toBe(EXIT_USAGE)
    expect(error.message).toMatch(/^refusing to listen on 0\.0\.0\.0: adminAuth is not set/)
    expect(error.message).toContain('--allow-open-admin')
  })

  it('refuses a userDir that does not exist', async () => {
    const error = await failure({ userDir: path.join(userDir, 'nope') })
    expect(error).toBeInstanceOf(SettingsError)
    expect(error.message).toBe(`userDir ${path.join(userDir, 'nope')} is not an existing folder`)
  })

  it('stores in <userDir>/flowadmin.db by default and names a corrupt file', async () => {
    const file = path.join(userDir, 'flowadmin.db')
    await writeFile(file, 'this is not a database, just some text that is long enough'.repeat(100))
    const error = await failure({})
    expect(error.exitCode).toBe(EXIT_RUNTIME)
    expect(error.message).toContain(file)
    expect(error.message).not.toMatch(/\n\s+at /)
  })

  it('fails clearly when the port is taken, and releases the database', async () => {
    const first = await start({})
    expect(first.storage).toBe(path.join(userDir, 'flowadmin.db'))
    const error = await failure({ port: first.port })
    expect(error.message).toBe(`cannot listen on 127.0.0.1:${first.port}: the port is already in use`)
    await first.close()
    await expect(first.close()).resolves.toBeUndefined()
  })

  it('records the modules found on disk and answers with them', async () => {
    await installGreeting()
    const server = await start({ settings: { storage: 'memory' } })
    const response = await put(`${server.url}/nodes/greeting-nodes`, false)
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({
      name: 'greeting-nodes',
      version: '1.2.3',
      nodes: [
        {
          id: 'greeting-nodes/greeting',
          name: 'greeting',
          types: ['greeting'],
          enabled: false,
          loaded: true,
          module: 'greeting-nodes',
          version: '1.2.3',
        },
      ],
    })
  })

  it('keeps a disabled module disabled across a start where its package.json could not be read', async () => {
    await installGreeting()
    const manifest = path.join(userDir, 'node_modules', 'greeting-nodes', 'package.json')
    const first = await start()
    expect((await put(`${first.url}/nodes/greeting-nodes`, false)).status).toBe(200)
    await first.close()

    const good = await readFile(manifest, 'utf8')
    await writeFile(manifest, '{"name": "greeting-nodes", "node-red": {')
    const during = await start()
    expect((await fetch(`${during.url}/nodes/greeting-nodes`)).status).toBe(200)
    await during.close()

    await writeFile(manifest, good)
    const after = await start()
    const module = await (await fetch(`${after.url}/nodes/greeting-nodes`)).json()
    expect(
      module.nodes.map((set: { enabled: boolean; loaded: boolean }) => [set.enabled, set.loaded]),
    ).toEqual([[false, false]])
  })

  it('refuses a disable while flows.json cannot be read: a 503 without detail, logged with detail', async () => {
    await installGreeting()
    await writeFile(path.join(userDir, 'flows.json'), '[{"type": "greeting"')
    const server = await start({ settings: { storage: 'memory' } })
    const response = await put(`${server.url}/nodes/greeting-nodes`, false)
    expect(response.status).toBe(503)
    const body = await response.text()
    expect(JSON.parse(body)).toEqual({
      code: 'flows_unavailable',
      message: 'The deployed flows cannot be read, so no module can be disabled until they can',
    })
    expect(body).not.toContain(userDir)
    expect(log.entries().filter((entry) => entry.level === 'error')).toEqual([
      {
        level: 'error',
        time: expect.any(String),
        reason: expect.stringMatching(/^the flows file .*flows\.json is not valid JSON/),
        msg: 'flows file unreadable; disabling modules is refused until it is fixed',
      },
    ])
    // Nothing changed, and enabling (which needs no flows) still works.
    const enable = await put(`${server.url}/nodes/greeting-nodes`, true)
    expect(enable.status).toBe(200)
    expect((await enable.json()).nodes[0].enabled).toBe(true)
  })

  it('writes audit events with the client address to the configured file', async () => {
    const hash = await hashPassword('s3cret-pw')
    const server = await start({
      settings: {
        storage: 'memory',
        auditLog: { file: path.join(userDir, 'audit.log') },
        adminAuth: { type: 'credentials', users: [{ username: 'admin', password: hash, permissions: '*' }] },
      },
    })
    const response = await logIn(server.url, 's3cret-pw')
    expect(response.status).toBe(200)
    const { access_token: token } = (await response.json()) as { access_token: string }
    await server.close()
    const log = await readFile(path.join(userDir, 'audit.log'), 'utf8')
    expect(log).not.toContain('s3cret-pw')
    expect(log).not.toContain(token)
    expect(JSON.parse(log)).toMatchObject({
      event: 'login.succeeded',
      user: 'admin',
      client: 'service-admin',
      address: '127.0.0.1',
    })
  })

  it('reopens the audit log file on reload, so lines after a rotation go to a new file', async () => {
    const hash = await hashPassword('s3cret-pw')
    const file = path.join(userDir, 'audit.log')
    const settingsFile = path.join(userDir, 'settings.json')
    await writeFile(
      settingsFile,
      JSON.stringify({
        storage: 'memory',
        auditLog: { file: 'audit.log' },
        adminAuth: { type: 'credentials', users: [{ username: 'admin', password: hash, permissions: '*' }] },
      }),
    )
    const server = await start({ settingsFile })
    const login = (password: string) => logIn(server.url, password)
    expect((await login('s3cret-pw')).status).toBe(200)
    await rename(file, `${file}.1`)
    expect((await server.reload()).ok).toBe(true)
    expect((await login('wrong')).status).toBe(401)
    const events = async (name: string) =>
      (await readFile(name, 'utf8'))
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line).event)
    expect(await events(`${file}.1`)).toEqual(['login.succeeded'])
    expect(await events(file)).toEqual(['login.failed'])
  })
})

describe('the login queue', () => {
  const auth = async (extra: Record<string, unknown> = {}) => ({
    type: 'credentials' as const,
    users: [{ username: 'admin', password: await hashPassword('pw'), permissions: '*' }],
    ...extra,
  })

  it('starts with provisional bounds, then derives them from the verify rate the logins show: about two seconds of verifications', async () => {
    const server = await start({ settings: { storage: 'memory', adminAuth: await auth() } })
    const provisional = { ...server.loginQueue }
    expect(provisional.measuredRate).toBeNull()
    expect(provisional.maxWaiting).toBe(Math.max(provisional.concurrency, provisional.concurrency * 10 * 2))
    for (const password of ['wrong', 'pw']) await logIn(server.url, password)
    const { measuredRate, maxWaiting, maxWaitingKnown, concurrency, retryAfter } = server.loginQueue
    expect(measuredRate).toBeGreaterThan(0)
    expect(maxWaiting).toBe(Math.max(concurrency, Math.round((measuredRate as number) * 2)))
    expect(maxWaitingKnown).toBe(maxWaiting)
    expect(retryAfter).toBe(2)
  })

  it('takes configured bounds as they are, measuring nothing', async () => {
    const server = await start({
      settings: {
        storage: 'memory',
        adminAuth: await auth({ loginQueue: { maxWaiting: 7, maxWaitingKnown: 3 } }),
      },
    })
    expect((await logIn(server.url, 'pw')).status).toBe(200)
    expect(server.loginQueue).toMatchObject({ maxWaiting: 7, maxWaitingKnown: 3, measuredRate: null })
  })
})
