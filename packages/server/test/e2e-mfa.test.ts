// A person's TOTP enrolment over a real socket with the built `flowadmin` command, argon2 hashes,
// a SQLite file and otpauth computing the codes: the secret is sealed in the file, recovery codes
// are kept hashed, and a server started with another key cannot use the secret.
import { readFile } from 'node:fs/promises'
import * as path from 'node:path'
import { openDatabase } from '@flowadmin/adapter-sqlite'
import { Secret, TOTP } from 'otpauth'
import { describe, expect, it } from 'vitest'
import { hashPassword } from '../src/index.js'
import { type BuiltServer, runCliToEnd, useUserDir, writeSettings } from './cli-process.js'
import { logInAs } from './password-grant.js'

const dir = useUserDir('e2e-mfa')
const KEY = 'the-key-of-this-test-forty-characters-xx'

/** Writes the settings: alice and the auditor, and `mfa` when given. */
async function writeUsers(mfa: Record<string, unknown> | undefined) {
  const users = [
    { username: 'alice', password: await hashPassword('alice-pw'), permissions: 'read' },
    { username: 'auditor', password: await hashPassword('auditor-pw'), permissions: '*' },
  ]
  const adminAuth = { users, ...(mfa && { mfa }) }
  await writeSettings(dir.settingsFile, { userDir: dir.userDir, auditLog: { file: 'audit.log' }, adminAuth })
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' })

async function login(url: string): Promise<string> {
  const res = await logInAs(url, 'alice', 'alice-pw', 'read')
  expect(res.status).toBe(200)
  return ((await res.json()) as { access_token: string }).access_token
}

const post = (url: string, route: string, token: string, body?: unknown) =>
  fetch(`${url}${route}`, {
    method: 'POST',
    headers: bearer(token),
    ...(body !== undefined && { body: JSON.stringify(body) }),
  })

async function stop(server: BuiltServer): Promise<void> {
  expect(await server.stop()).toBe(0)
}

const codeAt = (secret: string, timestamp: number) =>
  new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({
    timestamp,
  })

describe('TOTP enrolment over the built server', () => {
  it('confirms with a code from the secret, keeps only sealed secrets and hashed codes', async () => {
    await writeUsers({ key: KEY, issuer: 'Plant 4' })
    const server = await dir.start()
    const { url } = server
    const token = await login(url)
    const other = await login(url)

    const started = await post(url, '/auth/mfa/totp', token)
    expect(started.status).toBe(200)
    const { secret, uri, qr } = (await started.json()) as { secret: string; uri: string; qr: string }
    expect(secret).toMatch(/^[A-Z2-7]{32}$/)
    expect(new URL(uri).searchParams.get('secret')).toBe(secret)
    expect(new URL(uri).searchParams.get('issuer')).toBe('Plant 4')
    expect(uri.startsWith('otpauth://totp/Plant%204:alice?')).toBe(true)
    expect(Buffer.from(qr.split(',')[1] ?? '', 'base64').toString()).toMatch(
      /^<svg [^>]*viewBox="0 0 \d+ \d+"/,
    )

    // A code a minute old is past the window of one step.
    const stale = await post(url, '/auth/mfa/totp/confirm', token, {
      code: codeAt(secret, Date.now() - 60_000),
    })
    expect(stale.status).toBe(400)
    const confirmed = await post(url, '/auth/mfa/totp/confirm', token, { code: codeAt(secret, Date.now()) })
    expect(confirmed.status).toBe(200)
    const { recovery_codes } = (await confirmed.json()) as { recovery_codes: string[] }
    expect(recovery_codes).toHaveLength(10)
    // Enrolling ended the other session, not this one.
    expect((await fetch(`${url}/auth/mfa`, { headers: bearer(other) })).status).toBe(401)
    const status = await fetch(`${url}/auth/mfa`, { headers: bearer(token) })
    expect(await status.json()).toEqual({
      totp: 'enrolled',
      recovery_codes: 10,
      enrolled_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      enrolled_at_sign_in: false,
    })
    await stop(server)

    // The file holds neither the secret nor a recovery code, in any form a copy could use.
    const file = path.join(dir.userDir, 'flowadmin.db')
    const raw = await readFile(file)
    expect(raw.includes(Buffer.from(secret))).toBe(false)
    expect(raw.includes(Buffer.from(Secret.fromBase32(secret).buffer))).toBe(false)
    for (const code of recovery_codes) expect(raw.includes(Buffer.from(code.replace('-', '')))).toBe(false)
    const db = openDatabase(file)
    const row = db.prepare('SELECT secret, last_step FROM totp_factors WHERE username = ?').get('alice') as {
      secret: string
      last_step: number
    }
    expect(row.secret).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/)
    expect(row.last_step).toBeGreaterThan(0)
    expect(db.prepare('SELECT count(*) AS n FROM recovery_codes').get()).toEqual({ n: 10 })
    db.close()

    const audit = (await readFile(path.join(dir.userDir, 'audit.log'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { event: string; user: string })
    expect(audit.filter((line) => line.event.startsWith('mfa.'))).toMatchObject([
      { event: 'mfa.failed', user: 'alice', factor: 'totp', reason: 'wrong' },
      { event: 'mfa.enrolled', user: 'alice', factor: 'totp', sessionsEnded: 1 },
    ])
  })

  it('takes its key from FLOWADMIN_MFA_KEY, and a server with another key cannot use a sealed secret', async () => {
    await writeUsers(undefined)
    const first = await dir.start({ env: { FLOWADMIN_MFA_KEY: KEY } })
    const token = await login(first.url)
    const started = await post(first.url, '/auth/mfa/totp', token)
    expect(started.status).toBe(200)
    const { secret } = (await started.json()) as { secret: string }
    await stop(first)

    const second = await dir.start({ env: { FLOWADMIN_MFA_KEY: `${KEY}-another` } })
    const refused = await post(second.url, '/auth/mfa/totp/confirm', token, {
      code: codeAt(secret, Date.now()),
    })
    expect(refused.status).toBe(400)
    expect(await refused.json()).toEqual({
      code: 'invalid_code',
      message: 'The code is wrong, expired or used already',
    })
    await stop(second)

    // Without a key, no enrolment begins.
    const none = await dir.start({ env: { FLOWADMIN_MFA_KEY: undefined } })
    const unkeyed = await post(none.url, '/auth/mfa/totp', await login(none.url))
    expect(unkeyed.status).toBe(409)
    expect(await unkeyed.json()).toMatchObject({ code: 'mfa_not_configured' })
    await stop(none)
  })

  it('flowadmin mfa reset USER removes the factor, ends the sessions and is audited', async () => {
    await writeUsers({ key: KEY })
    const server = await dir.start()
    const { url } = server
    const token = await login(url)
    const { secret } = (await (await post(url, '/auth/mfa/totp', token)).json()) as { secret: string }
    const code = codeAt(secret, Date.now())
    expect((await post(url, '/auth/mfa/totp/confirm', token, { code })).status).toBe(200)

    const reset = (...args: string[]) => runCliToEnd(['mfa', ...args])
    expect(await reset('reset', 'alice', '--settings', dir.settingsFile)).toEqual({
      code: 0,
      stdout: 'removed the second factor of alice and ended their sessions\n',
      stderr: '',
    })
    // The running server refuses the ended session on its next request.
    expect((await fetch(`${url}/auth/mfa`, { headers: bearer(token) })).status).toBe(401)
    const fresh = await login(url)
    expect(await (await fetch(`${url}/auth/mfa`, { headers: bearer(fresh) })).json()).toEqual({
      totp: 'none',
      recovery_codes: 0,
      enrolled_at: null,
      enrolled_at_sign_in: false,
    })
    // The trail the running server searches has it too, with the sessions it ended.
    const auditor = await logInAs(url, 'auditor', 'auditor-pw')
    expect(auditor.status).toBe(200)
    const { access_token } = (await auditor.json()) as { access_token: string }
    const trail = await fetch(`${url}/audit?event=mfa.removed`, { headers: bearer(access_token) })
    expect(trail.status).toBe(200)
    expect(((await trail.json()) as { events: unknown[] }).events).toMatchObject([
      {
        instance: 'flowadmin',
        actor: null,
        event: 'mfa.removed',
        outcome: 'success',
        details: { owner: 'alice', factors: 'all', sessionsEnded: 1 },
      },
    ])
    expect(await reset('reset', 'alice', '--settings', dir.settingsFile)).toEqual({
      code: 1,
      stdout: '',
      stderr: 'flowadmin: alice has no second factor\n',
    })
    const usage = 'flowadmin: Run "flowadmin mfa --help" for usage.\n'
    expect(await reset()).toEqual({
      code: 2,
      stdout: '',
      stderr: `flowadmin: mfa needs an action: reset\n${usage}`,
    })
    expect(await reset('reset', '--settings', dir.settingsFile)).toEqual({
      code: 2,
      stdout: '',
      stderr: `flowadmin: mfa reset takes exactly one username\n${usage}`,
    })
    expect(await reset('reset', 'alice')).toEqual({
      code: 2,
      stdout: '',
      stderr: `flowadmin: no settings file given: mfa needs the server's settings (adminAuth and the database); add --settings FILE\n${usage}`,
    })
    await stop(server)
    const audit = (await readFile(path.join(dir.userDir, 'audit.log'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { event: string })
    expect(audit.filter((line) => line.event === 'mfa.removed')).toMatchObject([
      { user: null, client: null, address: null, owner: 'alice', sessionsEnded: 1 },
    ])
  })
})
