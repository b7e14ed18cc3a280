// flowadmin's sign-in page across two built instances on one PostgreSQL database with the same
// `adminAuth.mfa.key`, as two machines behind a load balancer: the same TOTP code (or recovery
// code) posted to both at once signs in once, the other told it is used already and the trail
// saying so; and a sign-in whose steps land on alternate instances (no affinity) completes, its
// cookie, ticket and one-time code good at either. Real sockets, argon2, PostgreSQL and otpauth.
import * as path from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { useTestDatabase } from '../../adapter-postgres/test/pg-server.js'
import { hashPassword } from '../src/index.js'
import { startBuiltServer, useServerFolder } from './cli-process.js'
import { createCookieJar } from './oidc-provider.js'
import { logInAs } from './password-grant.js'
import { totpCode } from './totp-code.js'

const database = useTestDatabase()
const KEY = 'the-key-both-instances-share-forty-chars'
const PASSWORD = 'the-password-of-each'
/** Each test's person, so that a code one test used is never one another test needs. */
const PEOPLE = ['ada', 'bob', 'cyd', 'dee'] as const
const ADMIN_PASSWORD = 'admin-pw'

const folder = useServerFolder('sign-in-instances')
/** The two instances' base URLs: A and B. */
let instances: string[]
let admin: string

beforeAll(async () => {
  const password = await hashPassword(PASSWORD)
  const settings = {
    storage: 'postgres',
    postgres: { url: database.current().url, pool: 4 },
    adminAuth: {
      users: [
        ...PEOPLE.map((username) => ({ username, password, permissions: 'read' })),
        { username: 'admin', password: await hashPassword(ADMIN_PASSWORD), permissions: '*' },
      ],
      mfa: { key: KEY },
    },
  }
  instances = []
  for (const name of ['a', 'b']) {
    instances.push((await startBuiltServer(path.join(folder.dir, `settings-${name}.json`), { settings })).url)
  }
  const granted = await logInAs(instances[0] as string, 'admin', ADMIN_PASSWORD)
  expect(granted.status).toBe(200)
  admin = ((await granted.json()) as { access_token: string }).access_token
}, 120_000)

const A = () => instances[0] as string
const B = () => instances[1] as string

/** The value of the hidden field `name` of a page. */
const field = (page: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(page)?.[1]
const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
})

/**
 * A browser without script, redirects not followed. Its cookies are the host's, whatever the
 * port (RFC 6265 §8.5), as a browser's are for one public address in front of both instances:
 * what one instance sets is sent to the other.
 */
function openBrowser() {
  const jar = createCookieJar()
  const SITE = 'http://127.0.0.1/'
  const send = async (url: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers)
    const cookie = jar.header(SITE)
    if (cookie !== '') headers.set('cookie', cookie)
    const res = await fetch(url, { ...init, headers, redirect: 'manual' })
    jar.store(SITE, res)
    return res
  }
  return {
    /** GET /auth/signin at `base`: begins a sign-in, the cookie set. */
    begin: (base: string) => send(`${base}/auth/signin`),
    /** A form of the page (`step` '' for the password, '/code' for the code) posted to `base`. */
    post: (base: string, step: string, fields: Record<string, string>) =>
      send(`${base}/auth/signin${step}`, form(fields)),
    /** The console's end: the code of the 303's fragment, traded at `base` with the cookie. */
    async trade(base: string, answer: Response): Promise<string> {
      expect(answer.status).toBe(303)
      const code = /^\/#sso_code=([\w-]{43})$/.exec(answer.headers.get('location') ?? '')?.[1] ?? ''
      expect(code).not.toBe('')
      const traded = await send(
        `${base}/auth/token`,
        form({ grant_type: 'authorization_code', code, client_id: 'service-editor' }),
      )
      expect(traded.status).toBe(200)
      return ((await traded.json()) as { access_token: string }).access_token
    },
  }
}
type Browser = ReturnType<typeof openBrowser>

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

/**
 * Enrols TOTP for `username` through the API with a session of the password grant (at A; the
 * code of the step before now, so that the current one is still unused), then ends that session.
 */
async function enrolTotp(username: string) {
  const granted = await logInAs(A(), username, PASSWORD, 'read')
  expect(granted.status).toBe(200)
  const { access_token } = (await granted.json()) as { access_token: string }
  const headers = { ...bearer(access_token), 'content-type': 'application/json' }
  const started = await fetch(`${A()}/auth/mfa/totp`, { method: 'POST', headers })
  expect(started.status).toBe(200)
  const { secret } = (await started.json()) as { secret: string }
  const confirmed = await fetch(`${B()}/auth/mfa/totp/confirm`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ code: totpCode(secret, Date.now() - 30_000) }),
  })
  expect(confirmed.status).toBe(200)
  const { recovery_codes } = (await confirmed.json()) as { recovery_codes: string[] }
  const revoked = await fetch(`${A()}/auth/revoke`, {
    ...form({ token: access_token }),
    headers: { ...bearer(access_token), 'content-type': 'application/x-www-form-urlencoded' },
  })
  expect(revoked.status).toBe(200)
  return { secret, recoveryCodes: recovery_codes }
}

/** A sign-in begun at `base` and past its password there: the browser and the code page's ticket. */
async function pastPassword(username: string, base: string): Promise<{ browser: Browser; ticket: string }> {
  const browser = openBrowser()
  expect((await browser.begin(base)).status).toBe(200)
  const step = await browser.post(base, '', { username, password: PASSWORD })
  expect(step.status).toBe(200)
  const page = await step.text()
  expect(page).toContain('autocomplete="one-time-code"')
  const ticket = field(page, 'ticket') ?? ''
  expect(ticket).toMatch(/^[\w-]{43}$/)
  return { browser, ticket }
}

interface TrailEvent {
  instance: string
  actor: string | null
  event: string
  outcome: string
  details: Record<string, unknown>
}

/** flowadmin's `mfa.*` events of `username` in the trail, oldest first, once `count` are there. */
async function mfaTrail(username: string, count: number): Promise<TrailEvent[]> {
  const query = new URLSearchParams({ instance: 'flowadmin', actor: username, event: 'mfa.' })
  for (let waited = 0; ; waited += 100) {
    const res = await fetch(`${B()}/audit?${query}`, { headers: bearer(admin) })
    expect(res.status).toBe(200)
    const { events } = (await res.json()) as { events: TrailEvent[] }
    if (events.length >= count || waited >= 10_000) return events.reverse()
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** The sessions `token`'s person has, as GET /auth/tokens at `base` lists them. */
async function sessionsOf(base: string, token: string) {
  const res = await fetch(`${base}/auth/tokens`, { headers: bearer(token) })
  expect(res.status).toBe(200)
  return ((await res.json()) as { tokens: Array<{ user: string; sign_in: string | null; current: boolean }> })
    .tokens
}

describe('the sign-in page on two instances sharing PostgreSQL', () => {
  it('the same TOTP code posted to both instances at once signs in once; the other is told it is used already', async () => {
    const { secret } = await enrolTotp('ada')
    const [first, second] = [await pastPassword('ada', A()), await pastPassword('ada', B())]
    const code = totpCode(secret)
    const answers = await Promise.all([
      first.browser.post(A(), '/code', { ticket: first.ticket, code }),
      second.browser.post(B(), '/code', { ticket: second.ticket, code }),
    ])
    expect(answers.map((res) => res.status).sort()).toEqual([303, 401])

    const winner = answers[0]?.status === 303 ? 0 : 1
    const [signedIn, refused] = winner === 0 ? [first, second] : [second, first]
    const refusedAt = winner === 0 ? B() : A()
    const page = await (answers[1 - winner] as Response).text()
    expect(page).toContain('role="alert" id="form-error">That code is wrong, expired or used already.')
    // The refused sign-in goes on, with a new ticket; its old one is spent.
    const next = field(page, 'ticket') ?? ''
    expect(next).toMatch(/^[\w-]{43}$/)
    expect(next).not.toBe(refused.ticket)
    expect((await refused.browser.post(refusedAt, '/code', { ticket: refused.ticket, code })).status).toBe(
      400,
    )

    // The code of the 303 is traded at the other instance than the one that gave it.
    const token = await signedIn.browser.trade(winner === 0 ? B() : A(), answers[winner] as Response)
    expect(await sessionsOf(A(), token)).toEqual([
      expect.objectContaining({ user: 'ada', sign_in: 'password_totp', current: true }),
    ])

    const trail = await mfaTrail('ada', 3)
    expect(trail.map((event) => [event.event, event.outcome])).toEqual([
      ['mfa.enrolled', 'success'],
      expect.any(Array),
      expect.any(Array),
    ])
    expect(trail.slice(1)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          event: 'mfa.succeeded',
          outcome: 'success',
          details: expect.objectContaining({ factor: 'totp' }),
        }),
        expect.objectContaining({
          event: 'mfa.failed',
          outcome: 'failure',
          details: expect.objectContaining({ factor: 'totp', reason: 'replayed' }),
        }),
      ]),
    )
  })

  it('a sign-in begun at A, its password answered at B and its code at A, completes; its code is traded at B', async () => {
    const { secret } = await enrolTotp('bob')
    const browser = openBrowser()
    const begun = await browser.begin(A())
    expect(begun.status).toBe(200)
    expect(begun.headers.getSetCookie()[0]).toMatch(/^flowadmin_sso=[\w-]{43}; Path=\/auth;/)

    const step = await browser.post(B(), '', { username: 'bob', password: PASSWORD })
    expect(step.status).toBe(200)
    const ticket = field(await step.text(), 'ticket') ?? ''
    expect(ticket).toMatch(/^[\w-]{43}$/)

    const done = await browser.post(A(), '/code', { ticket, code: totpCode(secret) })
    const token = await browser.trade(B(), done)
    for (const base of instances) {
      expect(await sessionsOf(base, token)).toEqual([
        expect.objectContaining({ user: 'bob', sign_in: 'password_totp', current: true }),
      ])
    }
    // The sign-in is spent at both: its ticket and its cookie serve no other.
    for (const base of instances) {
      expect((await browser.post(base, '/code', { ticket, code: totpCode(secret) })).status).toBe(400)
      expect((await browser.post(base, '', { username: 'bob', password: PASSWORD })).status).toBe(400)
    }
    expect((await mfaTrail('bob', 2)).map((event) => event.event)).toEqual(['mfa.enrolled', 'mfa.succeeded'])
  })

  it('one code form sent to both instances at once (a retry through the balancer) is taken once: the other is told the sign-in expired', async () => {
    const { secret } = await enrolTotp('dee')
    const { browser, ticket } = await pastPassword('dee', A())
    const fields = { ticket, code: totpCode(secret) }
    const answers = await Promise.all([
      browser.post(A(), '/code', fields),
      browser.post(B(), '/code', fields),
    ])
    expect(answers.map((res) => res.status).sort()).toEqual([303, 400])
    const winner = answers[0]?.status === 303 ? 0 : 1
    expect(await (answers[1 - winner] as Response).text()).toContain('Sign-in expired')
    const token = await browser.trade(winner === 0 ? B() : A(), answers[winner] as Response)
    expect(await sessionsOf(B(), token)).toEqual([
      expect.objectContaining({ user: 'dee', sign_in: 'password_totp', current: true }),
    ])
    // The ticket was taken before any code was checked: no refusal of the code is in the trail.
    expect((await mfaTrail('dee', 2)).map((event) => event.event)).toEqual(['mfa.enrolled', 'mfa.succeeded'])
  })

  it('a recovery code posted to both instances at once signs in once, and is used up', async () => {
    const { recoveryCodes } = await enrolTotp('cyd')
    const recovery = recoveryCodes[0] ?? ''
    const [first, second] = [await pastPassword('cyd', A()), await pastPassword('cyd', B())]
    const answers = await Promise.all([
      first.browser.post(A(), '/code', { ticket: first.ticket, code: recovery }),
      second.browser.post(B(), '/code', { ticket: second.ticket, code: recovery }),
    ])
    expect(answers.map((res) => res.status).sort()).toEqual([303, 401])
    const winner = answers[0]?.status === 303 ? 0 : 1
    expect(await (answers[1 - winner] as Response).text()).toContain(
      'That code is wrong, expired or used already.',
    )
    const token = await (winner === 0 ? first : second).browser.trade(
      winner === 0 ? B() : A(),
      answers[winner] as Response,
    )
    expect(await sessionsOf(B(), token)).toEqual([
      expect.objectContaining({ user: 'cyd', sign_in: 'password_recovery_code', current: true }),
    ])
    const status = await fetch(`${A()}/auth/mfa`, { headers: bearer(token) })
    expect(await status.json()).toEqual({
      totp: 'enrolled',
      recovery_codes: 9,
      enrolled_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      enrolled_at_sign_in: false,
    })

    const trail = await mfaTrail('cyd', 4)
    expect(trail.filter((event) => event.event !== 'mfa.enrolled')).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          event: 'mfa.recovery_used',
          details: expect.objectContaining({ remaining: 9 }),
        }),
        expect.objectContaining({
          event: 'mfa.succeeded',
          details: expect.objectContaining({ factor: 'recovery_code' }),
        }),
        expect.objectContaining({
          event: 'mfa.failed',
          outcome: 'failure',
          details: expect.objectContaining({ factor: 'recovery_code', reason: 'wrong' }),
        }),
      ]),
    )
    expect(trail).toHaveLength(4)
  })
})
