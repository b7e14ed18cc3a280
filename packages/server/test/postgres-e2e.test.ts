// Two built instances on one PostgreSQL database, over real sockets: one state between them.
import { describe, expect, it, vi } from 'vitest'
import { startBuiltServer } from './cli-process.js'
import {
  bearer,
  flags,
  login,
  moduleOn,
  prepareInstance,
  setEnabled,
  TEXT_TOOLS,
  tokenFrom,
  useInstancesOnOneDatabase,
} from './postgres-instances.js'

const database = useInstancesOnOneDatabase()

describe('two instances on one PostgreSQL database', () => {
  it('share tokens, revokes, failed-login counts and module state; B loads what A enables within a second', async () => {
    const postgres = { url: database.current().url, pool: 4 }
    const [settingsA, settingsB] = [await prepareInstance(postgres), await prepareInstance(postgres)]
    const a = await startBuiltServer(settingsA)
    const b = await startBuiltServer(settingsB)
    expect(a.line).toMatch(/\(storage: postgres 127\.0\.0\.1:\d+\/flowadmin_test_\w+, auth: on\)$/)

    // A token issued on A authenticates on B; revoked on B, it is refused on A at once.
    const token = await tokenFrom(a.url)
    expect((await fetch(`${b.url}/settings`, { headers: bearer(token) })).status).toBe(200)
    const revoke = await fetch(`${b.url}/auth/revoke`, {
      method: 'POST',
      headers: bearer(token),
      body: new URLSearchParams({ token }),
    })
    expect(revoke.status).toBe(200)
    const refused = await fetch(`${a.url}/settings`, { headers: bearer(token) })
    expect(refused.status).toBe(401)
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"')

    // Module state written by A is served by B.
    const admin = await tokenFrom(a.url)
    expect((await setEnabled(a.url, TEXT_TOOLS, false, admin)).status).toBe(200)
    expect(flags(await moduleOn(b.url, TEXT_TOOLS, admin))).toEqual([
      `${TEXT_TOOLS}/upper enabled=false loaded=true`,
      `${TEXT_TOOLS}/lower enabled=false loaded=true`,
    ])

    // A third instance starts while the module is disabled, so it loads none of its sets...
    const c = await startBuiltServer(await prepareInstance(postgres))
    expect(flags(await moduleOn(c.url, TEXT_TOOLS, admin))).toEqual([
      `${TEXT_TOOLS}/upper enabled=false loaded=false`,
      `${TEXT_TOOLS}/lower enabled=false loaded=false`,
    ])
    // ...until A enables it: C loads them by the announcement, within a second.
    const enabledAt = Date.now()
    expect((await setEnabled(a.url, TEXT_TOOLS, true, admin)).status).toBe(200)
    await vi.waitFor(
      async () =>
        expect(flags(await moduleOn(c.url, TEXT_TOOLS, admin))).toEqual([
          `${TEXT_TOOLS}/upper enabled=true loaded=true`,
          `${TEXT_TOOLS}/lower enabled=true loaded=true`,
        ]),
      { timeout: 1000, interval: 25 },
    )
    console.info(`the other instance reported loaded=true ${Date.now() - enabledAt} ms after the enable`)

    // Failed logins count across instances: five wrong passwords, alternating, throttle the sixth on either.
    for (let i = 0; i < 5; i++) {
      expect((await login(i % 2 === 0 ? a.url : b.url, 'wrong')).status).toBe(401)
    }
    const throttledA = await login(a.url)
    expect(throttledA.status).toBe(429)
    expect(Number(throttledA.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await login(b.url)).status).toBe(429)
    expect((await login(c.url)).status).toBe(429)
  })

  it('share the session inventory and API tokens: created on A, listed and used on B, all ended on B for A', async () => {
    const postgres = { url: database.current().url, pool: 4 }
    const a = await startBuiltServer(await prepareInstance(postgres))
    const b = await startBuiltServer(await prepareInstance(postgres))
    const session = await tokenFrom(a.url)
    const created = await fetch(`${a.url}/auth/tokens`, {
      method: 'POST',
      headers: { ...bearer(session), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'deploy bot' }),
    })
    expect(created.status).toBe(201)
    const api = ((await created.json()) as { token: string }).token

    const listed = await fetch(`${b.url}/auth/tokens`, { headers: bearer(api) })
    expect(listed.status).toBe(200)
    const { tokens } = (await listed.json()) as { tokens: Array<{ kind: string; name: string | null }> }
    expect(tokens.map((token) => `${token.kind} ${token.name}`).sort()).toEqual([
      'api deploy bot',
      'session null',
    ])

    // Sign out everywhere, on B: both tokens are refused on A at once.
    const ended = await fetch(`${b.url}/auth/tokens?user=admin`, { method: 'DELETE', headers: bearer(api) })
    expect(ended.status).toBe(200)
    expect(await ended.json()).toEqual({ revoked: 2 })
    expect((await fetch(`${a.url}/settings`, { headers: bearer(session) })).status).toBe(401)
    expect((await fetch(`${a.url}/settings`, { headers: bearer(api) })).status).toBe(401)
  })

  it('one instance killed with SIGKILL leaves the other serving with everything acknowledged intact', async () => {
    const postgres = { url: database.current().url, pool: 4 }
    const a = await startBuiltServer(await prepareInstance(postgres))
    const b = await startBuiltServer(await prepareInstance(postgres))

    // Acknowledged on A: tokens issued, one revoked, a module disabled.
    const tokens = await Promise.all(Array.from({ length: 5 }, () => tokenFrom(a.url)))
    const [revoked, ...kept] = tokens as [string, ...string[]]
    expect(
      (
        await fetch(`${a.url}/auth/revoke`, {
          method: 'POST',
          headers: bearer(revoked),
          body: new URLSearchParams({ token: revoked }),
        })
      ).status,
    ).toBe(200)
    expect((await setEnabled(a.url, TEXT_TOOLS, false, kept[0] as string)).status).toBe(200)

    // Logins in flight on A when it dies: each one A answered must hold on B.
    const inFlight = Array.from({ length: 12 }, () =>
      login(a.url)
        .then(async (response) =>
          // Logins beyond what the throttle lets verify at once are shed (503): not acknowledged.
          response.status === 200 ? ((await response.json()) as { access_token: string }).access_token : null,
        )
        .catch(() => null),
    )
    // Killed as soon as the first login is acknowledged, with the others still on their way.
    await new Promise<void>((resolve) => {
      for (const login of inFlight) login.then((token) => token !== null && resolve())
      Promise.all(inFlight).then(() => resolve())
    })
    a.run.child.kill('SIGKILL')
    expect(await a.run.exited).toBe('SIGKILL')
    const answered = (await Promise.all(inFlight)).filter((token) => token !== null)
    expect(answered.length).toBeGreaterThan(0)

    for (const token of [...kept, ...answered]) {
      expect((await fetch(`${b.url}/settings`, { headers: bearer(token) })).status).toBe(200)
    }
    expect((await fetch(`${b.url}/settings`, { headers: bearer(revoked) })).status).toBe(401)
    expect(flags(await moduleOn(b.url, TEXT_TOOLS, kept[0] as string))).toEqual([
      `${TEXT_TOOLS}/upper enabled=false loaded=true`,
      `${TEXT_TOOLS}/lower enabled=false loaded=true`,
    ])

    // B goes on serving writes and logins.
    expect((await setEnabled(b.url, TEXT_TOOLS, true, kept[0] as string)).status).toBe(200)
    expect((await login(b.url)).status).toBe(200)
  })
})
