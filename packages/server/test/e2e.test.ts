// The built `flowadmin` command on a real socket, a real SQLite file and real argon2 hashes,
// driven over HTTP as a user would drive it.
import { writeFile } from 'node:fs/promises'
import * as path from 'node:path'
import * as argon2 from 'argon2'
import { describe, expect, it } from 'vitest'
import { copyDemo, logEntries, runCli, startCli, useUserDir, writeSettings } from './cli-process.js'

const GREETING = 'flowadmin-example-greeting'
const TEXT_TOOLS = '@flowadmin-examples/text-tools'

// The demo's two example node modules and its flows, which use the `greeting` type.
const dir = useUserDir('e2e', (userDir) => copyDemo(userDir, { flows: true }))

const hash = (password: string) =>
  argon2.hash(password, { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 })

async function writeAuthSettings(): Promise<void> {
  await writeSettings(dir.settingsFile, {
    adminAuth: {
      type: 'credentials',
      users: [
        { username: 'admin', password: await hash('admin-pw'), permissions: '*' },
        { username: 'viewer', password: await hash('viewer-pw'), permissions: 'read' },
      ],
    },
  })
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
const json = { 'content-type': 'application/json' }

function login(url: string, body: Record<string, string>, as: 'form' | 'json') {
  return fetch(`${url}/auth/token`, {
    method: 'POST',
    headers: as === 'json' ? json : {},
    body: as === 'json' ? JSON.stringify(body) : new URLSearchParams(body),
  })
}

async function tokenFor(
  url: string,
  username: string,
  password: string,
  scope: string,
  as: 'form' | 'json',
  clientId: string,
) {
  const response = await login(
    url,
    { client_id: clientId, grant_type: 'password', scope, username, password },
    as,
  )
  expect(response.status).toBe(200)
  expect(response.headers.get('cache-control')).toBe('no-store')
  const body = (await response.json()) as { access_token: string; expires_in: number; token_type: string }
  expect(body).toEqual({ access_token: expect.any(String), expires_in: 604_800, token_type: 'Bearer' })
  return body.access_token
}

function setEnabled(url: string, module: string, enabled: boolean, token?: string) {
  return fetch(`${url}/nodes/${module}`, {
    method: 'PUT',
    headers: { ...json, ...(token === undefined ? {} : bearer(token)) },
    body: JSON.stringify({ enabled }),
  })
}

type ModuleBody = {
  name: string
  version: string
  nodes: Array<{ id: string; enabled: boolean; loaded: boolean }>
}
const states = (module: ModuleBody) =>
  module.nodes.map((set) => `${set.id} enabled=${set.enabled} loaded=${set.loaded}`)

describe('flowadmin start, with adminAuth', () => {
  it('walks login, settings, enable and disable, refusals and revoke, then keeps its state across a restart', async () => {
    await writeAuthSettings()
    const first = await dir.start()
    expect(first.line).toMatch(
      new RegExp(
        `^flowadmin listening on http://127\\.0\\.0\\.1:\\d+ \\(storage: ${literal(path.join(dir.userDir, 'flowadmin.db'))}, auth: on\\)$`,
      ),
    )
    const url = first.url

    // Scheme discovery.
    const scheme = await fetch(`${url}/auth/login`)
    expect(scheme.status).toBe(200)
    expect(await scheme.json()).toEqual({
      type: 'credentials',
      prompts: [
        { id: 'username', type: 'text', label: 'Username' },
        { id: 'password', type: 'password', label: 'Password' },
      ],
    })

    // Login by form and by JSON, with both client ids.
    const admin = await tokenFor(url, 'admin', 'admin-pw', '*', 'form', 'service-admin')
    const editor = await tokenFor(url, 'admin', 'admin-pw', '*', 'json', 'service-editor')
    await tokenFor(url, 'admin', 'admin-pw', '*', 'form', 'service-editor')
    await tokenFor(url, 'admin', 'admin-pw', '*', 'json', 'service-admin')
    const reader = await tokenFor(url, 'viewer', 'viewer-pw', 'read', 'json', 'service-admin')
    const wrong = await login(
      url,
      { client_id: 'service-admin', grant_type: 'password', scope: '*', username: 'admin', password: 'nope' },
      'form',
    )
    expect(wrong.status).toBe(401)
    expect(await wrong.text()).toBe('')

    // Settings, for the caller.
    const settings = await fetch(`${url}/settings`, { headers: bearer(admin) })
    expect(settings.status).toBe(200)
    expect(await settings.json()).toMatchObject({ version: expect.any(String), user: { username: 'admin' } })
    expect((await fetch(`${url}/settings`)).status).toBe(401)

    // Disable and enable a scoped module, with the slash encoded and raw.
    const disabled = await setEnabled(url, '@flowadmin-examples%2Ftext-tools', false, admin)
    expect(disabled.status).toBe(200)
    const disabledBody = (await disabled.json()) as ModuleBody
    expect(disabledBody.name).toBe(TEXT_TOOLS)
    expect(disabledBody.version).toBe('0.3.0')
    expect(states(disabledBody)).toEqual([
      `${TEXT_TOOLS}/upper enabled=false loaded=true`,
      `${TEXT_TOOLS}/lower enabled=false loaded=true`,
    ])
    const enabled = await setEnabled(url, TEXT_TOOLS, true, admin)
    expect(enabled.status).toBe(200)
    expect(states((await enabled.json()) as ModuleBody)).toEqual([
      `${TEXT_TOOLS}/upper enabled=true loaded=true`,
      `${TEXT_TOOLS}/lower enabled=true loaded=true`,
    ])
    expect((await setEnabled(url, '@flowadmin-examples%2Ftext-tools', false, admin)).status).toBe(200)

    // A type the deployed flows use cannot be disabled; nothing changes.
    const inUse = await setEnabled(url, GREETING, false, admin)
    expect(inUse.status).toBe(400)
    expect(await inUse.json()).toEqual({
      code: 'type_in_use',
      message: 'Type in use: greeting',
      types: ['greeting'],
    })
    const greeting = await setEnabled(url, GREETING, true, admin)
    expect(states((await greeting.json()) as ModuleBody)).toEqual([
      `${GREETING}/greeting enabled=true loaded=true`,
    ])

    // Unknown module: 404, empty.
    const unknown = await setEnabled(url, 'no-such-module', false, admin)
    expect(unknown.status).toBe(404)
    expect(await unknown.text()).toBe('')

    // A read-scope token may not write; the module is unchanged.
    const refused = await setEnabled(url, GREETING, false, reader)
    expect(refused.status).toBe(401)
    expect(refused.headers.get('www-authenticate')).toContain('error="insufficient_scope"')
    expect(await refused.text()).toBe('')
    expect((await fetch(`${url}/settings`, { headers: bearer(reader) })).status).toBe(200)

    // Revoke, then the token is refused.
    const revoke = await fetch(`${url}/auth/revoke`, {
      method: 'POST',
      headers: bearer(editor),
      body: new URLSearchParams({ token: editor }),
    })
    expect(revoke.status).toBe(200)
    expect(await revoke.text()).toBe('')
    const afterRevoke = await fetch(`${url}/settings`, { headers: bearer(editor) })
    expect(afterRevoke.status).toBe(401)
    expect(afterRevoke.headers.get('www-authenticate')).toContain('error="invalid_token"')

    // Restart on the same userDir: a clean exit, then the same state.
    first.run.child.kill('SIGTERM')
    expect(await first.run.exited).toBe(0)
    const second = await dir.start()
    const again = second.url

    expect((await fetch(`${again}/settings`, { headers: bearer(admin) })).status).toBe(200)
    expect((await fetch(`${again}/settings`, { headers: bearer(reader) })).status).toBe(200)
    expect((await fetch(`${again}/settings`, { headers: bearer(editor) })).status).toBe(401)

    // Still disabled, and so not loaded by this process; enabling loads it.
    const idle = await setEnabled(again, '@flowadmin-examples%2Ftext-tools', false, admin)
    expect(states((await idle.json()) as ModuleBody)).toEqual([
      `${TEXT_TOOLS}/upper enabled=false loaded=false`,
      `${TEXT_TOOLS}/lower enabled=false loaded=false`,
    ])
    const loaded = await setEnabled(again, TEXT_TOOLS, true, admin)
    expect(states((await loaded.json()) as ModuleBody)).toEqual([
      `${TEXT_TOOLS}/upper enabled=true loaded=true`,
      `${TEXT_TOOLS}/lower enabled=true loaded=true`,
    ])

    second.run.child.kill('SIGINT')
    expect(await second.run.exited).toBe(0)
    expect(logEntries(second.run.stderr)).toEqual([
      {
        level: 'info',
        time: expect.any(String),
        signal: 'SIGINT',
        graceSeconds: 10,
        msg: 'no new connections; finishing requests in flight, then stopping',
      },
      { level: 'info', time: expect.any(String), msg: 'stopped' },
    ])
  })

  it('logs audit events as JSON lines on stdout, without passwords or tokens', async () => {
    await writeAuthSettings()
    const { run, url } = await dir.start()
    const token = await tokenFor(url, 'admin', 'admin-pw', '*', 'form', 'service-admin')
    await login(
      url,
      {
        client_id: 'service-admin',
        grant_type: 'password',
        scope: '*',
        username: 'admin',
        password: 'bad-pw',
      },
      'json',
    )
    run.child.kill('SIGTERM')
    expect(await run.exited).toBe(0)
    const events = run.stdout
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => JSON.parse(line))
    expect(events).toEqual([
      {
        level: 'info',
        time: expect.any(String),
        event: 'login.succeeded',
        user: 'admin',
        client: 'service-admin',
        address: '127.0.0.1',
      },
      {
        level: 'info',
        time: expect.any(String),
        event: 'login.failed',
        user: 'admin',
        client: 'service-admin',
        address: '127.0.0.1',
      },
    ])
    for (const secret of ['admin-pw', 'bad-pw', token]) expect(run.stdout).not.toContain(secret)
  })
})

describe('flowadmin start, without adminAuth', () => {
  it('answers {} and leaves every route open, with a warning', async () => {
    await writeSettings(dir.settingsFile, { storage: 'memory' })
    const { run, url, line } = await dir.start()
    expect(line).toMatch(/\(storage: memory, auth: off\)$/)
    expect(await (await fetch(`${url}/auth/login`)).json()).toEqual({})
    const settings = await fetch(`${url}/settings`)
    expect(settings.status).toBe(200)
    expect(await settings.json()).toMatchObject({ user: { anonymous: true, permissions: ['*'] } })
    const disabled = await setEnabled(url, '@flowadmin-examples/text-tools', false)
    expect(disabled.status).toBe(200)
    expect((await fetch(`${url}/auth/token`, { method: 'POST' })).status).toBe(404)
    expect(logEntries(run.stderr)).toEqual([
      {
        level: 'warn',
        time: expect.any(String),
        msg: 'adminAuth is not set: the admin API is open to anyone who can reach it',
      },
    ])
  })

  it('writes its log for people to read with --pretty', async () => {
    await writeSettings(dir.settingsFile, { storage: 'memory' })
    const { run } = await dir.start({ args: ['--pretty'] })
    run.child.kill('SIGTERM')
    expect(await run.exited, run.stderr).toBe(0)
    const lines = run.stderr.trimEnd().split('\n')
    expect(lines[0]).toMatch(
      /^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} [+-]\d{4}\] WARN: adminAuth is not set: the admin API is open to anyone who can reach it$/,
    )
    expect(lines).toContainEqual(expect.stringMatching(/\] INFO: stopped$/))
    expect(lines).toContain('    signal: "SIGTERM"')
  })

  it('runs without a settings file on the --user-dir given, storing there', async () => {
    const { run, line, url } = await startCli(['--user-dir', path.basename(dir.userDir), '--port', '0'], {
      cwd: path.dirname(dir.userDir),
    })
    expect(line).toBe(
      `flowadmin listening on ${url} (storage: ${path.join(dir.userDir, 'flowadmin.db')}, auth: off)`,
    )
    expect((await setEnabled(url, TEXT_TOOLS, false)).status).toBe(200)
    run.child.kill('SIGTERM')
    expect(await run.exited).toBe(0)
  })

  it('refuses to listen on a non-loopback address without --allow-open-admin', async () => {
    await writeSettings(dir.settingsFile, {})
    const run = runCli(['start', '--settings', dir.settingsFile, '--port', '0', '--host', '0.0.0.0'])
    expect(await run.exited).toBe(2)
    expect(run.stdout).toBe('')
    expect(run.stderr).toMatch(/^flowadmin: refusing to listen on 0\.0\.0\.0: adminAuth is not set/)
    expect(run.stderr).toContain('--allow-open-admin')
  })
})

describe('flowadmin start, failing to start', () => {
  it('names the settings file and the field that is wrong', async () => {
    await writeSettings(dir.settingsFile, {
      adminAuth: {
        type: 'credentials',
        users: [{ username: 'admin', password: await hash('pw'), permissions: [] }],
      },
    })
    const run = runCli(['start', '--settings', dir.settingsFile, '--port', '0'])
    expect(await run.exited).toBe(2)
    expect(run.stderr).toBe(
      `flowadmin: ${dir.settingsFile}: adminAuth.users[0].permissions: must list at least one permission\n`,
    )
  })

  it('reports unknown settings', async () => {
    await writeSettings(dir.settingsFile, { uiport: 1880 })
    const run = runCli(['start', '--settings', 'settings.json', '--port', '0'], { cwd: dir.userDir })
    expect(await run.exited).toBe(2)
    expect(run.stderr).toBe('flowadmin: settings.json: uiport: unknown setting; did you mean uiPort?\n')
  })

  it('names a settings file that does not exist', async () => {
    const run = runCli(['start', '--settings', path.join(dir.userDir, 'missing.json')])
    expect(await run.exited).toBe(2)
    expect(run.stderr).toBe(`flowadmin: ${path.join(dir.userDir, 'missing.json')}: settings file not found\n`)
  })

  it('names a corrupt database file and leaves it as it was', async () => {
    await writeSettings(dir.settingsFile, {})
    const db = path.join(dir.userDir, 'flowadmin.db')
    await writeFile(db, 'not a database '.repeat(500))
    const run = runCli(['start', '--settings', dir.settingsFile, '--port', '0'])
    expect(await run.exited).toBe(1)
    expect(run.stderr).toContain(db)
    expect(run.stderr).not.toMatch(/\n\s+at /)
    expect(run.stdout).toBe('')
  })

  it('refuses a malformed port', async () => {
    const run = runCli(['start', '--port', 'eighty'])
    expect(await run.exited).toBe(2)
    expect(run.stderr).toContain('--port must be a whole number from 0 to 65535')
  })

  it('fails when the port is in use', async () => {
    await writeSettings(dir.settingsFile, { storage: 'memory' })
    const { url } = await dir.start()
    const port = new URL(url).port
    const run = runCli(['start', '--settings', dir.settingsFile, '--port', port])
    expect(await run.exited).toBe(1)
    expect(run.stderr).toContain(`flowadmin: cannot listen on 127.0.0.1:${port}: the port is already in use`)
  })
})

describe('flowadmin hash-pw', () => {
  it('hashes the first line piped to it with argon2id', async () => {
    const run = runCli(['hash-pw'], { input: 'correct horse battery\nsecond line\n' })
    expect(await run.exited).toBe(0)
    const printed = run.stdout.trim()
    expect(printed).toMatch(/^\$argon2id\$v=19\$m=19456,p=1,t=2\$/)
    expect(await argon2.verify(printed, 'correct horse battery')).toBe(true)
    expect(await argon2.verify(printed, 'correct horse battery\nsecond line')).toBe(false)
  })

  it('refuses an empty password', async () => {
    const run = runCli(['hash-pw'], { input: '\n' })
    expect(await run.exited).toBe(2)
    expect(run.stdout).toBe('')
    expect(run.stderr).toBe('flowadmin: the password is empty\n')
  })
})

/** `text` as a literal inside a regular expression. */
function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
