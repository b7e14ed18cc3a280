// The examples under Node, Bun, Deno and workerd, end to end over HTTP: the same core and HTTP adapter,
// built once, with the users' hashes made by the built `flowadmin hash-pw`.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { requireBuild, runCli } from '../../../packages/server/test/cli-process.js'
import { buildWorker, login, RUNTIMES, type Started, startExample } from '../runtimes.mjs'

const ADMIN = { username: 'admin', password: 'pässwörd ✓ admin' }
const VIEWER = { username: 'viewer', password: 'viewer-secret' }
const TEXT_TOOLS = '@flowadmin-examples/text-tools'

async function hashPw(password: string): Promise<string> {
  const run = runCli(['hash-pw'], { input: `${password}\n` })
  expect(await run.exited).toBe(0)
  return run.stdout.trim()
}

let adminAuth: string
let folder: string
beforeAll(async () => {
  requireBuild()
  await buildWorker()
  adminAuth = JSON.stringify({
    users: [
      { username: ADMIN.username, password: await hashPw(ADMIN.password), permissions: '*' },
      { username: VIEWER.username, password: await hashPw(VIEWER.password), permissions: 'read' },
    ],
  })
  folder = await mkdtemp(join(tmpdir(), 'flowadmin-runtimes-'))
})
afterAll(() => rm(folder, { recursive: true, force: true }))

describe.each(RUNTIMES)('$name', (runtime) => {
  let server: Started | null = null
  afterEach(async () => {
    await server?.stop()
    server = null
  })
  const start = async (db: string) => {
    server = await startExample(runtime, { FLOWADMIN_ADMIN_AUTH: adminAuth, FLOWADMIN_DB: join(folder, db) })
    return server.url
  }
  const tokenOf = async (response: Response) => {
    expect(response.status).toBe(200)
    return ((await response.json()) as { access_token: string }).access_token
  }
  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` })
  const toggle = (url: string, token: string, module: string, enabled: boolean) =>
    fetch(`${url}/nodes/${module}`, {
      method: 'PUT',
      headers: { ...bearer(token), 'Content-Type': 'application/json' },
      body: JSON.stringify({ enabled }),
    })
  const enabledFlags = async (url: string, token: string, module: string) => {
    const response = await fetch(`${url}/nodes/${module}`, { headers: bearer(token) })
    expect(response.status).toBe(200)
    return ((await response.json()) as { nodes: Array<{ enabled: boolean }> }).nodes.map((set) => set.enabled)
  }

  it('tells the login scheme, logs in with a hash-pw hash, and refuses bad credentials alike', async () => {
    const url = await start(`${runtime.name}-login.db`)
    const scheme = await fetch(`${url}/auth/login`)
    expect(scheme.status).toBe(200)
    expect(scheme.headers.get('x-content-type-options')).toBe('nosniff')
    expect(await scheme.json()).toMatchObject({
      type: 'credentials',
      prompts: [{ id: 'username' }, { id: 'password' }],
    })

    const token = await tokenOf(await login(url, ADMIN))
    const settings = await fetch(`${url}/settings`, { headers: bearer(token) })
    expect(await settings.json()).toEqual({
      version: '0.1.0',
      user: { username: 'admin', permissions: ['*'] },
    })

    for (const wrong of [
      { username: ADMIN.username, password: 'pässwörd ✓ admiN' },
      { username: 'nobody', password: ADMIN.password },
    ]) {
      const refused = await login(url, wrong)
      expect(refused.status).toBe(401)
      expect(await refused.text()).toBe('')
    }
    expect((await fetch(`${url}/settings`)).status).toBe(401)
  })

  it('toggles a module all or none, refuses one whose types are in use, and checks the scope', async () => {
    const url = await start(`${runtime.name}-toggle.db`)
    const admin = await tokenOf(await login(url, ADMIN))
    const off = await toggle(url, admin, TEXT_TOOLS, false)
    expect(off.status).toBe(200)
    expect(
      ((await off.json()) as { nodes: Array<{ enabled: boolean }> }).nodes.map((set) => set.enabled),
    ).toEqual([false, false])
    const inUse = await toggle(url, admin, 'flowadmin-example-greeting', false)
    expect(inUse.status).toBe(400)
    expect(await inUse.json()).toEqual({
      code: 'type_in_use',
      message: 'Type in use: greeting',
      types: ['greeting'],
    })

    const viewer = await tokenOf(await login(url, VIEWER, 'read'))
    const denied = await toggle(url, viewer, TEXT_TOOLS, true)
    expect(denied.status).toBe(401)
    expect(denied.headers.get('www-authenticate')).toContain('insufficient_scope')
    expect(await enabledFlags(url, viewer, TEXT_TOOLS)).toEqual([false, false])
  })

  it('revokes a token: refused at once afterwards', async () => {
    const url = await start(`${runtime.name}-revoke.db`)
    const token = await tokenOf(await login(url, ADMIN))
    const revoked = await fetch(`${url}/auth/revoke`, {
      method: 'POST',
      headers: bearer(token),
      body: new URLSearchParams({ token }),
    })
    expect(revoked.status).toBe(200)
    expect(await revoked.text()).toBe('')
    const after = await fetch(`${url}/settings`, { headers: bearer(token) })
    expect(after.status).toBe(401)
    expect(after.headers.get('www-authenticate')).toContain('invalid_token')
  })

  it('creates a named API token shown once, lists it, acts with it, and ends it', async () => {
    const url = await start(`${runtime.name}-api.db`)
    const session = await tokenOf(await login(url, ADMIN))
    const created = await fetch(`${url}/auth/tokens`, {
      method: 'POST',
      headers: { ...bearer(session), 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'deploy bot', scope: 'read' }),
    })
    expect(created.status).toBe(201)
    const api = (await created.json()) as { id: string; token: string }
    expect(api.token).toMatch(/^fa_[A-Za-z0-9_-]{43}$/)
    expect(await enabledFlags(url, api.token, TEXT_TOOLS)).toEqual([true, true])
    expect((await toggle(url, api.token, TEXT_TOOLS, false)).status).toBe(401)

    const listed = await fetch(`${url}/auth/tokens`, { headers: bearer(session) })
    const { tokens } = (await listed.json()) as {
      tokens: Array<{ id: string; kind: string; name: string | null }>
    }
    expect(tokens.map(({ kind, name }) => [kind, name])).toEqual([
      ['session', null],
      ['api', 'deploy bot'],
    ])
    expect(JSON.stringify(tokens)).not.toContain(api.token)

    expect(
      (await fetch(`${url}/auth/tokens/${api.id}`, { method: 'DELETE', headers: bearer(session) })).status,
    ).toBe(204)
    expect((await fetch(`${url}/settings`, { headers: bearer(api.token) })).status).toBe(401)
  })

  it('throttles repeated failures with 429 and Retry-After, without checking the password', async () => {
    const url = await start(`${runtime.name}-throttle.db`)
    for (let i = 0; i < 5; i++)
      expect((await login(url, { ...ADMIN, password: `guess ${i}` })).status).toBe(401)
    const throttled = await login(url, ADMIN)
    expect(throttled.status).toBe(429)
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0)
  })

  it(
    runtime.persists
      ? 'keeps tokens, revocations and module state across a restart (a SQLite file); a new password ends the tokens'
      : 'starts afresh after a restart (the memory store lives as long as the isolate)',
    async () => {
      let url = await start(`${runtime.name}-restart.db`)
      const kept = await tokenOf(await login(url, ADMIN))
      const gone = await tokenOf(await login(url, ADMIN))
      expect(
        (
          await fetch(`${url}/auth/revoke`, {
            method: 'POST',
            headers: bearer(kept),
            body: new URLSearchParams({ token: gone }),
          })
        ).status,
      ).toBe(200)
      expect((await toggle(url, kept, TEXT_TOOLS, false)).status).toBe(200)
      await server?.stop()

      url = await start(`${runtime.name}-restart.db`)
      expect((await fetch(`${url}/settings`, { headers: bearer(gone) })).status).toBe(401)
      const again = await fetch(`${url}/settings`, { headers: bearer(kept) })
      if (runtime.persists) {
        expect(again.status).toBe(200)
        expect(await enabledFlags(url, kept, TEXT_TOOLS)).toEqual([false, false])
        // A token is worth what its user is worth now: a new password ends it.
        await server?.stop()
        const changed = JSON.parse(adminAuth) as { users: Array<{ password: string }> }
        changed.users[0] = { ...changed.users[0], password: await hashPw('a new password') }
        server = await startExample(runtime, {
          FLOWADMIN_ADMIN_AUTH: JSON.stringify(changed),
          FLOWADMIN_DB: join(folder, `${runtime.name}-restart.db`),
        })
        expect((await fetch(`${server.url}/settings`, { headers: bearer(kept) })).status).toBe(401)
      } else {
        expect(again.status).toBe(401)
        expect(await enabledFlags(url, await tokenOf(await login(url, ADMIN)), TEXT_TOOLS)).toEqual([
          true,
          true,
        ])
      }
    },
  )
})

describe.each(RUNTIMES.filter((runtime) => runtime.name !== 'workerd'))(
  '$name, badly configured',
  (runtime) => {
    it.each([
      ['', /FLOWADMIN_ADMIN_AUTH is not set/],
      ['{"users": [', /FLOWADMIN_ADMIN_AUTH is not JSON/],
      [
        '{"users":[{"username":"admin","password":"plain","permissions":"*"}]}',
        /users\[0\]\.password must be an argon2 hash/,
      ],
      [
        '{"users":[{"username":"a","password":"$argon2id$x","permissions":"*"}],"sessionExpiryTime":-1}',
        /sessionExpiryTime/,
      ],
    ])('refuses to start with FLOWADMIN_ADMIN_AUTH=%j, saying why', async (text, message) => {
      const refused = startExample(runtime, {
        FLOWADMIN_ADMIN_AUTH: text,
        FLOWADMIN_DB: join(folder, 'bad.db'),
      })
      await expect(refused).rejects.toThrow(message)
      await expect(refused).rejects.toThrow(/flowadmin cannot start: /)
      await expect(refused).rejects.not.toThrow(/\n\s+at /)
    })
  },
)
