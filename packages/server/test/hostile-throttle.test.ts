// Login throttling over HTTP against the built server: per username and address, per address,
// persisted across a restart. Clients bind source addresses of 127.0.0.0/8, all loopback.
import { describe, expect, it } from 'vitest'
import { ADMIN_PASSWORD, type AuditLine, login, useWorkspace } from './hostile-http.js'

const workspace = useWorkspace()

const wrong = { username: 'admin', password: 'guess' }
const right = { username: 'admin', password: ADMIN_PASSWORD }
/** event user@address, per audit line. */
const summary = (lines: AuditLine[]) => lines.map((line) => `${line.event} ${line.user}@${line.address}`)

function expectThrottled(res: { status: number; headers: Record<string, unknown>; body: string }) {
  expect(res.status).toBe(429)
  const retryAfter = Number(res.headers['retry-after'])
  expect(Number.isInteger(retryAfter)).toBe(true)
  expect(retryAfter).toBeGreaterThan(0)
  expect(retryAfter).toBeLessThanOrEqual(900)
  expect(res.headers['cache-control']).toBe('no-store')
  expect(JSON.parse(res.body)).toEqual({
    error: 'temporarily_unavailable',
    error_description: `Too many failed login attempts. Try again in ${retryAfter} seconds.`,
  })
}

describe('login throttling over HTTP', () => {
  it('throttles guesses from 127.0.0.2 without checking the password, while the user logs in from 127.0.0.3', async () => {
    const { url } = await workspace.start({ countVerifications: true })

    for (let i = 0; i < 5; i++) expect((await login(url, wrong, '127.0.0.2')).status).toBe(401)
    const guesses = Array(5).fill(workspace.hashes.admin)
    expect(await workspace.verifications()).toEqual(guesses)

    expectThrottled(await login(url, wrong, '127.0.0.2'))
    // The right password is not even looked at.
    expectThrottled(await login(url, right, '127.0.0.2'))
    expectThrottled(await login(url, right, '127.0.0.2', 'json'))
    expect(await workspace.verifications()).toEqual(guesses)

    // The real user, elsewhere, is not locked out; that does not lift the guesser's wait.
    expect((await login(url, right, '127.0.0.3')).status).toBe(200)
    expectThrottled(await login(url, right, '127.0.0.2'))
    expect(await workspace.verifications()).toEqual([...guesses, workspace.hashes.admin])

    expect(summary(await workspace.audit())).toEqual([
      ...Array(5).fill('login.failed admin@127.0.0.2'),
      'login.throttled admin@127.0.0.2',
      'login.throttled admin@127.0.0.2',
      'login.throttled admin@127.0.0.2',
      'login.succeeded admin@127.0.0.3',
      'login.throttled admin@127.0.0.2',
    ])
    for (const line of (await workspace.audit()).filter((entry) => entry.event === 'login.throttled')) {
      expect(line.retryAfter).toEqual(expect.any(Number))
    }
  })

  it('throttles an address that sprays usernames, whatever the username, and no other address', async () => {
    const { url } = await workspace.start()
    for (let i = 0; i < 20; i++) {
      expect((await login(url, { username: `guess-${i}`, password: 'x' }, '127.0.0.4')).status).toBe(401)
    }
    expectThrottled(await login(url, { username: 'guess-20', password: 'x' }, '127.0.0.4'))
    expectThrottled(await login(url, right, '127.0.0.4'))
    expect((await login(url, right, '127.0.0.5')).status).toBe(200)

    const lines = await workspace.audit()
    expect(summary(lines)).toEqual([
      ...Array.from({ length: 20 }, (_, i) => `login.failed guess-${i}@127.0.0.4`),
      'login.throttled guess-20@127.0.0.4',
      'login.throttled admin@127.0.0.4',
      'login.succeeded admin@127.0.0.5',
    ])
  })

  it('keeps the counters across a restart (SQLite), even after SIGKILL', async () => {
    const first = await workspace.start()
    for (let i = 0; i < 5; i++) expect((await login(first.url, wrong, '127.0.0.6')).status).toBe(401)
    first.run.child.kill('SIGKILL')
    expect(await first.run.exited).toBe('SIGKILL')

    const second = await workspace.start()
    expectThrottled(await login(second.url, right, '127.0.0.6'))
    expect((await login(second.url, right, '127.0.0.7')).status).toBe(200)
    expect(summary((await workspace.audit()).slice(5))).toEqual([
      'login.throttled admin@127.0.0.6',
      'login.succeeded admin@127.0.0.7',
    ])
  })
})
