// Resource servers' machine secrets with the built `flowadmin` command: `flowadmin secret` makes
// one, a server started from those settings accepts it over a real socket, wrong secrets from the
// resource server's own address never lock the right one out (a digest, or an old argon2 hash once
// verified), an old argon2 hash not verified yet is throttled like a password until its digest
// replaces it, and SIGHUP swaps secrets.
import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { hashPassword } from '../src/index.js'
import { logEntries, runCliToEnd, useUserDir, writeSettings } from './cli-process.js'
import { until } from './program-process.js'

const dir = useUserDir('machine-secrets')

/** `flowadmin secret [--id ID]`: the secret and the entry for the settings, as printed. */
async function makeSecret(id?: string): Promise<{ secret: string; entry: { id: string; secret: string } }> {
  const run = await runCliToEnd(['secret', ...(id === undefined ? [] : ['--id', id])])
  expect(run).toMatchObject({ code: 0, stderr: '' })
  const [secret, entry, ...rest] = run.stdout.split('\n')
  expect(rest).toEqual([''])
  return { secret: secret as string, entry: JSON.parse(entry as string) }
}

async function writeServers(resourceServers: unknown[]): Promise<void> {
  const users = [{ username: 'admin', password: await hashPassword('admin-pw'), permissions: '*' }]
  await writeSettings(dir.settingsFile, {
    userDir: dir.userDir,
    adminAuth: { type: 'credentials', users, resourceServers },
  })
}

/** Introspects a made-up token as `id`:`secret`: 200 {"active": false} when the client is accepted. */
const introspect = (url: string, id: string, secret: string) =>
  fetch(`${url}/auth/introspect`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` },
    body: new URLSearchParams({ token: 'not-a-token' }),
  })

async function expectAccepted(url: string, id: string, secret: string): Promise<void> {
  const res = await introspect(url, id, secret)
  expect(res.status).toBe(200)
  expect(await res.json()).toEqual({ active: false })
}

describe('flowadmin secret', () => {
  it('prints a new random secret and the resource server entry holding only its SHA-256', async () => {
    const one = await makeSecret('edge')
    const two = await makeSecret()
    expect(one.secret).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(two.secret).not.toBe(one.secret)
    expect(one.entry).toEqual({
      id: 'edge',
      secret: `sha256:${createHash('sha256').update(one.secret).digest('hex')}`,
    })
    expect(two.entry.id).toBe('node-red')
  })

  it('refuses an id HTTP Basic cannot carry, printing no secret', async () => {
    expect(await runCliToEnd(['secret', '--id', 'a:b'])).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'flowadmin: --id must not contain ":" (HTTP Basic separates id and secret with it)\n' +
        'flowadmin: Run "flowadmin secret --help" for usage.\n',
    })
  })
})

describe('a resource server with a machine secret', () => {
  it('is never locked out by wrong secrets from its own address: a digest, or an argon2 hash verified since the start', async () => {
    const fleet = await makeSecret('fleet')
    await writeServers([fleet.entry, { id: 'legacy', secret: await hashPassword('legacy-secret') }])
    const { run, url } = await dir.start()
    // An old hashed secret is accepted, with a warning naming the command and setting that replace it.
    expect(logEntries(run.stderr)).toContainEqual({
      level: 'warn',
      time: expect.any(String),
      msg:
        "resource server legacy: adminAuth.resourceServers[1].secret is a password hash, so after a start or reload 5 wrong secrets from the instances' address refuse the right one too, for 15 minutes. " +
        'Replace it with a machine secret: run `flowadmin secret --id legacy`, give the secret on its first line to the instances (their clientSecret), and set adminAuth.resourceServers[1].secret to the digest on its second line ("secret": "sha256:…"), then reload',
    })

    // The digest from the start, before its first call; the hashed secret once it was verified.
    await expectAccepted(url, 'legacy', 'legacy-secret')
    for (const [id, right] of [
      ['fleet', fleet.secret],
      ['legacy', 'legacy-secret'],
    ] as const) {
      const statuses: number[] = []
      for (let i = 0; i < 6; i++) statuses.push((await introspect(url, id, `wrong ${i}`)).status)
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429])
      await expectAccepted(url, id, right)
      // Wrong ones stay refused after the right one.
      expect((await introspect(url, id, 'wrong 0')).status).toBe(429)
      await expectAccepted(url, id, right)
    }
    const events = run.stdout
      .split('\n')
      .filter((line) => line.includes('"event":"client.'))
      .map((line) => JSON.parse(line) as { event: string; client: string })
    expect(
      events.filter((event) => event.event === 'client.authenticated').map((event) => event.client),
    ).toEqual(['legacy', 'fleet'])
  })

  it('throttles an argon2 hashed secret not verified since the start like a password, until its digest replaces it', async () => {
    const fleet = await makeSecret('fleet')
    await writeServers([{ id: 'fleet', secret: await hashPassword(fleet.secret) }])
    const { run, url } = await dir.start()
    const statuses: number[] = []
    for (let i = 0; i < 5; i++) statuses.push((await introspect(url, 'fleet', `wrong ${i}`)).status)
    expect(statuses).toEqual([401, 401, 401, 401, 401])
    // The right secret, unchecked: a guess like any other once the address is throttled.
    const res = await introspect(url, 'fleet', fleet.secret)
    expect(res.status).toBe(429)
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(await res.json()).toEqual({
      error: 'temporarily_unavailable',
      error_description: expect.stringMatching(
        /^Too many failed login attempts\. Try again in \d+ seconds\.$/,
      ),
    })
    // Its digest, as `flowadmin secret` printed it, is never throttled.
    await writeServers([fleet.entry])
    run.child.kill('SIGHUP')
    await until('the reload', () => (run.stderr.includes('settings reloaded') ? true : undefined))
    await expectAccepted(url, 'fleet', fleet.secret)
    expect((await introspect(url, 'fleet', 'wrong 5')).status).toBe(429)
  })

  it('takes a new secret on SIGHUP: the old one is refused from the next call, the new one accepted', async () => {
    const before = await makeSecret('fleet')
    await writeServers([before.entry])
    const { run, url } = await dir.start()
    await expectAccepted(url, 'fleet', before.secret)

    const after = await makeSecret('fleet')
    await writeServers([after.entry])
    run.child.kill('SIGHUP')
    await until('the reload', () => (run.stderr.includes('settings reloaded') ? true : undefined))
    expect((await introspect(url, 'fleet', before.secret)).status).toBe(401)
    await expectAccepted(url, 'fleet', after.secret)

    // And back to an argon2 hash: accepted, the digest's secret refused.
    await writeServers([{ id: 'fleet', secret: await hashPassword('legacy-secret') }])
    run.child.kill('SIGHUP')
    await until('the second reload', () =>
      run.stderr.split('settings reloaded').length > 2 ? true : undefined,
    )
    expect((await introspect(url, 'fleet', after.secret)).status).toBe(401)
    await expectAccepted(url, 'fleet', 'legacy-secret')
  })
})
