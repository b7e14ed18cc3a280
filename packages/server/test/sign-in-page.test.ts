// flowadmin's own sign-in page over the built server (a real socket, argon2, SQLite, otpauth
// computing the codes), walked as a browser without script would: forms, the binding cookie,
// redirects not followed. The second factor, the policy's enrolment, the password grant refused,
// an editor's authorization request, and codes refused when replayed, expired or wrong.
import { createHash, randomBytes } from 'node:crypto'
import { Secret, TOTP } from 'otpauth'
import { afterEach, describe, expect, it } from 'vitest'
import { hashPassword } from '../src/index.js'
import { type BuiltServer, useUserDir } from './cli-process.js'
import { browse, type CookieJar, createCookieJar } from './oidc-provider.js'
import { logInAs } from './password-grant.js'

const dir = useUserDir('sign-in-page')
const KEY = 'the-key-of-this-test-forty-characters-xx'
const FLEET = 'fleet'
const FLEET_SECRET = randomBytes(24).toString('base64url')
const FLEET_REDIRECT = 'http://127.0.0.1:9/auth/strategy/callback'

let running: BuiltServer | undefined
afterEach(async () => {
  await running?.stop()
  running = undefined
})

async function start(require: unknown = 'none'): Promise<string> {
  const adminAuth = {
    users: [
      { username: 'alice', password: await hashPassword('alice-pw'), permissions: 'read' },
      { username: 'admin', password: await hashPassword('admin-pw'), permissions: '*' },
    ],
    mfa: { key: KEY, require },
    resourceServers: [
      {
        id: FLEET,
        secret: `sha256:${createHash('sha256').update(FLEET_SECRET).digest('hex')}`,
        redirectUris: [FLEET_REDIRECT],
      },
    ],
  }
  running = await dir.start({
    settings: { userDir: dir.userDir, auditLog: { file: 'audit.log' }, adminAuth },
  })
  return running.url
}

const codeAt = (secret: string, timestamp = Date.now()) =>
  new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({
    timestamp,
  })

/** The value of the hidden field or input `name` of a page. */
const field = (page: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(page)?.[1]
const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
})

/** A browser at the page: begins a sign-in, then posts the page's forms. */
async function openPage(url: string, path = '/auth/signin') {
  const jar: CookieJar = createCookieJar()
  const first = await browse(jar, `${url}${path}`)
  const post = (step: string, fields: Record<string, string>) =>
    browse(jar, `${url}/auth/signin${step}`, form(fields))
  return { jar, first, post }
}

/** The console's end of a sign-in: the code in the fragment, traded with the browser's cookie. */
async function consoleToken(url: string, jar: CookieJar, answer: Response): Promise<string> {
  expect(answer.status).toBe(303)
  const location = answer.headers.get('location') ?? ''
  const code = /^\/#sso_code=([\w-]+)$/.exec(location)?.[1]
  expect(code).toBeDefined()
  const traded = await browse(
    jar,
    `${url}/auth/token`,
    form({ grant_type: 'authorization_code', code: code ?? '', client_id: 'service-editor' }),
  )
  expect(traded.status).toBe(200)
  return ((await traded.json()) as { access_token: string }).access_token
}

async function whoAmI(url: string, token: string) {
  const res = await fetch(`${url}/auth/tokens`, { headers: { authorization: `Bearer ${token}` } })
  expect(res.status).toBe(200)
  return res
}

/** Enrols TOTP for `username` through the API, from a session of the page; the secret and recovery codes. */
async function enrolTotp(url: string, username: string, password: string) {
  const page = await openPage(url)
  const token = await consoleToken(url, page.jar, await page.post('', { username, password }))
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
  const started = await fetch(`${url}/auth/mfa/totp`, { method: 'POST', headers })
  const { secret } = (await started.json()) as { secret: string }
  const confirmed = await fetch(`${url}/auth/mfa/totp/confirm`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ code: codeAt(secret) }),
  })
  expect(confirmed.status).toBe(200)
  const { recovery_codes } = (await confirmed.json()) as { recovery_codes: string[] }
  return { secret, recoveryCodes: recovery_codes }
}

describe("flowadmin's sign-in page", () => {
  it('shows an accessible form, binds the sign-in to the browser, and signs a person without a factor in', async () => {
    const url = await start()
    const { jar, first, post } = await openPage(url)
    expect(first.status).toBe(200)
    expect(first.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(first.headers.get('content-security-policy')).toContain("script-src 'self'")
    expect(first.headers.get('x-frame-options')).toBe('DENY')
    expect(first.headers.get('cache-control')).toBe('no-store')
    expect(first.headers.getSetCookie()[0]).toMatch(
      /^flowadmin_sso=[\w-]{43}; Path=\/auth; Max-Age=600; HttpOnly; SameSite=Lax$/,
    )
    const html = await first.text()
    expect(html).toContain('<label for="username">Username</label>')
    expect(html).toContain('autocomplete="current-password"')
    expect(html).not.toMatch(/https?:\/\//)

    // Wrong password: the same step, the name kept, the password not.
    const wrong = await post('', { username: 'alice', password: 'nope' })
    expect(wrong.status).toBe(401)
    const again = await wrong.text()
    expect(again).toContain('role="alert" id="form-error">Wrong username or password.')
    expect(again).toContain('value="alice"')

    const token = await consoleToken(url, jar, await post('', { username: 'alice', password: 'alice-pw' }))
    const inventory = (await (await whoAmI(url, token)).json()) as { tokens: Array<{ user: string }> }
    expect(inventory.tokens.map((entry) => entry.user)).toContain('alice')
    // The sign-in is spent: the same browser cannot end it twice.
    expect((await post('', { username: 'alice', password: 'alice-pw' })).status).toBe(400)
  })

  it('refuses a form from a browser that did not begin the sign-in (no cookie), checking nothing', async () => {
    const url = await start()
    const res = await fetch(`${url}/auth/signin`, form({ username: 'alice', password: 'alice-pw' }))
    expect(res.status).toBe(400)
    expect(await res.text()).toContain('Sign-in expired')
  })

  it('asks a person with TOTP for a code; refuses wrong, expired, replayed and used recovery codes; the password grant says mfa_required', async () => {
    const url = await start()
    const { secret, recoveryCodes } = await enrolTotp(url, 'alice', 'alice-pw')

    // The password grant cannot ask for the code: refused, saying what to use instead.
    const grant = await logInAs(url, 'alice', 'alice-pw', 'read')
    expect(grant.status).toBe(403)
    const refusal = (await grant.json()) as { error: string; error_description: string }
    expect(refusal.error).toBe('mfa_required')
    expect(refusal.error_description).toContain('API token')

    const { jar, post } = await openPage(url)
    const codeStep = await post('', { username: 'alice', password: 'alice-pw' })
    expect(codeStep.status).toBe(200)
    const page = await codeStep.text()
    expect(page).toContain('autocomplete="one-time-code"')
    const ticket = field(page, 'ticket') ?? ''
    expect(ticket).toMatch(/^[\w-]{43}$/)

    const wrong = await post('/code', { ticket, code: '000000' })
    expect(wrong.status).toBe(401)
    const retry = await wrong.text()
    expect(retry).toContain('That code is wrong, expired or used already.')
    const next = field(retry, 'ticket') ?? ''
    expect(next).not.toBe(ticket)
    // The old ticket is spent.
    expect((await post('/code', { ticket, code: codeAt(secret) })).status).toBe(400)

    const expired = await post('/code', { ticket: next, code: codeAt(secret, Date.now() - 120_000) })
    expect(expired.status).toBe(401)
    const right = codeAt(secret, Date.now() + 30_000)
    const done = await post('/code', { ticket: field(await expired.text(), 'ticket') ?? '', code: right })
    await consoleToken(url, jar, done)

    // The same code in another sign-in: replayed, refused.
    const second = await openPage(url)
    const step = await (await second.post('', { username: 'alice', password: 'alice-pw' })).text()
    const replayed = await second.post('/code', { ticket: field(step, 'ticket') ?? '', code: right })
    expect(replayed.status).toBe(401)
    // A recovery code signs in once.
    const recovery = recoveryCodes[0] ?? ''
    const withRecovery = await second.post('/code', {
      ticket: field(await replayed.text(), 'ticket') ?? '',
      code: recovery,
    })
    await consoleToken(url, second.jar, withRecovery)
    const third = await openPage(url)
    const step3 = await (await third.post('', { username: 'alice', password: 'alice-pw' })).text()
    expect((await third.post('/code', { ticket: field(step3, 'ticket') ?? '', code: recovery })).status).toBe(
      401,
    )
  })

  it('asks a person the policy names to enrol at the page, shows the recovery codes once, then signs in', async () => {
    const url = await start(['*'])
    // alice (read) is not named: she signs in with her password alone.
    const alice = await openPage(url)
    await consoleToken(url, alice.jar, await alice.post('', { username: 'alice', password: 'alice-pw' }))
    expect((await logInAs(url, 'admin', 'admin-pw', '*')).status).toBe(403)

    const { jar, post } = await openPage(url)
    const enrol = await post('', { username: 'admin', password: 'admin-pw' })
    expect(enrol.status).toBe(200)
    const page = await enrol.text()
    expect(page).toContain('Set up a second factor')
    expect(page).toMatch(/<img class="qr" src="data:image\/svg\+xml;base64,/)
    const secret = /id="secret">([A-Z2-7]+)</.exec(page)?.[1] ?? ''
    const confirmed = await post('/enrol', { ticket: field(page, 'ticket') ?? '', code: codeAt(secret) })
    expect(confirmed.status).toBe(200)
    const codes = await confirmed.text()
    expect(codes.match(/<li><code>[0-9a-z]{5}-[0-9a-z]{5}<\/code><\/li>/g)).toHaveLength(10)
    const token = await consoleToken(
      url,
      jar,
      await post('/continue', { ticket: field(codes, 'ticket') ?? '' }),
    )
    const status = await fetch(`${url}/auth/mfa`, { headers: { authorization: `Bearer ${token}` } })
    // Set up at the sign-in, with the password alone: the person sees it so afterwards.
    expect(await status.json()).toEqual({
      totp: 'enrolled',
      recovery_codes: 10,
      enrolled_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      enrolled_at_sign_in: true,
    })
  })

  it("signs a person in for an editor's authorization request and sends the browser back there with a code", async () => {
    const url = await start()
    const verifier = randomBytes(32).toString('base64url')
    const challenge = createHash('sha256').update(verifier).digest('base64url')
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: FLEET,
      redirect_uri: FLEET_REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'editor-state',
    })
    const { first, post } = await openPage(url, `/auth/authorize?${query}`)
    expect(first.status).toBe(200)
    const page = await first.text()
    expect(page).toContain('<h1 id="title">Log in</h1>')
    expect(page).toContain('Signing in to <strong>fleet</strong>')
    // The page carries the editor's request in its form, as a browser sends it back.
    const carried = Object.fromEntries(
      [...page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((match) => [
        match[1] ?? '',
        (match[2] ?? '').replace(/&#(\d+);/g, (_all, code) => String.fromCharCode(Number(code))),
      ]),
    )
    expect(carried).toEqual({
      client_id: FLEET,
      redirect_uri: FLEET_REDIRECT,
      code_challenge: challenge,
      state: 'editor-state',
    })
    const back = await post('', { ...carried, username: 'alice', password: 'alice-pw' })
    expect(back.status).toBe(303)
    const location = new URL(back.headers.get('location') ?? '')
    expect(`${location.origin}${location.pathname}`).toBe(FLEET_REDIRECT)
    expect(location.searchParams.get('state')).toBe('editor-state')
    const traded = await fetch(`${url}/auth/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${FLEET}:${FLEET_SECRET}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: location.searchParams.get('code') ?? '',
        redirect_uri: FLEET_REDIRECT,
        code_verifier: verifier,
      }),
    })
    expect(traded.status).toBe(200)
    const { access_token } = (await traded.json()) as { access_token: string }
    // The editor's token is for the fleet: flowadmin's own routes refuse it.
    expect(
      (await fetch(`${url}/auth/tokens`, { headers: { authorization: `Bearer ${access_token}` } })).status,
    ).toBe(401)
  })
})
