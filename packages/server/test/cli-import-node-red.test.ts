// `flowadmin import-node-red SETTINGS_JS`, the built command on Node-RED settings files written as
// Node-RED's own template writes them, with bcrypt hashes made by the bcryptjs Node-RED uses: the
// flowadmin settings on stdout, what was left out and the next steps on stderr, and the settings
// printed start a real flowadmin where the Node-RED users log in with their passwords.

import { writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import * as path from 'node:path'
import { describe, expect, it } from 'vitest'
import { logEntries, runCli, startBuiltServer, useUserDir } from './cli-process.js'

/** bcryptjs as Node-RED's editor API loads it: what `node-red admin hash-pw` hashes with. */
function nodeRedBcrypt(): { hashSync(password: string, rounds: number): string } {
  const fromNodeRed = createRequire(createRequire(import.meta.url).resolve('node-red/package.json'))
  return createRequire(fromNodeRed.resolve('@node-red/editor-api/package.json'))('bcryptjs')
}

const ADMIN_HASH = nodeRedBcrypt().hashSync('admin-pw', 8)
const VIEWER_HASH = nodeRedBcrypt().hashSync('viewer-pw', 8)

const folder = useUserDir('import-node-red')

/** Writes `settings.js` in the folder with this source. */
const writeSettingsJs = (source: string) => writeFile(path.join(folder.userDir, 'settings.js'), source)

/** `flowadmin <args>` in the folder, to its end. */
async function run(...args: string[]) {
  const cli = runCli(args, { cwd: folder.userDir })
  const code = await cli.exited
  return { code, stdout: cli.stdout, stderr: cli.stderr }
}

const importSettings = () => run('import-node-red', 'settings.js')

/** A settings.js as Node-RED's template has it, adminAuth filled in. */
const NODE_RED_SETTINGS = `// Node-RED's settings file
const path = require('node:path')
console.log('settings loaded from', path.basename(__filename))

module.exports = {
  flowFile: 'flows.json',
  uiPort: process.env.PORT || 1880,
  adminAuth: {
    type: "credentials",
    users: [{
      username: "admin",
      password: "${ADMIN_HASH}",
      permissions: "*"
    }, {
      username: "viewer",
      password: "${VIEWER_HASH}",
      permissions: ["flows.read", "nodes.read"]
    }],
    default: { permissions: "read" },
    sessionExpiryTime: 86400
  },
  functionGlobalContext: { os: require('node:os') },
  logging: { console: { level: "info", metrics: false, audit: false } },
}
`

describe('flowadmin import-node-red', () => {
  it('prints the users, permissions, anonymous access and session lifetime as flowadmin settings', async () => {
    await writeSettingsJs(NODE_RED_SETTINGS)
    const imported = await importSettings()
    expect(imported.code).toBe(0)
    // stdout is the JSON alone: what settings.js prints goes to stderr.
    expect(JSON.parse(imported.stdout)).toEqual({
      adminAuth: {
        type: 'credentials',
        users: [
          { username: 'admin', password: ADMIN_HASH, permissions: '*' },
          { username: 'viewer', password: VIEWER_HASH, permissions: ['flows.read', 'nodes.read'] },
        ],
        default: { permissions: 'read' },
        sessionExpiryTime: 86400,
      },
    })
    const lines = imported.stderr.split('\n')
    expect(lines.slice(0, 3)).toEqual([
      'settings loaded from settings.js',
      'flowadmin: imported from settings.js: 2 users (admin, viewer)',
      'flowadmin: their bcrypt password hashes are kept as they are: flowadmin verifies them, and warns at each start until each is replaced with a hash from `flowadmin hash-pw`',
    ])
    expect(imported.stderr).not.toContain('warning')
  })

  it("tells how to add the Node-RED instances and prints each instance's settings.js lines", async () => {
    await writeSettingsJs(NODE_RED_SETTINGS)
    const { stderr } = await importSettings()
    expect(stderr).toContain('     flowadmin secret --id node-red   # line 1: the secret')
    expect(stderr).toContain('     "resourceServers": [<the entry from flowadmin secret>]')
    // The two exports of @flowadmin/node-red's README, sharing one options object, with the
    // anonymous access the instance had.
    expect(stderr).toContain(
      [
        "     const flowadmin = require('@flowadmin/node-red')",
        '',
        '     const options = {',
        "       url: 'https://flowadmin.example:1880', // flowadmin's address, as the instance reaches it",
        "       clientId: 'node-red',",
        '       clientSecret: process.env.FLOWADMIN_SECRET,',
        '     }',
        '',
        '     module.exports = {',
        '       // ...',
        '       adminAuth: { ...flowadmin.adminAuth(options), default: { permissions: "read" } },',
        '       httpAdminMiddleware: flowadmin.httpAdminMiddleware(options),',
        '     }',
      ].join('\n'),
    )
  })

  it("keeps an instance's own httpAdminMiddleware as the middleware option", async () => {
    await writeSettingsJs(`module.exports = {
  httpAdminMiddleware: function (req, res, next) { next() },
  adminAuth: { type: "credentials", users: [{ username: "admin", password: "${ADMIN_HASH}", permissions: "*" }] },
}`)
    const { code, stderr } = await importSettings()
    expect(code).toBe(0)
    expect(stderr).toContain(
      '       middleware: httpAdminMiddleware, // the httpAdminMiddleware settings.js has: it runs first\n',
    )
    expect(stderr).toContain('       adminAuth: flowadmin.adminAuth(options),\n')
  })

  it('names each function it cannot convert on stderr, and imports the rest', async () => {
    await writeSettingsJs(`module.exports = {
  adminAuth: {
    type: "credentials",
    users: [{ username: "admin", password: "${ADMIN_HASH}", permissions: "*" }],
    authenticate: function (username, password) { return Promise.resolve(null) },
    tokens: function (token) { return Promise.resolve(null) },
    tokenHeader: "x-api-token",
    default: function () { return Promise.resolve({ anonymous: true, permissions: "read" }) },
  },
}`)
    const imported = await importSettings()
    expect(imported.code).toBe(0)
    expect(JSON.parse(imported.stdout)).toEqual({
      adminAuth: {
        type: 'credentials',
        users: [{ username: 'admin', password: ADMIN_HASH, permissions: '*' }],
      },
    })
    expect(imported.stderr.split('\n').filter((line) => line.includes('warning'))).toEqual([
      'flowadmin: warning: adminAuth.default is a function: it cannot be converted, so no anonymous access is imported (adminAuth.default.permissions gives some)',
      "flowadmin: warning: adminAuth.authenticate is a function (a password check of its own): it cannot be converted and is left out; flowadmin checks each imported user's password against the hash in the settings",
      'flowadmin: warning: adminAuth.tokens is a function (tokens it accepts besides its own): it cannot be converted and is left out; flowadmin accepts only the tokens it issued (API tokens: `flowadmin tokens create`)',
      "flowadmin: warning: adminAuth.tokenHeader goes with Node-RED's tokens function: left out",
    ])
  })

  it('users given by a function leave nothing to import: the warning, then the reason, exit 2', async () => {
    await writeSettingsJs(`module.exports = {
  adminAuth: {
    type: "credentials",
    users: function (username) { return Promise.resolve(null) },
    authenticate: function (username, password) { return Promise.resolve(null) },
  },
}`)
    expect(await importSettings()).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'flowadmin: warning: adminAuth.users is a function (Node-RED asks it for each user by name): it cannot be converted, so no user is imported; list them in adminAuth.users of the flowadmin settings, with hashes from `flowadmin hash-pw`\n' +
        "flowadmin: warning: adminAuth.authenticate is a function (a password check of its own): it cannot be converted and is left out; flowadmin checks each imported user's password against the hash in the settings\n" +
        "flowadmin: settings.js: cannot be imported as it is; flowadmin's settings refuse:\n" +
        'flowadmin: settings.js: adminAuth.users: must list at least one user\n',
    })
  })

  it('leaves out users without a password hash, keeps the last of a name listed twice, and names refused fields where settings.js has them', async () => {
    await writeSettingsJs(`module.exports = {
  adminAuth: {
    type: "credentials",
    users: [
      { username: "sso-only", permissions: "*" },
      { username: "admin", password: "${ADMIN_HASH}", permissions: "*" },
      { username: "plain", password: "not-a-hash", permissions: "*" },
      { username: "viewer", password: "${VIEWER_HASH}", permissions: ["flows.read", "Flows.Write"] },
      { username: "admin", password: "${ADMIN_HASH}", permissions: "read" },
    ],
  },
}`)
    const imported = await importSettings()
    expect(imported).toMatchObject({ code: 2, stdout: '' })
    expect(imported.stderr).toBe(
      'flowadmin: warning: adminAuth.users lists "admin" more than once: the last one is imported, as Node-RED uses it\n' +
        'flowadmin: warning: user "sso-only" has no password: left out (give it a hash from `flowadmin hash-pw` to log in at flowadmin)\n' +
        'flowadmin: warning: user "plain": the password is not a bcrypt hash, so Node-RED\'s password login never let it in: left out (give it a hash from `flowadmin hash-pw` to log in at flowadmin)\n' +
        "flowadmin: settings.js: cannot be imported as it is; flowadmin's settings refuse:\n" +
        'flowadmin: settings.js: adminAuth.users[3].permissions[1]: "Flows.Write" is not a permission (use *, read, write, *.read, *.write, or <resource>.read|write)\n',
    )
    // The password is never repeated.
    expect(imported.stderr).not.toContain('not-a-hash')
  })

  it('says a strategy login cannot be converted', async () => {
    await writeSettingsJs(`module.exports = {
  adminAuth: {
    type: "strategy",
    strategy: { name: "github", label: "Sign in with GitHub", strategy: function () {}, options: {} },
    users: [{ username: "alice", permissions: "*" }, { username: "admin", password: "${ADMIN_HASH}", permissions: "*" }],
  },
}`)
    const imported = await importSettings()
    expect(imported.code).toBe(0)
    expect(JSON.parse(imported.stdout).adminAuth.users).toEqual([
      { username: 'admin', password: ADMIN_HASH, permissions: '*' },
    ])
    expect(imported.stderr).toContain(
      'flowadmin: warning: adminAuth.type is "strategy" (a Passport login such as OAuth): it cannot be converted; flowadmin logs users in with passwords, so only users with a password hash are imported\n',
    )
    expect(imported.stderr).toContain(
      "flowadmin: warning: adminAuth.strategy goes with Node-RED's strategy login: left out\n",
    )
  })
})

describe('flowadmin import-node-red, refusing', () => {
  it('a file that is not there', async () => {
    expect(await run('import-node-red', 'missing.js')).toEqual({
      code: 2,
      stdout: '',
      stderr: 'flowadmin: missing.js: file not found\n',
    })
  })

  it('a settings file without adminAuth: nothing to import', async () => {
    await writeSettingsJs('module.exports = {\n  uiPort: 1880,\n  // adminAuth: {...}\n}\n')
    expect(await importSettings()).toEqual({
      code: 2,
      stdout: '',
      stderr: 'flowadmin: settings.js has no adminAuth: nothing to import\n',
    })
  })

  it('a settings file that throws: its message, without a stack', async () => {
    await writeSettingsJs(
      'const secret = process.env.NOPE\nif (!secret) throw new Error("NOPE is not set")\n',
    )
    expect(await importSettings()).toEqual({
      code: 2,
      stdout: '',
      stderr: 'flowadmin: settings.js: cannot load: NOPE is not set\n',
    })
  })

  it('a settings file that requires what is not there: the first line of the message only', async () => {
    await writeSettingsJs(
      'const auth = require("./user-authentication")\nmodule.exports = { adminAuth: auth }\n',
    )
    expect(await importSettings()).toEqual({
      code: 2,
      stdout: '',
      stderr: "flowadmin: settings.js: cannot load: Cannot find module './user-authentication'\n",
    })
  })

  it('a settings file with a syntax error: where it is', async () => {
    await writeSettingsJs('module.exports = {\n  adminAuth: { type: "credentials" users: [] }\n}\n')
    expect(await importSettings()).toEqual({
      code: 2,
      stdout: '',
      stderr: "flowadmin: settings.js: cannot load: Unexpected identifier 'users' (line 2)\n",
    })
  })

  it('usage mistakes: no file, two files, an unknown option', async () => {
    const usage = 'flowadmin: Run "flowadmin import-node-red --help" for usage.\n'
    expect(await run('import-node-red')).toEqual({
      code: 2,
      stdout: '',
      stderr: `flowadmin: import-node-red needs the Node-RED settings.js to read\n${usage}`,
    })
    expect(await run('import-node-red', 'a.js', 'b.js')).toEqual({
      code: 2,
      stdout: '',
      stderr: `flowadmin: import-node-red reads one settings.js, not also "b.js"\n${usage}`,
    })
    const unknown = await run('import-node-red', '--settings', 'settings.js')
    expect(unknown).toMatchObject({ code: 2, stdout: '' })
    expect(unknown.stderr).toMatch(/^flowadmin: Unknown option '--settings'/)
    expect(unknown.stderr.endsWith(usage)).toBe(true)
  })
})

describe('flowadmin import-node-red --help', () => {
  it('prints its usage, options and exit codes, and the command is listed', async () => {
    const help = await run('import-node-red', '--help')
    expect(help).toMatchObject({ code: 0, stderr: '' })
    expect(help.stdout).toMatch(/^Usage: flowadmin import-node-red SETTINGS_JS\n/)
    expect(help.stdout).toContain('flowadmin import-node-red settings.js > flowadmin.json')
    expect(help.stdout).toMatch(/-h, --help +show this help/)
    expect(help.stdout).toMatch(/Exit codes: 0 success, 2 usage error, or a SETTINGS_JS that is missing/)
    expect((await run('help', 'import-node-red')).stdout).toBe(help.stdout)
    expect((await run('--help')).stdout).toMatch(
      /^ {2}import-node-red {2}Print flowadmin settings made from the adminAuth of a Node-RED settings\.js$/m,
    )
  })
})

describe('the settings printed, started', () => {
  it('start a flowadmin where the Node-RED users log in with their passwords, and the instances with the secret of the steps', async () => {
    await writeSettingsJs(NODE_RED_SETTINGS)
    const imported = await importSettings()
    expect(imported.code).toBe(0)

    // Step 1 and 2 of the instructions: a secret and its entry by `flowadmin secret`, and the
    // resource server fragment printed, filled in.
    const command = /^ +flowadmin (secret [^#]*?) +#/m.exec(imported.stderr)?.[1]
    expect(command).toBeDefined()
    const made = runCli(command?.split(' ') ?? [])
    expect(await made.exited).toBe(0)
    const [secret, entry] = made.stdout.split('\n')
    const fragment = /^ +("resourceServers": .*)$/m.exec(imported.stderr)?.[1]
    expect(fragment).toBeDefined()
    const resourceServers = JSON.parse(
      `{${fragment?.replace('<the entry from flowadmin secret>', entry ?? '')}}`,
    )
    const settings = JSON.parse(imported.stdout)
    Object.assign(settings.adminAuth, resourceServers)
    const settingsFile = path.join(folder.userDir, 'flowadmin.json')
    const { run: server, url } = await startBuiltServer(settingsFile, { settings })
    const login = (username: string, password: string, headers: Record<string, string> = {}, client = {}) =>
      fetch(`${url}/auth/token`, {
        method: 'POST',
        headers,
        body: new URLSearchParams({ grant_type: 'password', username, password, scope: '', ...client }),
      })

    const admin = await login('admin', 'admin-pw', {}, { client_id: 'service-editor', scope: '*' })
    expect(admin.status).toBe(200)
    expect(await admin.json()).toMatchObject({ token_type: 'Bearer', expires_in: 86400 })
    expect((await login('admin', 'wrong-pw', {}, { client_id: 'service-editor' })).status).toBe(401)

    // As a Node-RED instance logs its editor's users in, with the secret of step 1.
    const basic = { authorization: `Basic ${Buffer.from(`node-red:${secret}`).toString('base64')}` }
    const viewer = await login('viewer', 'viewer-pw', basic)
    expect(viewer.status).toBe(200)
    const { access_token: token } = (await viewer.json()) as { access_token: string }
    // and checks the token's user and permissions, as imported.
    const introspected = await fetch(`${url}/auth/introspect`, {
      method: 'POST',
      headers: basic,
      body: new URLSearchParams({ token }),
    })
    expect(await introspected.json()).toMatchObject({
      active: true,
      username: 'viewer',
      scope: 'flows.read nodes.read',
    })

    // default: anyone may read.
    expect((await fetch(`${url}/nodes`, { headers: { accept: 'application/json' } })).status).toBe(200)

    // The bcrypt hashes are verified, and the start said they should be replaced.
    const warnings = logEntries(server.stderr).filter((entry) => entry.level === 'warn')
    expect(warnings.map((entry) => entry.msg).join('\n')).toContain(
      'user admin: the password is a bcrypt hash (from Node-RED)',
    )
  })
})
