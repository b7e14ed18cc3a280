import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { loadSettings, parseSettings, SettingsError } from '../src/index.js'

const HASH = '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaA'
const admin = { username: 'admin', password: HASH, permissions: '*' }

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'flowadmin-settings-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

/** The message a settings object is refused with. */
function refusal(input: unknown): string {
  try {
    parseSettings(input, 'settings.json', '/srv/flows')
  } catch (error) {
    expect(error).toBeInstanceOf(SettingsError)
    return (error as Error).message
  }
  throw new Error('the settings were accepted')
}

describe('parseSettings', () => {
  it('applies every default', () => {
    expect(parseSettings({}, 'settings.json', '/srv/flows')).toEqual({
      uiHost: '127.0.0.1',
      uiPort: 1880,
      userDir: '/srv/flows',
      httpAdminRoot: '',
      storage: 'sqlite',
      postgres: { url: null, pool: 10, timeoutMs: 5000 },
      adminAuth: null,
      auditLog: 'stdout',
      trustProxy: [],
      httpAdminCors: null,
      apiMaxLength: 65_536,
      httpServer: {
        headersTimeout: 10_000,
        requestTimeout: 30_000,
        keepAliveTimeout: 5_000,
        maxHeaderSize: 16_384,
      },
      metrics: 'api',
      shutdownTimeout: 10_000,
      console: true,
      palette: {
        allowInstall: true,
        allowUpload: false,
        allowList: ['*'],
        denyList: [],
        allowScripts: false,
        registry: null,
        timeout: 300,
        wait: 30,
      },
    })
  })

  it('serves metrics beside the API, not at all, or on a listener of its own', () => {
    const metricsOf = (metrics: unknown) => parseSettings({ metrics }, 'settings.json', '/srv').metrics
    expect(metricsOf(true)).toBe('api')
    expect(metricsOf(false)).toBe('off')
    expect(metricsOf({ port: 9464 })).toEqual({ host: '127.0.0.1', port: 9464 })
    expect(metricsOf({ host: '::1', port: 0 })).toEqual({ host: '::1', port: 0 })
    expect(parseSettings({ shutdownTimeout: 0 }, 'settings.json', '/srv').shutdownTimeout).toBe(0)
  })

  it('externalModules.palette: kept as given, and each bad value named', () => {
    const palette = {
      allowInstall: false,
      allowUpload: true,
      allowList: ['node-red-contrib-*', '@acme/*@^1'],
      denyList: ['some-module@<2'],
      allowScripts: true,
      registry: 'https://npm.example.com/',
      timeout: 60,
      wait: 0,
    }
    expect(parseSettings({ externalModules: { palette } }, 's.json', '/x').palette).toEqual(palette)
    let message = ''
    try {
      parseSettings(
        {
          externalModules: {
            palette: {
              allowInstall: 'yes',
              denyList: ['x@not a range', ''],
              registry: 'file:///etc',
              timeout: 0,
              other: 1,
            },
          },
        },
        's.json',
        '/x',
      )
    } catch (error) {
      expect(error).toBeInstanceOf(SettingsError)
      message = (error as Error).message
    }
    expect(message.split('\n')).toEqual([
      's.json: externalModules.palette.allowInstall: must be true or false',
      's.json: externalModules.palette.denyList[0]: x@not a range: the part after "@" must be a semver range',
      's.json: externalModules.palette.denyList[1]: must not be empty',
      's.json: externalModules.palette.registry: must be an http or https URL',
      's.json: externalModules.palette.timeout: must be at least 1',
      's.json: externalModules.palette.other: unknown setting',
    ])
  })

  it('keeps what is given and resolves paths against the settings folder', () => {
    const settings = parseSettings(
      {
        uiHost: '0.0.0.0',
        uiPort: 0,
        userDir: 'data',
        httpAdminRoot: '/admin/',
        storage: 'memory',
        console: false,
        auditLog: { file: 'logs/audit.log' },
        adminAuth: {
          type: 'credentials',
          users: [admin, { username: 'viewer', password: HASH, permissions: ['read', 'flows.write'] }],
          default: { permissions: 'read' },
          sessionExpiryTime: 3600,
          clients: ['node-red-admin'],
          throttle: {
            windowSeconds: 60,
            maxFailuresPerUser: 3,
            maxFailuresPerAddress: 10,
            inFlightAllowance: 2,
            knownClientDays: 7,
          },
          loginQueue: { maxWaiting: 50, maxWaitingKnown: 10 },
        },
      },
      'settings.json',
      '/srv/flows',
    )
    expect(settings).toMatchObject({
      uiHost: '0.0.0.0',
      uiPort: 0,
      userDir: '/srv/flows/data',
      httpAdminRoot: '/admin',
      storage: 'memory',
      console: false,
      auditLog: { file: '/srv/flows/logs/audit.log' },
    })
    expect(settings.adminAuth?.users[1]?.permissions).toEqual(['read', 'flows.write'])
    expect(settings.adminAuth?.throttle).toEqual({
      windowSeconds: 60,
      maxFailuresPerUser: 3,
      maxFailuresPerAddress: 10,
      inFlightAllowance: 2,
      knownClientDays: 7,
    })
    expect(settings.adminAuth?.loginQueue).toEqual({ maxWaiting: 50, maxWaitingKnown: 10 })
  })

  it('keeps an absolute userDir as it is', () => {
    expect(parseSettings({ userDir: '/var/lib/flows' }, 'settings.json', '/srv').userDir).toBe(
      '/var/lib/flows',
    )
  })

  const refusals: Array<[unknown, string]> = [
    [{ uiPort: 70000 }, 'settings.json: uiPort: must be at most 65535'],
    [{ uiPort: 18.5 }, 'settings.json: uiPort: must be a whole number'],
    [{ uiPort: '1880' }, 'settings.json: uiPort: must be a number'],
    [{ uiHost: '' }, 'settings.json: uiHost: must not be empty'],
    [{ storage: 'mysql' }, 'settings.json: storage: must be "sqlite", "memory" or "postgres"'],
    [{ console: 'off' }, 'settings.json: console: must be true or false'],
    [{ httpAdminRoot: 'admin' }, 'settings.json: httpAdminRoot: must be "" or a path such as "/admin"'],
    [{ auditLog: 'syslog' }, 'settings.json: auditLog: '],
    [{ auditLog: { file: '' } }, 'settings.json: auditLog.file: must not be empty'],
    [{ auditLog: 5 }, 'settings.json: auditLog: must be "stdout", "off" or {"file": "<path>"}'],
    [{ adminAuth: 'yes' }, 'settings.json: adminAuth: must be an object'],
    [{ adminAuth: { users: [admin] } }, 'settings.json: adminAuth.type: is required'],
    [
      { adminAuth: { type: 'credentials', users: [null] } },
      'settings.json: adminAuth.users[0]: must be an object',
    ],
    [
      { adminAuth: { type: 'credentials', users: [{ ...admin, permissions: 5 }] } },
      'settings.json: adminAuth.users[0].permissions: must be a permission or a non-empty list of permissions',
    ],
    [
      { adminAuth: { type: 'strategy', users: [admin] } },
      'settings.json: adminAuth.type: must be "credentials"',
    ],
    [
      { adminAuth: { type: 'credentials', users: [] } },
      'settings.json: adminAuth.users: must list at least one user',
    ],
    [
      { adminAuth: { type: 'credentials', users: [{ ...admin, password: 'secret' }] } },
      'settings.json: adminAuth.users[0].password: must be an argon2 hash made by `flowadmin hash-pw`',
    ],
    [
      { adminAuth: { type: 'credentials', users: [admin, { ...admin, permissions: [] }] } },
      'settings.json: adminAuth.users[1].permissions: must list at least one permission',
    ],
    [
      { adminAuth: { type: 'credentials', users: [{ ...admin, permissions: 'nodes.delete' }] } },
      'settings.json: adminAuth.users[0].permissions: "nodes.delete" is not a permission',
    ],
    [
      { adminAuth: { type: 'credentials', users: [{ ...admin, permissions: ['read', 'writ'] }] } },
      'settings.json: adminAuth.users[0].permissions[1]: "writ" is not a permission',
    ],
    [
      { adminAuth: { type: 'credentials', users: [{ ...admin, username: '' }] } },
      'settings.json: adminAuth.users[0].username: must not be empty',
    ],
    [
      { adminAuth: { type: 'credentials', users: [admin, admin] } },
      'settings.json: adminAuth.users: usernames must be unique (admin)',
    ],
    [
      { adminAuth: { type: 'credentials', users: [admin], sessionExpiryTime: 0 } },
      'settings.json: adminAuth.sessionExpiryTime: must be at least 1',
    ],
    [
      { adminAuth: { type: 'credentials', users: [admin], throttle: { maxFailuresPerUser: -1 } } },
      'settings.json: adminAuth.throttle.maxFailuresPerUser: must be at least 1',
    ],
    [
      { adminAuth: { type: 'credentials', users: [admin], throttle: { inFlightAllowance: 0 } } },
      'settings.json: adminAuth.throttle.inFlightAllowance: must be at least 1',
    ],
    [
      { adminAuth: { type: 'credentials', users: [admin], loginQueue: { maxWaiting: 1.5 } } },
      'settings.json: adminAuth.loginQueue.maxWaiting: must be a whole number',
    ],
    [
      { adminAuth: { type: 'credentials', users: [admin], loginQueue: { size: 5 } } },
      'settings.json: adminAuth.loginQueue.size: unknown setting',
    ],
    [
      { metrics: 'yes' },
      'settings.json: metrics: must be true, false or {"host": "127.0.0.1", "port": <port>}',
    ],
    [{ metrics: { host: '127.0.0.1' } }, 'settings.json: metrics.port: is required'],
    [{ metrics: { port: 99999 } }, 'settings.json: metrics.port: must be at most 65535'],
    [{ metrics: { port: 9464, path: '/m' } }, 'settings.json: metrics.path: unknown setting'],
    [{ shutdownTimeout: -1 }, 'settings.json: shutdownTimeout: must be at least 0'],
    [{ shutdownTimeout: '10s' }, 'settings.json: shutdownTimeout: must be a number'],
    [
      { adminAuth: { type: 'credentials', users: [admin], clients: ['ok', 3] } },
      'settings.json: adminAuth.clients[1]: must be a string',
    ],
    [
      { adminAuth: { type: 'credentials', users: [admin], apiTokens: { expiryTime: 0 } } },
      'settings.json: adminAuth.apiTokens.expiryTime: must be at least 1',
    ],
    [
      { adminAuth: { type: 'credentials', users: [admin], apiTokens: { allowNoExpiry: 'yes' } } },
      'settings.json: adminAuth.apiTokens.allowNoExpiry: must be true or false',
    ],
    [
      { adminAuth: { type: 'credentials', users: [admin], apiTokens: { maxExpiryTime: 86_400 } } },
      'settings.json: adminAuth.apiTokens: expiryTime must not be longer than maxExpiryTime',
    ],
    [
      { adminAuth: { type: 'credentials', users: [admin], apiTokens: { expiry: 60 } } },
      'settings.json: adminAuth.apiTokens.expiry: unknown setting',
    ],
  ]
  it.each(refusals.map(([input, message]) => [message, input] as const))(
    'refuses with "%s"',
    (message, input) => {
      expect(refusal(input)).toContain(message)
    },
  )

  it('reports unknown keys at every level, each on its own line', () => {
    const message = refusal({
      uiport: 1880,
      adminAuth: { type: 'credentials', users: [{ ...admin, role: 'x' }], throttel: {} },
    })
    expect(message.split('\n').sort()).toEqual([
      'settings.json: adminAuth.throttel: unknown setting',
      'settings.json: adminAuth.users[0].role: unknown setting',
      'settings.json: uiport: unknown setting',
    ])
  })

  it('refuses settings that are not an object', () => {
    expect(refusal([])).toBe('settings.json: the settings must be an object')
  })
})

describe('loadSettings', () => {
  it('reads a JSON file, resolving userDir against its folder', async () => {
    await writeFile(path.join(dir, 'settings.json'), JSON.stringify({ uiPort: 1990, userDir: 'user' }))
    const settings = await loadSettings(path.join(dir, 'settings.json'))
    expect(settings.uiPort).toBe(1990)
    expect(settings.userDir).toBe(path.join(dir, 'user'))
  })

  it('defaults userDir to the settings file folder', async () => {
    await writeFile(path.join(dir, 'settings.json'), '{}')
    expect((await loadSettings('settings.json', dir)).userDir).toBe(dir)
  })

  it('defaults userDir to the current folder without a file', async () => {
    expect((await loadSettings(undefined, dir)).userDir).toBe(dir)
  })

  it('reads an ES module default export (.mjs and .js)', async () => {
    const source = `export default { uiPort: 2000, adminAuth: { type: 'credentials', users: [${JSON.stringify(admin)}] } }\n`
    await writeFile(path.join(dir, 'settings.mjs'), source)
    await writeFile(path.join(dir, 'package.json'), '{"type":"module"}')
    await writeFile(path.join(dir, 'settings.js'), source)
    for (const file of ['settings.mjs', 'settings.js']) {
      const settings = await loadSettings(path.join(dir, file))
      expect(settings.uiPort).toBe(2000)
      expect(settings.adminAuth?.users[0]?.username).toBe('admin')
    }
  })

  it('reads an ES module again after it changed, as a reload does', async () => {
    const file = path.join(dir, 'settings.mjs')
    await writeFile(file, 'export default { uiPort: 2000 }\n')
    expect((await loadSettings(file)).uiPort).toBe(2000)
    await writeFile(file, 'export default { uiPort: 2001 }\n')
    expect((await loadSettings(file)).uiPort).toBe(2001)
  })

  it('keeps API token lifetimes as given', () => {
    const apiTokens = { expiryTime: 3600, maxExpiryTime: 7200, allowNoExpiry: true }
    const settings = parseSettings(
      { adminAuth: { type: 'credentials', users: [admin], apiTokens } },
      's',
      '/',
    )
    expect(settings.adminAuth?.apiTokens).toEqual(apiTokens)
  })

  it('validates an ES module like a JSON file, naming the file', async () => {
    await writeFile(path.join(dir, 'settings.mjs'), 'export default { uiPort: -1 }\n')
    await expect(loadSettings('settings.mjs', dir)).rejects.toThrow(
      'settings.mjs: uiPort: must be at least 0',
    )
  })

  it('refuses a module without a default export', async () => {
    await writeFile(path.join(dir, 'settings.mjs'), 'export const uiPort = 1\n')
    await expect(loadSettings('settings.mjs', dir)).rejects.toThrow(
      'settings.mjs: must export the settings object as its default export',
    )
  })

  it('refuses a module that fails to load, naming it', async () => {
    await writeFile(path.join(dir, 'settings.mjs'), 'export default {\n')
    await expect(loadSettings('settings.mjs', dir)).rejects.toThrow(/^settings\.mjs: cannot load: /)
  })

  it('names the file that is missing', async () => {
    const error = await loadSettings('nowhere/settings.json', dir).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(SettingsError)
    expect((error as Error).message).toBe('nowhere/settings.json: settings file not found')
  })

  it('names the file with invalid JSON', async () => {
    await writeFile(path.join(dir, 'settings.json'), '{"uiPort": 1880,}')
    await expect(loadSettings('settings.json', dir)).rejects.toThrow(/^settings\.json: not valid JSON: /)
  })

  it('refuses other file types', async () => {
    await writeFile(path.join(dir, 'settings.yaml'), 'uiPort: 1')
    await expect(loadSettings('settings.yaml', dir)).rejects.toThrow(
      'settings.yaml: settings must be a .json, .js or .mjs file',
    )
  })
})
