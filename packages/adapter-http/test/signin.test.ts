// flowadmin's sign-in page as a person reads it: what each refusal says, the notices the console
// asks for, and when the passkey buttons are there.
import { createMemoryStores } from '@flowadmin/adapter-memory'
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

  test('a throttled code says the real wait, as the password step does', async () => {
    const world = await createWorld()
    const session = await world.login('reader', 'read')
    const started = await world.post('/auth/mfa/totp', '', session)
    const { secret } = (await started.json()) as { secret: string }
    const code = world.totp.codeAt(secret, world.clock.now())
    expect((await world.post('/auth/mfa/totp/confirm', { code }, session)).status).toBe(200)
    const { cookie } = await begin(world)
    const ticketOf = async (res: Response) =>
      /name="ticket" value="([^"]*)"/.exec(await res.text())?.[1] ?? ''
    let ticket = await ticketOf(await post(world, cookie, { username: 'reader', password: 'pw' }))
    for (let i = 0; i < 5; i++)
      ticket = await ticketOf(await post(world, cookie, { ticket, code: '000000' }, '/code'))
    const throttled = await post(world, cookie, { ticket, code: '000000' }, '/code')
    expect(throttled.status).toBe(429)
    const retryAfter = throttled.headers.get('retry-after')
    expect(Number(retryAfter)).toBeGreaterThan(60)
    const page = await throttled.text()
    expect(page).toMatch(
      new RegExp(
        `Too many failed attempts\\. Try again in ${retryAfter} seconds \\(at \\d\\d:\\d\\d UTC\\)\\.`,
      ),
    )
    expect(page).not.toContain('Wait a minute')
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

describe('passkey sign-in challenges', () => {
  /** A world where the editor has passkey `cred-e`, and a browser that began a sign-in. */
  async function withPasskey(worldOptions: Parameters<typeof createWorld>[0] = {}) {
    const world = await createWorld({ app: { signInScript: '/signin.js' }, ...worldOptions })
    const who = await world.core.authenticate(await world.login('editor', ''))
    if (!who.ok || who.value.kind !== 'user') throw new Error('no principal')
    const creation = await world.core.passkeys.registrationOptions(who.value)
    if (!creation.ok) throw new Error(creation.error.code)
    const made = world.webauthn.create(creation.value.options, 'cred-e')
    expect((await world.core.passkeys.register(who.value, 'key', made, null)).ok).toBe(true)
    const json = (cookie: string, path: string, body: unknown) =>
      world.request(path, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Cookie: cookie },
        body: JSON.stringify(body),
      })
    const options = async (cookie: string) =>
      ((await (await json(cookie, '/auth/signin/passkey/options', {})).json()) as { options: unknown })
        .options
    return { world, json, options }
  }

  test('ask user verification, are never refused however many wait, and serve only the browser they were given to', async () => {
    const { world, json, options } = await withPasskey()
    const mine = await begin(world)
    const given = await options(mine.cookie)
    expect(given).toMatchObject({ userVerification: 'required' })
    // Far more than any bound would have let wait, from this address: all answered 200.
    const other = await begin(world)
    for (let i = 0; i < 150; i++)
      expect((await json(other.cookie, '/auth/signin/passkey/options', {})).status).toBe(200)
    // Another browser cannot answer this one's challenge; this browser still can.
    const answer = {
      response: world.webauthn.get(given, 'cred-e', { counter: 1 }),
      destination: { return_to: '/' },
    }
    const stolen = await json(other.cookie, '/auth/signin/passkey', answer)
    expect(stolen.status).toBe(400)
    expect(await stolen.json()).toMatchObject({ code: 'passkey_refused' })
    expect((await json(mine.cookie, '/auth/signin/passkey', answer)).status).toBe(200)
  })

  test('a passkey that signed in but cannot hand out a code (too many wait) is refused and audited, as fail2ban reads', async () => {
    const stores = createMemoryStores()
    const { world, json, options } = await withPasskey({
      stores: { ...stores, sso: { ...stores.sso, saveCode: async () => 'full' as const } },
    })
    const { cookie } = await begin(world)
    const given = await options(cookie)
    const refused = await json(cookie, '/auth/signin/passkey', {
      response: world.webauthn.get(given, 'cred-e', { counter: 1 }),
      destination: { return_to: '/' },
    })
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toBe('30')
    expect(await refused.json()).toMatchObject({ code: 'too_many_sign_ins' })
    expect(world.events.ofType('passkey.failed')).toMatchObject([
      { reason: 'too_many_sign_ins', username: 'editor', address: '203.0.113.7' },
    ])
  })
})
