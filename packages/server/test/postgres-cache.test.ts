// Two built instances on one PostgreSQL database answer token checks from memory: what one
// revokes, or the tokens a reload at one removes, the other refuses promptly; with its listening
// connection gone, an instance reads the database until it listens again.
import { TOKEN_LISTENER_NAME } from '@flowadmin/adapter-postgres'
import * as argon2 from 'argon2'
import { describe, expect, it, vi } from 'vitest'
import { type BuiltServer, logEntries, startBuiltServer, writeSettings } from './cli-process.js'
import { logInAs } from './password-grant.js'
import {
  bearer,
  prepareInstance,
  prepareWithLeaver,
  tokenFrom,
  useInstancesOnOneDatabase,
} from './postgres-instances.js'

const database = useInstancesOnOneDatabase()

/** Asks `url` with `token` until it answers 401; the answers before must be 200. */
async function untilRefused(url: string, token: string): Promise<void> {
  await vi.waitFor(
    async () => {
      const response = await fetch(`${url}/settings`, { headers: bearer(token) })
      await response.arrayBuffer()
      expect([200, 401]).toContain(response.status)
      expect(response.status).toBe(401)
    },
    { timeout: 15_000, interval: 5 },
  )
}

const status = async (url: string, token: string) => {
  const response = await fetch(`${url}/settings`, { headers: bearer(token) })
  await response.arrayBuffer()
  return response.status
}

async function tokenOf(url: string, username: string, password: string): Promise<string> {
  const response = await logInAs(url, username, password)
  expect(response.status).toBe(200)
  return ((await response.json()) as { access_token: string }).access_token
}

async function reload(instance: BuiltServer): Promise<void> {
  const reloaded = () =>
    logEntries(instance.run.stderr).filter((entry) => entry.msg === 'settings reloaded').length
  const before = reloaded()
  instance.run.child.kill('SIGHUP')
  await vi.waitFor(() => expect(reloaded()).toBe(before + 1), { timeout: 15_000, interval: 20 })
}

describe('two instances answering token checks from memory', () => {
  it('refuse at one what the other revokes, and the tokens of a user a reload at the other removes', async () => {
    const postgres = { url: database.current().url, pool: 4 }
    const first = await prepareWithLeaver(postgres)
    const second = await prepareWithLeaver(postgres)
    // Both with the same users, as instances behind one address are.
    second.settings.adminAuth.users = first.settings.adminAuth.users
    await writeSettings(second.file, second.settings)
    const a = await startBuiltServer(first.file)
    const b = await startBuiltServer(second.file)

    // Issued at B, used at A (which keeps it), revoked at B: refused at A.
    const token = await tokenFrom(b.url)
    for (let i = 0; i < 3; i++) expect(await status(a.url, token)).toBe(200)
    const revoked = await fetch(`${b.url}/auth/revoke`, {
      method: 'POST',
      headers: bearer(token),
      body: new URLSearchParams({ token }),
    })
    expect(revoked.status).toBe(200)
    await untilRefused(a.url, token)

    // An API token deleted by id at A (the console's way), with B's copy kept: refused at B.
    const admin = await tokenFrom(a.url)
    const created = await fetch(`${a.url}/auth/tokens`, {
      method: 'POST',
      headers: { ...bearer(admin), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'deploy' }),
    })
    expect(created.status).toBe(201)
    const api = (await created.json()) as { id: string; token: string }
    expect(await status(b.url, api.token)).toBe(200)
    const deleted = await fetch(`${a.url}/auth/tokens/${api.id}`, {
      method: 'DELETE',
      headers: bearer(admin),
    })
    expect(deleted.status).toBe(204)
    await untilRefused(b.url, api.token)

    // Every token of a user deleted at A: the one B kept is refused at B.
    const other = await tokenFrom(a.url)
    expect(await status(b.url, other)).toBe(200)
    const all = await fetch(`${a.url}/auth/tokens?user=admin`, { method: 'DELETE', headers: bearer(admin) })
    expect(all.status).toBe(200)
    await untilRefused(b.url, other)

    // A user removed from B's settings by a reload there: their token, which A kept and whose
    // settings still have the user, is refused at A once B's reload deletes it.
    const leaving = await tokenOf(b.url, 'leaver', 'leaver-pw')
    expect(await status(a.url, leaving)).toBe(200)
    second.settings.adminAuth.users = second.settings.adminAuth.users.filter(
      (user: { username: string }) => user.username !== 'leaver',
    )
    await writeSettings(second.file, second.settings)
    await reload(b)
    await untilRefused(a.url, leaving)
    expect(await status(b.url, leaving)).toBe(401)
    expect(a.run.child.exitCode).toBeNull()
    expect(b.run.child.exitCode).toBeNull()
  })

  it('a changed password, reloaded at both, ends the tokens kept at either', async () => {
    const postgres = { url: database.current().url, pool: 4 }
    const first = await prepareWithLeaver(postgres)
    const second = await prepareWithLeaver(postgres)
    // Both with the same users, as instances behind one address are.
    second.settings.adminAuth.users = first.settings.adminAuth.users
    await writeSettings(second.file, second.settings)
    const a = await startBuiltServer(first.file)
    const b = await startBuiltServer(second.file)
    const token = await tokenOf(a.url, 'leaver', 'leaver-pw')
    expect(await status(a.url, token)).toBe(200)
    expect(await status(b.url, token)).toBe(200)
    const changed = await argon2.hash('new-pw', { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2 })
    for (const { file, settings } of [first, second]) {
      settings.adminAuth.users = settings.adminAuth.users.map((user: { username: string }) =>
        user.username === 'leaver' ? { ...user, password: changed } : user,
      )
      await writeSettings(file, settings)
    }
    await reload(a)
    await reload(b)
    expect(await status(b.url, token)).toBe(401)
    expect(await status(a.url, token)).toBe(401)
    expect(await tokenOf(b.url, 'leaver', 'new-pw')).toEqual(expect.any(String))
  })

  it('with its listening connection terminated, refuses what the other revokes meanwhile, then keeps tokens again', async () => {
    const postgres = { url: database.current().url, pool: 4 }
    const a = await startBuiltServer(await prepareInstance(postgres))
    const b = await startBuiltServer(await prepareInstance(postgres))
    const listeners = async () =>
      (
        await database
          .current()
          .query(
            'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1',
            [TOKEN_LISTENER_NAME],
          )
      ).rows.map((row) => row.pid as number)
    await vi.waitFor(async () => expect(await listeners()).toHaveLength(2), { timeout: 10_000 })
    const token = await tokenFrom(a.url)
    expect(await status(b.url, token)).toBe(200)

    const before = await listeners()
    await database.current().query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [before])
    // Deleted where no announcement reaches anyone (no instance listens, or none is sent).
    await database.current().query('DELETE FROM flowadmin_tokens')
    await untilRefused(b.url, token)
    await untilRefused(a.url, token)

    // Listening again: a token B looked up is answered from memory again (a deletion that
    // announces nothing goes unseen, which is what shows it).
    await vi.waitFor(
      async () => {
        const now = await listeners()
        expect(now).toHaveLength(2)
        expect(now.some((pid) => before.includes(pid))).toBe(false)
      },
      { timeout: 15_000, interval: 20 },
    )
    const fresh = await tokenFrom(a.url)
    expect(await status(b.url, fresh)).toBe(200)
    await database.current().query('DELETE FROM flowadmin_tokens')
    expect(await status(b.url, fresh)).toBe(200)
    expect(b.run.stderr).toContain('listening for token changes')
    // And revocations are heard again.
    const again = await tokenFrom(a.url)
    expect(await status(b.url, again)).toBe(200)
    const revoked = await fetch(`${a.url}/auth/revoke`, {
      method: 'POST',
      headers: bearer(again),
      body: new URLSearchParams({ token: again }),
    })
    expect(revoked.status).toBe(200)
    await untilRefused(b.url, again)
  })
})
