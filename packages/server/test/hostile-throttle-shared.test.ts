// The throttle decided in the store, against the built server: two processes on one SQLite file
// verify no more guesses together than one would, and many right passwords at once from one
// address are never answered "throttled". Clients bind source addresses of 127.0.0.0/8.
import { DEFAULT_THROTTLE } from '@flowadmin/core'
import { describe, expect, it } from 'vitest'
import { ADMIN_PASSWORD, login, type RawResponse, useWorkspace } from './hostile-http.js'

const workspace = useWorkspace()

const GUESSER = '127.0.0.90'
const OFFICE = '127.0.0.91'
/** Wrong guesses one username+address pair may have verified, by all processes together, per window. */
const MOST_VERIFIED = DEFAULT_THROTTLE.maxFailuresPerUser + DEFAULT_THROTTLE.inFlightAllowance

const statuses = (answers: RawResponse[]) => {
  const counts: Record<number, number> = {}
  for (const answer of answers) counts[answer.status] = (counts[answer.status] ?? 0) + 1
  return counts
}

describe('the throttle shared by processes on one database file', () => {
  it('200 guesses for one user split across two processes: verifications stay within the limit + allowance', async () => {
    // Fixed queue bounds: nothing is measured at start, so every verification counted is a guess's.
    await workspace.writeSettings({ adminAuth: { loginQueue: { maxWaiting: 400, maxWaitingKnown: 10 } } })
    const one = await workspace.start({ countVerifications: true })
    const two = await workspace.start({ countVerifications: true })
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        login(i % 2 === 0 ? one.url : two.url, { username: 'admin', password: `guess-${i}` }, GUESSER),
      ),
    )
    const counts = statuses(answers)
    expect(Object.keys(counts).every((status) => ['401', '429', '503'].includes(status))).toBe(true)
    const verified = await workspace.verifications()
    expect(verified.length).toBeGreaterThanOrEqual(DEFAULT_THROTTLE.maxFailuresPerUser)
    expect(verified.length).toBeLessThanOrEqual(MOST_VERIFIED)
    expect(counts[401]).toBe(verified.length)
    for (const answer of answers.filter((answer) => answer.status === 503)) {
      expect(answer.headers['retry-after']).toMatch(/^[1-9][0-9]*$/)
    }
    // The pair is closed in both, for the right password too, and nothing more was verified.
    for (const { url } of [one, two]) {
      expect((await login(url, { username: 'admin', password: ADMIN_PASSWORD }, GUESSER)).status).toBe(429)
    }
    expect(await workspace.verifications()).toHaveLength(verified.length)
  })

  it('20 right-password logins at once from one address: 200, or 503 with Retry-After, never 429', async () => {
    const { url } = await workspace.start()
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => login(url, { username: 'admin', password: ADMIN_PASSWORD }, OFFICE)),
    )
    const counts = statuses(answers)
    expect(counts[429]).toBeUndefined()
    expect((counts[200] ?? 0) + (counts[503] ?? 0)).toBe(20)
    expect(counts[200]).toBeGreaterThan(0)
    for (const answer of answers.filter((answer) => answer.status === 503)) {
      expect(answer.headers['retry-after']).toMatch(/^[1-9][0-9]*$/)
      expect(JSON.parse(answer.body)).toMatchObject({ error: 'temporarily_unavailable' })
    }
    // Nothing was counted against the office: one more login goes through.
    expect((await login(url, { username: 'admin', password: ADMIN_PASSWORD }, OFFICE)).status).toBe(200)
  })
})
