import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { hashWarnings, loadSettings, parseSettings, SettingsError } from '../src/index.js'
import { parse, refusal } from './settings-parse.js'

const HASH = '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaA'
/** A machine secret's digest, as `flowadmin secret` prints it. */
const DIGEST = `sha256:${'0123456789abcdef'.repeat(4)}`
const admin = { username: 'admin', password: HASH, permissions: '*' }
/** The example of single sign-on settings. */
const OIDC = {
  issuer: 'https://id.example.com/realms/ops',
  clientId: 'flowadmin',
  clientSecret: 'a-secret',
  label: 'Sign in with Example ID',
  permissions: {
    claim: 'groups',
    map: { 'nr-admins': '*', 'nr-deployers': ['flows.write', 'nodes.read'], 'nr-viewers': 'read' },
  },
}

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'flowadmin-settings-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

/** Writes `source` as settings.mjs in the temp folder and expects loading it to fail with `message`. */
async function expectModuleRefused(source: string, message: string | RegExp): Promise<void> {
  await writeFile(path.join(dir, 'settings.mjs'), source)
  await expect(loadSettings('settings.mjs', dir)).rejects.toThrow(message)
}

describe('parseSettings', () => {
  it('applies every default', () => {
    expect(parse({})).toEqual({
      uiHost: '127.0.0.1',
      uiPort: 1880,
      userDir: '/srv/flows',
      httpAdminRoot: '',
      storage: 'sqlite',
      postgres: { url: null, pool: 10, timeoutMs: 5000 },
      adminAuth: null,
      auditLog: 'stdout',
      auditTrail: {
        maxAgeDays: 90,
        maxEvents: 10_000_000,
        reported: { maxAgeDays: 90, maxEvents: 1_000_000, eventsPerMinute: 6000 },
      },
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
      fleet: null,
      access: { roles: {}, groups: {} },
    })
  })

  it('turns fleet mode on with fleet.modules, prune off unless given, and names a bad value', () => {
    expect(parse({ fleet: { modules: true } }).fleet).toEqual({
      prune: false,
      answerWaitMs: 5000,
      holdSeconds: 15,
      maxInstances: 1000,
      snapshots: { maxBytes: 5 * 1024 * 1024 },
      flowsKey: null,
    })
    expect(parse({ fleet: { modules: true, prune: true, wait: 0, hold: 120 } }).fleet).toEqual({
      prune: true,
      answerWaitMs: 0,
      holdSeconds: 120,
      maxInstances: 1000,
      snapshots: { maxBytes: 5 * 1024 * 1024 },
      flowsKey: null,
    })
    expect(parse({ fleet: { modules: true, maxInstances: 3 } }).fleet?.maxInstances).toBe(3)
    expect(() => parse({ fleet: { modules: true, maxInstances: 0 } })).toThrow(
      'fleet.maxInstances: must be at least 1',
    )
    expect(parse({ fleet: { modules: true, snapshots: { maxBytes: 2048 } } }).fleet?.snapshots).toEqual({
      maxBytes: 2048,
    })
    expect(() => parse({ fleet: { modules: true, snapshots: { maxBytes: 100 } } })).toThrow(
      'fleet.snapshots.maxBytes: must be at least 1024',
    )
    expect(() => parse({ fleet: { modules: true, snapshots: { maxBytes: 60 * 1024 * 1024 } } })).toThrow(
      'fleet.snapshots.maxBytes: must be at most 52428800',
    )
    expect(() => parse({ fleet: { modules: true, snapshots: { max: 1 } } })).toThrow('fleet.snapshots')
    const key = 'k'.repeat(32)
    expect(parse({ fleet: { modules: true, flows: { key } } }).fleet?.flowsKey).toBe(key)
    expect(() => parse({ fleet: { modules: true, flows: { key: 'short' } } })).toThrow(
      'fleet.flows.key: must have at least 32 characters',
    )
    expect(parse({ fleet: { modules: true, hold: 5 } }).fleet?.holdSeconds).toBe(5)
    expect(() => parse({ fleet: { modules: true, wait: 61 } })).toThrow('fleet.wait: must be at most 60')
    expect(() => parse({ fleet: { modules: true, hold: 4 } })).toThrow('fleet.hold: must be at least 5')
    expect(() => parse({ fleet: { modules: true, hold: 121 } })).toThrow('fleet.hold: must be at most 120')
    expect(() => parse({ fleet: { modules: true, hold: 7.5 } })).toThrow('fleet.hold: must be a whole number')
    expect(parse({ fleet: { modules: false } }).fleet).toBeNull()
    expect(() => parse({ fleet: { modules: 'yes' } })).toThrow('fleet.modules: must be true or false')
    expect(() => parse({ fleet: { modules: true, prune: 1 } })).toThrow('fleet.prune: must be true or false')
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
    [{ auditTrail: { maxEvents: 999 } }, 'settings.json: auditTrail.maxEvents: must be at least 1000'],
    [
      { auditTrail: { reported: { eventsPerMinute: 0 } } },
      'settings.json: auditTrail.reported.eventsPerMinute: must be at least 1',
    ],
    [
      { auditTrail: { reported: { maxAgeDays: 1.5 } } },
      'settings.json: auditTrail.reported.maxAgeDays: must be a whole number',
    ],
    [
      { auditTrail: { reported: { perMinute: 10 } } },
      'settings.json: auditTrail.reported.perMinute: unknown setting',
    ],
    [{ adminAuth: 'yes' }, 'settings.json: adminAuth: must be an object'],
    [
      { adminAuth: {} },
      'settings.json: adminAuth: list users (adminAuth.users), configure single sign-on (adminAuth.oidc) or a directory (adminAuth.ldap), or several',
    ],
    [
      { adminAuth: { type: 'credentials', oidc: OIDC } },
      'settings.json: adminAuth.users: is required when type is "credentials" (or adminAuth.ldap); for single sign-on alone, omit type or set it to "strategy"',
    ],
    [
      { adminAuth: { type: 'saml', users: [admin] } },
      'settings.json: adminAuth.type: must be "credentials" (passwords) or "strategy" (oidc)',
    ],
    [
      { adminAuth: { oidc: { ...OIDC, clientSecret: undefined } } },
      'settings.json: adminAuth.oidc.clientSecret: is required: set it here or in the environment as FLOWADMIN_OIDC_CLIENT_SECRET',
    ],
    [
      { adminAuth: { oidc: { ...OIDC, issuer: 'http://id.example.com' } } },
      'settings.json: adminAuth.oidc.issuer: must be an https URL (http only on 127.0.0.1, ::1 or localhost)',
    ],
    [
      { adminAuth: { oidc: { ...OIDC, permissions: { claim: 'groups', map: { admins: 'root' } } } } },
      'settings.json: adminAuth.oidc.permissions.map.admins: "root" is not a permission',
    ],
    [
      { adminAuth: { oidc: { ...OIDC, permissions: { claim: 'groups', map: {} } } } },
      'settings.json: adminAuth.oidc.permissions.map: must map at least one group',
    ],
    [
      { adminAuth: { oidc: { ...OIDC, scope: 'profile' } } },
      'settings.json: adminAuth.oidc.scope: must include openid',
    ],
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
      'settings.json: adminAuth.oidc: is required when type is "strategy"',
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
      { adminAuth: { type: 'credentials', users: [{ ...admin, password: '$2b$08$short' }] } },
      'settings.json: adminAuth.users[0].password: is not a whole bcrypt hash',
    ],
    [
      {
        adminAuth: {
          type: 'credentials',
          users: [admin],
          resourceServers: [{ id: 'fleet', secret: 'plain' }],
        },
      },
      'settings.json: adminAuth.resourceServers[0].secret: must be the digest that `flowadmin secret` prints (sha256:…), not the secret itself',
    ],
    [
      {
        adminAuth: {
          type: 'credentials',
          users: [admin],
          resourceServers: [{ id: 'fleet', secret: `sha256:${'A'.repeat(64)}` }],
        },
      },
      'settings.json: adminAuth.resourceServers[0].secret: is not a whole digest: sha256: then 64 lowercase hex digits, as `flowadmin secret` prints it',
    ],
    [
      {
        adminAuth: { type: 'credentials', users: [admin], resourceServers: [{ id: 'fleet', secret: 5 }] },
      },
      'settings.json: adminAuth.resourceServers[0].secret: must be a string: the digest that `flowadmin secret` prints (sha256:…)',
    ],
    [
      {
        adminAuth: {
          type: 'credentials',
          users: [admin],
          resourceServers: [
            { id: 'fleet', secret: HASH },
            { id: 'fleet', secret: HASH },
          ],
        },
      },
      'settings.json: adminAuth.resourceServers: resource server ids must be unique',
    ],
    [
      {
        adminAuth: {
          type: 'credentials',
          users: [admin],
          resourceServers: [{ id: 'flowadmin', secret: HASH }],
        },
      },
      "settings.json: adminAuth.resourceServers: a resource server may not be called flowadmin: that names flowadmin's own tokens",
    ],
    [
      { adminAuth: { type: 'credentials', users: [admin], resourceServers: [{ id: 'a:b', secret: HASH }] } },
      'settings.json: adminAuth.resourceServers[0].id: must not contain ":"',
    ],
    [
      { adminAuth: { type: 'credentials', users: [admin], resourceServers: [{ id: 'a/b', secret: HASH }] } },
      'settings.json: adminAuth.resourceServers[0].id: must not contain "/" (the trail names an instance <resource server>/<instance>)',
    ],
    [
      {
        adminAuth: {
          type: 'credentials',
          users: [admin],
          resourceServers: [{ id: 'fleet', secret: HASH, redirectUris: ['/auth/strategy/callback'] }],
        },
      },
      'settings.json: adminAuth.resourceServers[0].redirectUris[0]: must be an absolute URL such as "https://nodered.example/auth/strategy/callback"',
    ],
    [
      {
        adminAuth: {
          type: 'credentials',
          users: [admin],
          resourceServers: [{ id: 'fleet', secret: HASH, redirectUris: ['https://nodered.example/cb#x'] }],
        },
      },
      'settings.json: adminAuth.resourceServers[0].redirectUris[0]: must not hold credentials or a #fragment',
    ],
    [
      {
        adminAuth: {
          type: 'credentials',
          users: [admin],
          resourceServers: [
            { id: 'fleet', secret: HASH, redirectUris: ['http://nodered.example/auth/strategy/callback'] },
          ],
        },
      },
      'settings.json: adminAuth.resourceServers[0].redirectUris[0]: must be an https URL (http only on 127.0.0.1, ::1 or localhost): the sign-in’s code is sent to it',
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
      'settings.json: adminAuth.throttel: unknown setting; did you mean adminAuth.throttle?',
      'settings.json: adminAuth.users[0].role: unknown setting',
      'settings.json: uiport: unknown setting; did you mean uiPort?',
    ])
  })

  it.each([
    [{ uiPrt: 1 }, 'uiPrt: unknown setting; did you mean uiPort?'],
    [{ UIPORT: 1 }, 'UIPORT: unknown setting; did you mean uiPort?'],
    [{ storge: 'memory' }, 'storge: unknown setting; did you mean storage?'],
    [
      { adminAuth: { type: 'credentials', users: [admin], sesionExpiryTime: 60 } },
      'adminAuth.sesionExpiryTime: unknown setting; did you mean adminAuth.sessionExpiryTime?',
    ],
    [
      { adminAuth: { type: 'credentials', users: [{ ...admin, pasword: HASH }] } },
      'adminAuth.users[0].pasword: unknown setting; did you mean adminAuth.users[0].password?',
    ],
    [
      { adminAuth: { type: 'credentials', users: [admin], apiTokens: { allowNoExpire: true } } },
      'adminAuth.apiTokens.allowNoExpire: unknown setting; did you mean adminAuth.apiTokens.allowNoExpiry?',
    ],
    [
      { externalModules: { palette: { allowInstal: false } } },
      'externalModules.palette.allowInstal: unknown setting; did you mean externalModules.palette.allowInstall?',
    ],
  ])('suggests the nearest known setting for %j', (input, message) => {
    expect(refusal(input)).toBe(`settings.json: ${message}`)
  })

  it.each([
    [{ colour: 'blue' }, 'colour: unknown setting'],
    [{ port: 1880 }, 'port: unknown setting'],
    [{ postgres: { host: 'db' }, storage: 'postgres' }, 'postgres.host: unknown setting'],
    [{ ['u'.repeat(10_000)]: 1 }, `${'u'.repeat(10_000)}: unknown setting`],
  ])('suggests nothing when no known setting is close (case %#)', (input, message) => {
    expect(refusal(input)).toBe(`settings.json: ${message}`)
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

  it('evaluates a .mjs or CommonJS .js settings file outside this process: loading it again adds no module here', async () => {
    const counting =
      'globalThis.flowadminSettingsEvaluations = (globalThis.flowadminSettingsEvaluations ?? 0) + 1\n'
    await writeFile(path.join(dir, 'settings.mjs'), `${counting}export default { uiPort: 2000 }\n`)
    await writeFile(path.join(dir, 'settings.js'), `${counting}module.exports = { uiPort: 2001 }\n`)
    const evaluations = () =>
      (globalThis as { flowadminSettingsEvaluations?: number }).flowadminSettingsEvaluations
    for (let reload = 0; reload < 10; reload++) {
      expect((await loadSettings(path.join(dir, 'settings.mjs'))).uiPort).toBe(2000)
      expect((await loadSettings(path.join(dir, 'settings.js'))).uiPort).toBe(2001)
    }
    // Each import of a new module URL in this process evaluated the file here, and kept it for good.
    expect(evaluations()).toBeUndefined()
  })

  it('reads the files a settings module imports afresh too', async () => {
    const file = path.join(dir, 'settings.mjs')
    await writeFile(file, "import port from './port.mjs'\nexport default { uiPort: port }\n")
    await writeFile(path.join(dir, 'port.mjs'), 'export default 2000\n')
    expect((await loadSettings(file)).uiPort).toBe(2000)
    await writeFile(path.join(dir, 'port.mjs'), 'export default 2001\n')
    expect((await loadSettings(file)).uiPort).toBe(2001)
  })

  it('refuses a settings module whose settings hold a function, as it always has', async () => {
    await writeFile(
      path.join(dir, 'settings.mjs'),
      'export default { uiPort: () => 1880, adminAuth: { authenticate() {} }, logging: { level: 1n } }\n',
    )
    const error = await loadSettings('settings.mjs', dir).catch((caught: unknown) => caught)
    expect((error as Error).message.split('\n').sort()).toEqual([
      'settings.mjs: adminAuth.authenticate: unknown setting',
      'settings.mjs: logging: unknown setting',
      'settings.mjs: uiPort: must be a number',
    ])
  })

  it('names what a settings module threw, and a module that ends its process', async () => {
    await expectModuleRefused(
      "throw new Error('DATABASE_URL is not set')\n",
      'settings.mjs: cannot load: DATABASE_URL is not set',
    )
    await expectModuleRefused(
      'process.exit(3)\n',
      'settings.mjs: cannot load: it ended its process (exit code 3) before giving its settings',
    )
  })

  it('refuses a settings object that refers to itself', async () => {
    await expectModuleRefused(
      'const s = { uiPort: 1 }\ns.self = s\nexport default s\n',
      'settings.mjs: cannot load: the settings must be plain data (JSON values), and this object refers to itself',
    )
  })

  it("takes Node-RED's bcrypt hashes, *.read and *.write, and resource servers with a machine secret's digest or a password hash", () => {
    const bcrypt = '$2b$08$.nkzJ0fZOHDhnyAfK9WCX.3iAmAbWBRaZEA1jbL1HV9duZqYAKpxC'
    const settings = parseSettings(
      {
        adminAuth: {
          type: 'credentials',
          users: [
            { username: 'alice', password: bcrypt, permissions: ['*.read', 'flows.write'] },
            { username: 'bob', password: bcrypt.replace('$2b$', '$2y$'), permissions: '*.write' },
          ],
          resourceServers: [
            { id: 'fleet', secret: HASH },
            { id: 'edge', secret: DIGEST },
            { id: 'old', secret: bcrypt },
          ],
        },
      },
      'settings.json',
      '/srv',
    )
    expect(settings.adminAuth?.users.map((user) => user.permissions)).toEqual([
      ['*.read', 'flows.write'],
      '*.write',
    ])
    expect(settings.adminAuth?.resourceServers).toEqual([
      { id: 'fleet', secret: HASH },
      { id: 'edge', secret: DIGEST },
      { id: 'old', secret: bcrypt },
    ])
    expect(hashWarnings(settings)).toEqual([
      'user alice: the password is a bcrypt hash (from Node-RED); it is accepted, but replace it with an argon2id hash from `flowadmin hash-pw`',
      'user bob: the password is a bcrypt hash (from Node-RED); it is accepted, but replace it with an argon2id hash from `flowadmin hash-pw`',
      "resource server fleet: adminAuth.resourceServers[0].secret is a password hash, so after a start or reload 5 wrong secrets from the instances' address refuse the right one too, for 15 minutes. " +
        'Replace it with a machine secret: run `flowadmin secret --id fleet`, give the secret on its first line to the instances (their clientSecret), and set adminAuth.resourceServers[0].secret to the digest on its second line ("secret": "sha256:…"), then reload',
      "resource server old: adminAuth.resourceServers[2].secret is a password hash, so after a start or reload 5 wrong secrets from the instances' address refuse the right one too, for 15 minutes. " +
        'Replace it with a machine secret: run `flowadmin secret --id old`, give the secret on its first line to the instances (their clientSecret), and set adminAuth.resourceServers[2].secret to the digest on its second line ("secret": "sha256:…"), then reload',
    ])
    // The window and count are the throttle's, as configured; an id the shell would read is quoted.
    const odd = parseSettings(
      {
        adminAuth: {
          type: 'credentials',
          users: [admin],
          throttle: { windowSeconds: 90, maxFailuresPerUser: 3 },
          resourceServers: [{ id: "it's$fleet", secret: HASH }],
        },
      },
      'settings.json',
      '/srv',
    )
    expect(hashWarnings(odd)).toEqual([
      expect.stringContaining(
        "3 wrong secrets from the instances' address refuse the right one too, for 90 seconds.",
      ),
    ])
    expect(hashWarnings(odd)[0]).toContain("run `flowadmin secret --id 'it'\\''s$fleet'`")
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
    await expectModuleRefused('export default { uiPort: -1 }\n', 'settings.mjs: uiPort: must be at least 0')
  })

  it('refuses a module without a default export', async () => {
    await expectModuleRefused(
      'export const uiPort = 1\n',
      'settings.mjs: must export the settings object as its default export',
    )
  })

  it('refuses a module that fails to load, naming it', async () => {
    await expectModuleRefused('export default {\n', /^settings\.mjs: cannot load: /)
  })

  it('names the file that is missing', async () => {
    const error = await loadSettings('nowhere/settings.json', dir).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(SettingsError)
    expect((error as Error).message).toBe('nowhere/settings.json: settings file not found')
  })

  it.each([
    [
      '{"uiPort": 1880,}',
      "1:17: not valid JSON: expected a property name in double quotes, found '}' (a comma too many before it?)",
    ],
    ['{\n  "uiPort": 1880\n  "uiHost": "::1"\n}', "3:3: not valid JSON: expected ',' or '}', found '\"'"],
    ['{\n  "uiPort" 1880\n}', "2:12: not valid JSON: expected ':' after the property name, found '1880'"],
    [
      '{\n  uiPort: 1880\n}',
      "2:3: not valid JSON: expected a property name in double quotes, found 'uiPort'",
    ],
    [
      "{\n  'uiPort': 1880\n}",
      '2:3: not valid JSON: expected a property name in double quotes, found a single quote (JSON takes double quotes)',
    ],
    [
      '{\n  // the port\n  "uiPort": 1880\n}',
      "2:3: not valid JSON: expected a property name in double quotes, found '/' (JSON has no comments)",
    ],
    ['{"console": tru}', "1:13: not valid JSON: expected a value, found 'tru'"],
    ['{"uiHost": "::1\n}', '1:16: not valid JSON: a string that is not closed before the end of its line'],
    ['{"uiHost": "a\tb"}', '1:14: not valid JSON: a tab inside a string (write it as \\t)'],
    ['{"uiHost": "a\\qb"}', '1:14: not valid JSON: an unknown escape \\q in a string'],
    ['{"uiPort": 01}', "1:13: not valid JSON: expected ',' or '}', found '1'"],
    ['{"uiPort": -}', "1:13: not valid JSON: expected a digit, found '}'"],
    [
      '{"trustProxy": ["::1",]}',
      "1:23: not valid JSON: expected a value, found ']' (a comma too many before it?)",
    ],
    ['{"uiPort": 1880}}', "1:17: not valid JSON: expected the end of the file after the settings, found '}'"],
    ['{"uiPort": 1880', "1:16: not valid JSON: expected ',' or '}', found the end of the file"],
    ['', '1:1: not valid JSON: expected a value, found the end of the file'],
    ['['.repeat(100_000), '1:100001: not valid JSON: expected a value, found the end of the file'],
  ])('names the line and column of a JSON mistake (case %#)', async (source, message) => {
    await writeFile(path.join(dir, 'settings.json'), source)
    const error = await loadSettings('settings.json', dir).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(SettingsError)
    expect((error as Error).message).toBe(`settings.json:${message}`)
  })

  it('never repeats the text of a JSON file it cannot read, which may hold a password', async () => {
    await writeFile(
      path.join(dir, 'settings.json'),
      '{"storage": "postgres", "postgres": {"url": "postgres://flow:s3cret@db/flows"} "uiPort": 1}',
    )
    await expect(loadSettings('settings.json', dir)).rejects.toThrow(
      /^settings\.json:1:80: not valid JSON: expected ',' or '}', found '"'$/,
    )
  })

  it('reads a JSON file that starts with a byte order mark', async () => {
    await writeFile(path.join(dir, 'settings.json'), '\uFEFF{"uiPort": 1990}')
    expect((await loadSettings('settings.json', dir)).uiPort).toBe(1990)
  })

  it('refuses other file types', async () => {
    await writeFile(path.join(dir, 'settings.yaml'), 'uiPort: 1')
    await expect(loadSettings('settings.yaml', dir)).rejects.toThrow(
      'settings.yaml: settings must be a .json, .js or .mjs file',
    )
  })
})

describe('single sign-on settings', () => {
  const parse = (adminAuth: unknown) => parseSettings({ adminAuth }, 'settings.json', '/srv')

  it('start an OIDC-only server from the issue’s settings exactly, with or without type "strategy"', () => {
    for (const adminAuth of [{ oidc: OIDC }, { type: 'strategy', oidc: OIDC }]) {
      expect(parse(adminAuth).adminAuth).toEqual({ type: 'strategy', users: [], oidc: OIDC })
    }
  })

  it('take passwords and the provider together', () => {
    expect(parse({ type: 'credentials', users: [admin], oidc: OIDC }).adminAuth).toEqual({
      type: 'credentials',
      users: [admin],
      oidc: OIDC,
    })
  })

  it('take the client secret from FLOWADMIN_OIDC_CLIENT_SECRET, and give the button a label', () => {
    const { clientSecret: _, label: __, ...rest } = OIDC
    process.env.FLOWADMIN_OIDC_CLIENT_SECRET = 'from-the-environment'
    try {
      expect(parse({ oidc: rest }).adminAuth?.oidc).toEqual({
        ...rest,
        clientSecret: 'from-the-environment',
        label: 'Sign in with single sign-on',
      })
    } finally {
      delete process.env.FLOWADMIN_OIDC_CLIENT_SECRET
    }
  })

  it('take an http issuer on a loopback address (for tests), never elsewhere', () => {
    expect(parse({ oidc: { ...OIDC, issuer: 'http://127.0.0.1:4000' } }).adminAuth?.oidc?.issuer).toBe(
      'http://127.0.0.1:4000',
    )
  })

  it('take resource servers’ redirect URIs in https, and in http on a loopback address only', () => {
    const uris = [
      'https://nodered.example/auth/strategy/callback',
      'http://127.0.0.1:1880/auth/strategy/callback',
      'http://localhost:1880/admin/auth/strategy/callback',
      'http://[::1]:1880/auth/strategy/callback',
    ]
    const parsed = parse({ oidc: OIDC, resourceServers: [{ id: 'fleet', secret: HASH, redirectUris: uris }] })
    expect(parsed.adminAuth?.resourceServers?.[0]?.redirectUris).toEqual(uris)
    for (const uri of ['http://10.0.0.5:1880/auth/strategy/callback', 'http://127.0.0.1.example/cb']) {
      expect(() =>
        parse({ oidc: OIDC, resourceServers: [{ id: 'fleet', secret: HASH, redirectUris: [uri] }] }),
      ).toThrow('redirectUris[0]: must be an https URL (http only on 127.0.0.1, ::1 or localhost)')
    }
  })
})

describe('second-factor settings', () => {
  const parse = (adminAuth: unknown) => parseSettings({ adminAuth }, 'settings.json', '/srv')
  const KEY = 'k'.repeat(32)
  const withEnv = <T>(value: string | undefined, run: () => T): T => {
    const before = process.env.FLOWADMIN_MFA_KEY
    if (value === undefined) delete process.env.FLOWADMIN_MFA_KEY
    else process.env.FLOWADMIN_MFA_KEY = value
    try {
      return run()
    } finally {
      if (before === undefined) delete process.env.FLOWADMIN_MFA_KEY
      else process.env.FLOWADMIN_MFA_KEY = before
    }
  }

  it('take the key from the file or from FLOWADMIN_MFA_KEY, the file first, and name the issuer', () => {
    withEnv(undefined, () => {
      expect(parse({ users: [admin] }).adminAuth?.mfa).toBeUndefined()
      expect(parse({ users: [admin], mfa: { key: KEY } }).adminAuth?.mfa).toEqual({
        key: KEY,
        issuer: 'flowadmin',
        require: 'none',
      })
      expect(parse({ users: [admin], mfa: { key: KEY, issuer: 'Plant 4' } }).adminAuth?.mfa).toEqual({
        key: KEY,
        issuer: 'Plant 4',
        require: 'none',
      })
    })
    withEnv(`${KEY}-env`, () => {
      expect(parse({ users: [admin] }).adminAuth?.mfa).toEqual({
        key: `${KEY}-env`,
        issuer: 'flowadmin',
        require: 'none',
      })
      expect(parse({ users: [admin], mfa: { key: KEY } }).adminAuth?.mfa?.key).toBe(KEY)
    })
  })

  it('take who must have a second factor: none, everyone, or holders of permissions; refuse anything else', () => {
    withEnv(undefined, () => {
      for (const require of ['none', 'everyone', ['*'], ['flows.write', 'nodes.write']])
        expect(parse({ users: [admin], mfa: { key: KEY, require } }).adminAuth?.mfa?.require).toEqual(require)
      for (const require of ['admins', [], ['not a permission'], true])
        expect(() => parse({ users: [admin], mfa: { key: KEY, require } })).toThrow(/adminAuth\.mfa\.require/)
    })
  })

  it('refuse a short key, and mfa without a key, saying where the key goes', () => {
    withEnv(undefined, () => {
      expect(() => parse({ users: [admin], mfa: { key: 'short' } })).toThrow(
        'settings.json: adminAuth.mfa.key: must have at least 32 characters',
      )
      expect(() => parse({ users: [admin], mfa: {} })).toThrow(
        'settings.json: adminAuth.mfa.key: is required: set it here or in the environment as FLOWADMIN_MFA_KEY',
      )
      expect(() => parse({ users: [admin], mfa: { key: KEY, other: 1 } })).toThrow(/adminAuth\.mfa/)
    })
    withEnv('short', () => {
      expect(() => parse({ users: [admin] })).toThrow(
        'settings.json: adminAuth.mfa.key: FLOWADMIN_MFA_KEY must have at least 32 characters',
      )
    })
  })
})

describe('passkey settings', () => {
  const parse = (adminAuth: unknown) => parseSettings({ adminAuth }, 'settings.json', '/srv')
  const webauthn = (value: unknown) => parse({ users: [admin], webauthn: value }).adminAuth?.webauthn

  it('take the relying party id, its name (flowadmin by default) and its origins', () => {
    expect(parse({ users: [admin] }).adminAuth?.webauthn).toBeUndefined()
    expect(
      webauthn({ rpId: 'example.com', origins: ['https://admin.example.com', 'https://example.com:8443'] }),
    ).toEqual({
      rpId: 'example.com',
      rpName: 'flowadmin',
      origins: ['https://admin.example.com', 'https://example.com:8443'],
    })
    expect(webauthn({ rpId: 'localhost', rpName: 'Plant 4', origins: ['http://localhost:1880'] })).toEqual({
      rpId: 'localhost',
      rpName: 'Plant 4',
      origins: ['http://localhost:1880'],
    })
  })

  it('refuse origins that are not bare http(s) origins on the relying party, and ids that are no host name', () => {
    const refused = (value: unknown) => {
      try {
        webauthn(value)
      } catch (error) {
        return (error as Error).message
      }
      throw new Error('accepted')
    }
    expect(refused({ rpId: 'example.com', origins: ['https://evil.com'] })).toBe(
      "settings.json: adminAuth.webauthn.origins: https://evil.com is not on example.com: each origin's host must be rpId or end with .example.com",
    )
    expect(refused({ rpId: 'example.com', origins: ['https://notexample.com'] })).toMatch(
      /is not on example\.com/,
    )
    for (const origin of [
      'https://example.com/admin',
      'https://example.com/',
      'ftp://example.com',
      'example.com',
      'https://u:p@example.com',
    ])
      expect(refused({ rpId: 'example.com', origins: [origin] })).toMatch(
        /adminAuth\.webauthn\.origins.*must be an http\(s\) origin/,
      )
    for (const rpId of ['127.0.0.1', 'https://example.com', 'example.com:443', 'Example.com'])
      expect(refused({ rpId, origins: ['https://example.com'] })).toMatch(
        /adminAuth\.webauthn\.rpId.*host name/,
      )
    expect(refused({ rpId: 'example.com', origins: [] })).toMatch(/origins.*at least one origin/)
    expect(refused({ rpId: 'example.com' })).toMatch(/adminAuth\.webauthn\.origins/)
    expect(refused({ rpId: 'example.com', origins: ['https://example.com'], rpNme: 'x' })).toMatch(/rpName/)
  })
})
