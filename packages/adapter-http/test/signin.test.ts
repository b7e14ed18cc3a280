// flowadmin's sign-in page as a person reads it: what each refusal says, the notices the console
// asks for, and when the passkey buttons are there.
import { holdVerifications } from '@flowadmin/testkit'
import { describe, expect, test } from 'vitest'
import { createWorld, type World } from './helpers.js'

const cookieOf = (res: Response) => (res.headers.get('set-cookie') ?? '').split(';')[0] ?? ''

async function begin(world: World, path = '/auth/signin') {
  const res = await world.request(path)
  expect(res.status).toBe(200)
  return { cookie: cookieOf(res), page: await res.text() }
}

const post = (world: World, cookie: string, fields: Record<string, string>, step = '') =>
  world.request(`/auth/signin${step}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: cookie },
    body: new URLSearchParams(fields).toString(),
  })

describe('what the page says', () => {
  test('a wrong password, then too many (with when), then a busy verifier (with how long)', async () => {
    const world = await createWorld({ loginQueue: { concurrency: 1, maxWaiting: 0, maxWaitingKnown: 0 } })
    const { cookie } = await begin(world)
    const wrong = await post(world, cookie, { username: 'editor', password: 'nope' })
    expect(wrong.status).toBe(401)
    expect(await wrong.text()).toContain(
      '<p class="error" role="alert" id="form-error">Wrong username or password.</p>',
    )
    for (let i = 0; i < 5; i++) await post(world, cookie, { username: 'editor', password: 'nope' })
    const throttled = await post(world, cookie, { username: 'editor', password: 'nope' })
    expect(throttled.status).toBe(429)
    const retryAfter = throttled.headers.get('retry-after')
    expect(Number(retryAfter)).toBeGreaterThan(0)
    expect(await throttled.text()).toMatch(
      new RegExp(
        `Too many failed attempts\\. Try again in ${retryAfter} seconds \\(at \\d\\d:\\d\\d UTC\\)\\.`,
      ),
    )
    const hold = holdVerifications(world.hasher)
    const held = post(world, cookie, { username: 'admin', password: 'x' })
    await hold.started
    const busy = await post(world, cookie, { username: 'admin', password: 'x' })
    hold.restore()
    await held
    expect(busy.status).toBe(503)
    const wait = busy.headers.get('retry-after')
    expect(Number(wait)).toBeGreaterThan(0)
    expect(await busy.text()).toContain(`The server is busy; retry in ${wait} s.`)
  })

  test("says the console's notice, by name only", async () => {
    const world = await createWorld()
    const { page } = await begin(world, '/auth/signin?notice=logged_out')
    expect(page).toContain('<p class="notice" role="status">You are logged out.</p>')
    const other = await begin(world, '/auth/signin?notice=%3Cscript%3E')
    expect(other.page).not.toContain('role="status"')
    expect(other.page).not.toContain('<script>')
  })

  test('escapes what it repeats: the username typed', async () => {
    const world = await createWorld()
    const { cookie } = await begin(world)
    const res = await post(world, cookie, { username: '"><img src=x onerror=alert(1)>', password: 'x' })
    const page = await res.text()
    expect(page).not.toContain('<img src=x')
    expect(page).toContain('value="&#34;&#62;&#60;img src=x onerror=alert(1)&#62;"')
  })
})

describe('what binds a sign-in', () => {
  test('a form sent from another site is refused (403), checking nothing; the same form from the page passes', async () => {
    const world = await createWorld()
    const { cookie } = await begin(world)
    const cross = await world.request('/auth/signin', {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Cookie: cookie,
        'Sec-Fetch-Site': 'same-site',
      },
      body: 'username=admin&password=pw',
    })
    expect(cross.status).toBe(403)
    expect(await cross.text()).toContain('sent from another site')
    expect(world.events.ofType('login.succeeded')).toHaveLength(0)
    const same = await world.request('/auth/signin', {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Cookie: cookie,
        'Sec-Fetch-Site': 'same-origin',
      },
      body: 'username=admin&password=pw',
    })
    expect(same.status).toBe(303)
  })

  test('a ticket serves only the browser it was given to, and a destination is checked again', async () => {
    const world = await createWorld({ secondFactor: { require: 'everyone' } })
    const mine = await begin(world)
    const page = await (await post(world, mine.cookie, { username: 'reader', password: 'pw' })).text()
    const ticket = /name="ticket" value="([^"]*)"/.exec(page)?.[1] ?? ''
    expect(ticket).not.toBe('')
    const theirs = await begin(world, '/auth/signin?return_to=/other')
    expect(theirs.cookie).not.toBe(mine.cookie)
    const stolen = await post(world, theirs.cookie, { ticket, code: '123456' }, '/enrol')
    expect(stolen.status).toBe(400)
    // A destination the page never carried: an unregistered redirect URI is no place to send a code.
    const elsewhere = await post(world, mine.cookie, {
      username: 'admin',
      password: 'pw',
      client_id: 'fleet',
      redirect_uri: 'https://evil.example/cb',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    })
    expect(elsewhere.status).toBe(400)
    expect(elsewhere.headers.get('location')).toBeNull()
    // Nothing is kept before a right password: any number of pages from one address.
    for (let i = 0; i < 150; i++) expect((await world.request('/auth/signin')).status).toBe(200)
  })
})

describe('the passkey buttons', () => {
  test('are there (hidden until the script finds passkeys usable) when passkeys are configured and the script served', async () => {
    const served = await createWorld({ app: { signInScript: '/signin.js' } })
    const { page } = await begin(served)
    expect(page).toContain(
      '<button type="button" id="passkey-signin" class="secondary" data-base="" data-destination="{&#34;return_to&#34;:&#34;/&#34;}" hidden>Sign in with a passkey</button>',
    )
    expect(page).toContain('<script type="module" src="/signin.js"></script>')
    for (const world of [
      await createWorld(),
      await createWorld({ passkeys: false, app: { signInScript: '/signin.js' } }),
    ]) {
      const plain = await begin(world)
      expect(plain.page).not.toContain('passkey-signin')
      expect(plain.page).not.toContain('<script')
    }
  })

  test('finish the password sign-in of a person whose second factor is a passkey', async () => {
    const world = await createWorld({ app: { signInScript: '/signin.js' } })
    const token = await world.login('editor', '')
    const who = await world.core.authenticate(token)
    if (!who.ok || who.value.kind !== 'user') throw new Error('no principal')
    const creation = await world.core.passkeys.registrationOptions(who.value)
    if (!creation.ok) throw new Error(creation.error.code)
    const made = world.webauthn.create(creation.value.options, 'cred-e')
    expect((await world.core.passkeys.register(who.value, 'key', made, null)).ok).toBe(true)
    // The password grant now refuses the editor: a passkey is a second factor.
    const grant = await world.tokenRequest({
      grant_type: 'password',
      client_id: 'service-admin',
      scope: '',
      username: 'editor',
      password: 'pw',
    })
    expect(grant.status).toBe(403)
    expect(await grant.json()).toMatchObject({ error: 'mfa_required' })
    const { cookie } = await begin(world)
    const step = await post(world, cookie, { username: 'editor', password: 'pw' })
    const page = await step.text()
    expect([step.status, page]).toEqual([200, expect.any(String)])
    expect(page).toContain('Finish with your passkey.')
    expect(page).toContain('id="passkey-second"')
    expect(page).not.toContain('name="code"')
    const json = (path: string, body: unknown) =>
      world.request(path, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Cookie: cookie },
        body: JSON.stringify(body),
      })
    const { options } = (await (await json('/auth/signin/passkey/options', {})).json()) as {
      options: unknown
    }
    // A clone's answer (a counter that did not grow) is refused, and audited; the right one passes.
    const signedIn = await json('/auth/signin/passkey', {
      response: world.webauthn.get(options, 'cred-e', { counter: 5 }),
      destination: { return_to: '/' },
    })
    expect(signedIn.status).toBe(200)
    const { redirect } = (await signedIn.json()) as { redirect: string }
    expect(redirect).toMatch(/^\/#sso_code=[\w-]{43}$/)
    const again = await begin(world)
    const more = (await (
      await world.request('/auth/signin/passkey/options', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Cookie: again.cookie },
        body: '{}',
      })
    ).json()) as { options: unknown }
    const clone = await world.request('/auth/signin/passkey', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Cookie: again.cookie },
      body: JSON.stringify({
        response: world.webauthn.get(more.options, 'cred-e', { counter: 5 }),
        destination: { return_to: '/' },
      }),
    })
    expect(clone.status).toBe(400)
    expect(await clone.json()).toMatchObject({ code: 'passkey_refused' })
    expect(world.events.ofType('passkey.failed').at(-1)).toMatchObject({
      reason: 'counter',
      username: 'editor',
    })
  })
})
