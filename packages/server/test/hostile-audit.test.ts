// The audit file after a scripted session over the built server: one JSON line per security
// event, with time, event, user, client and address, and never a password or a token.
import { createHash } from 'node:crypto'
import { readFile, stat } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { ADMIN_PASSWORD, login, send, tokenOf, useWorkspace, VIEWER_PASSWORD } from './hostile-http.js'

const workspace = useWorkspace()

const ADMIN_AT = '127.0.0.50'
const VIEWER_AT = '127.0.0.51'
const GUESSER_AT = '127.0.0.52'
const TEXT_TOOLS = '@flowadmin-examples/text-tools'

describe('the audit log file', () => {
  it('records every security event of a session as one JSON line, without secrets', async () => {
    const { run, url } = await workspace.start()
    const startedAt = Date.now()

    const admin = await tokenOf(login(url, { username: 'admin', password: ADMIN_PASSWORD }, ADMIN_AT, 'json'))
    const viewer = await tokenOf(
      login(
        url,
        { username: 'viewer', password: VIEWER_PASSWORD, scope: 'read', client_id: 'service-editor' },
        VIEWER_AT,
      ),
    )
    for (let i = 0; i < 5; i++) {
      expect((await login(url, { username: 'admin', password: `guess-${i}` }, GUESSER_AT)).status).toBe(401)
    }
    expect((await login(url, { username: 'admin', password: ADMIN_PASSWORD }, GUESSER_AT)).status).toBe(429)

    const setEnabled = (token: string, enabled: boolean, from: string) =>
      send(url, {
        method: 'PUT',
        path: `/nodes/${TEXT_TOOLS}`,
        from,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ enabled }),
      })
    expect((await setEnabled(viewer, false, VIEWER_AT)).status).toBe(401)
    expect((await setEnabled(admin, false, ADMIN_AT)).status).toBe(200)
    // Setting the state a module already has changes nothing, so it is no event.
    expect((await setEnabled(admin, false, ADMIN_AT)).status).toBe(200)
    expect((await setEnabled(admin, true, ADMIN_AT)).status).toBe(200)

    const revoke = (caller: string, token: string, from: string) =>
      send(url, {
        method: 'POST',
        path: '/auth/revoke',
        from,
        headers: { authorization: `Bearer ${caller}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token }).toString(),
      })
    expect((await revoke(admin, viewer, ADMIN_AT)).status).toBe(200)
    expect((await revoke(admin, admin, ADMIN_AT)).status).toBe(200)
    // An unknown token revokes nothing: no event.
    const spare = await tokenOf(login(url, { username: 'admin', password: ADMIN_PASSWORD }, ADMIN_AT))
    expect((await revoke(spare, 'no-such-token', ADMIN_AT)).status).toBe(200)

    run.child.kill('SIGTERM')
    expect(await run.exited).toBe(0)
    const stoppedAt = Date.now()

    const text = await readFile(workspace.auditFile, 'utf8')
    const lines = text.split('\n')
    expect(lines.pop()).toBe('')
    const events = lines.map((line) => JSON.parse(line) as Record<string, unknown>)

    const actor = (user: string, client: string | null, address: string) => ({ user, client, address })
    const adminActor = actor('admin', 'service-admin', ADMIN_AT)
    const sets = [`${TEXT_TOOLS}/upper`, `${TEXT_TOOLS}/lower`]
    expect(events.every((event) => event.level === 'info')).toBe(true)
    expect(events.map(({ level, time, ...rest }) => rest)).toEqual([
      { event: 'login.succeeded', ...adminActor },
      { event: 'login.succeeded', ...actor('viewer', 'service-editor', VIEWER_AT) },
      ...Array(5).fill({ event: 'login.failed', ...actor('admin', 'service-admin', GUESSER_AT) }),
      {
        event: 'login.throttled',
        ...actor('admin', 'service-admin', GUESSER_AT),
        retryAfter: expect.any(Number),
      },
      {
        event: 'permission.denied',
        ...actor('viewer', 'service-editor', VIEWER_AT),
        permission: 'nodes.write',
      },
      { event: 'module.disabled', ...adminActor, module: TEXT_TOOLS, sets },
      { event: 'module.enabled', ...adminActor, module: TEXT_TOOLS, sets },
      { event: 'token.revoked', ...adminActor, owner: 'viewer', id: expect.stringMatching(/^[\w-]{16}$/) },
      { event: 'token.revoked', ...adminActor, owner: 'admin', id: expect.stringMatching(/^[\w-]{16}$/) },
      { event: 'login.succeeded', ...adminActor },
    ])

    // Each line starts with the same six fields, in order; times are ISO, in order, in the session.
    let previous = startedAt - 1_000
    for (const event of events) {
      expect(Object.keys(event).slice(0, 6)).toEqual(['level', 'time', 'event', 'user', 'client', 'address'])
      expect(event.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      const at = Date.parse(event.time as string)
      expect(at).toBeGreaterThanOrEqual(previous)
      expect(at).toBeLessThanOrEqual(stoppedAt)
      previous = at
    }

    const sha256 = (value: string) => createHash('sha256').update(value).digest('hex')
    for (const secret of [ADMIN_PASSWORD, VIEWER_PASSWORD, 'guess-0', 'guess-4', admin, viewer, spare]) {
      expect(text).not.toContain(secret)
    }
    for (const token of [admin, viewer, spare]) expect(text).not.toContain(sha256(token))
    expect(text).not.toMatch(/password|token"|access_token|\$argon2/i)
    expect((await stat(workspace.auditFile)).mode & 0o777).toBe(0o600)
  })
})
