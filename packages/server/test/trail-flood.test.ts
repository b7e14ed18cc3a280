// A reporting instance floods the trail, its events dated 1970 and 2100: it is answered 429 past
// its allowance, and flowadmin's own failed logins stay in GET /audit through the retention sweep.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { createMachineSecret, systemRandom, webDigest } from '@flowadmin/core'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { hashPassword, type RunningServer, startServer } from '../src/index.js'
import { captureLog } from './log-capture.js'
import { logIn } from './password-grant.js'

const PASSWORD = 'admin password'
/** Usernames typed at the sign-in page, one failed login each. */
const GUESSES = ['ghost', 'root', 'a;=HYPERLINK("https://evil.example")', 'admin ', 'operator']
const PER_MINUTE = 2000
const REPORT = 500

let userDir: string
let server: RunningServer | null = null
beforeEach(async () => {
  userDir = await mkdtemp(path.join(tmpdir(), 'flowadmin-trail-flood-'))
})
afterEach(async () => {
  await server?.close()
  server = null
  await rm(userDir, { recursive: true, force: true })
})

/** Every event of a search, newest first, as the NDJSON export streams them. */
async function audit(url: string, token: string, query: string) {
  const res = await fetch(`${url}/audit?${query}`, {
    headers: { authorization: `Bearer ${token}`, accept: 'application/x-ndjson' },
  })
  expect(res.status).toBe(200)
  const lines = (await res.text()).split('\n').filter((line) => line !== '')
  return lines.map((line) => JSON.parse(line) as Record<string, unknown>)
}

describe('a reporter flooding the trail', () => {
  it('is refused past its allowance, and never flushes flowadmin’s own failed logins out', async () => {
    const fleet = await createMachineSecret(systemRandom, webDigest)
    server = await startServer({
      settings: {
        storage: 'sqlite',
        auditLog: 'off',
        adminAuth: {
          type: 'credentials',
          users: [{ username: 'admin', password: await hashPassword(PASSWORD), permissions: '*' }],
          resourceServers: [{ id: 'fleet', secret: fleet.digest }],
        },
        // The smallest bounds there are: a thousand of each source's events, a day.
        auditTrail: {
          maxAgeDays: 1,
          maxEvents: 1000,
          reported: { maxAgeDays: 1, maxEvents: 1000, eventsPerMinute: PER_MINUTE },
        },
      },
      userDir,
      port: 0,
      stdout: () => {},
      logger: captureLog().logger,
    })
    const { url } = server
    for (const username of GUESSES) {
      const res = await fetch(`${url}/auth/token`, {
        method: 'POST',
        body: new URLSearchParams({
          client_id: 'service-admin',
          grant_type: 'password',
          scope: '*',
          username,
          password: 'a guess',
        }),
      })
      expect(res.status).toBe(401)
    }
    const admin = ((await (await logIn(url, PASSWORD)).json()) as { access_token: string }).access_token
    // flowadmin's own events reach the trail off the request: wait for them.
    const deadline = Date.now() + 10_000
    while ((await audit(url, admin, 'event=login.failed')).length < GUESSES.length && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20))

    // The flood: reports of 500 events each, dated 1970 and 2100 by turns, as fast as it can.
    const basic = `Basic ${Buffer.from(`fleet:${fleet.secret}`).toString('base64')}`
    const statuses: number[] = []
    const refusals: Array<{ retryAfter: string | null; body: unknown }> = []
    for (let sent = 0; sent < 4 * PER_MINUTE; sent += REPORT) {
      const events = Array.from({ length: REPORT }, (_, i) => ({
        time: i % 2 === 0 ? 0 : Date.UTC(2100, 0, 1),
        instance: 'line-1',
        actor: 'admin',
        event: 'auth.login.fail.credentials',
        address: '10.0.0.7',
        details: { n: sent + i },
      }))
      const res = await fetch(`${url}/audit/events`, {
        method: 'POST',
        headers: { authorization: basic, 'content-type': 'application/json' },
        body: JSON.stringify({ events }),
      })
      statuses.push(res.status)
      if (res.status === 429)
        refusals.push({ retryAfter: res.headers.get('retry-after'), body: await res.json() })
      else await res.body?.cancel()
    }
    // A minute's worth is taken at once; past it, every report is refused whole, saying how long to wait.
    const taken = PER_MINUTE / REPORT
    expect(statuses).toEqual([...Array(taken).fill(200), ...Array(statuses.length - taken).fill(429)])
    for (const refusal of refusals) {
      expect(Number(refusal.retryAfter)).toBeGreaterThanOrEqual(1)
      expect(Number(refusal.retryAfter)).toBeLessThanOrEqual(60)
      expect(refusal.body).toMatchObject({ code: 'too_many_events' })
    }
    expect(await audit(url, admin, 'instance=fleet')).toHaveLength(PER_MINUTE)

    // The sweep, as it runs each minute: the reporter's own budget, flowadmin's untouched.
    await server.core.trail.sweep(Date.now())
    const failed = await audit(url, admin, 'event=login.failed')
    expect(failed.map((event) => event.actor).sort()).toEqual([...GUESSES].sort())
    for (const event of failed) expect(event).toMatchObject({ instance: 'flowadmin', time_suspect: false })
    const kept = await audit(url, admin, 'instance=fleet')
    expect(kept).toHaveLength(1000)
    // The last received stay, those claiming 1970 among them (received now, so within the age).
    expect(kept[0]?.details).toEqual({ n: PER_MINUTE - 1 })
    expect(kept.filter((event) => event.time === '1970-01-01T00:00:00.000Z')).toHaveLength(500)
    expect(kept.every((event) => event.time_suspect === true)).toBe(true)
  }, 60_000)
})
