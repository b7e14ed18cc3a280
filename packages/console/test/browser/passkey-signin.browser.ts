// Passkeys end to end, in Chromium with its virtual authenticator, against the built server: a
// person registers one in the console's Security view, then signs in with it on flowadmin's
// sign-in page (no password), or finishes a password sign-in with it; flowadmin refuses an answer
// made for another origin, and a cloned authenticator whose counter is behind.
import { createServer, type Server as HttpServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { CDPSession, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  addAuthenticator,
  axeFindings,
  hash,
  logIn,
  open,
  sessionToken,
  trailEvents,
  USERS,
  useBrowserAndServer,
} from './harness.js'

/** People of this file, one per test, so that each test's passkeys are its own. */
const PEOPLE = ['ada', 'bob', 'cyd', 'dee'] as const
type Person = (typeof PEOPLE)[number]
const passwordOf = (person: Person) => `${person}-password`

const env = useBrowserAndServer(async () => ({
  passkeys: true,
  adminAuth: {
    users: [
      { username: 'admin', password: await hash(USERS.admin), permissions: '*' },
      ...(await Promise.all(
        PEOPLE.map(async (username) => ({
          username,
          password: await hash(passwordOf(username)),
          permissions: 'read',
        })),
      )),
    ],
  },
}))

const REFUSED =
  'The passkey’s answer was refused (its challenge unknown, used or expired, or it did not verify); try again'

/** flowadmin's `passkey.failed` events of `username` in the trail, once `count` are there. */
const passkeyFailures = (username: string, count: number) =>
  trailEvents(env.server.url, username, 'passkey.failed', count)

/** The console at `origin` in a new browser context with a platform authenticator. */
async function consoleWithAuthenticator(origin = env.server.origin) {
  const tab = await open(env.browser, `${origin}/`)
  const authenticator = await addAuthenticator(tab.context, tab.page)
  return { ...tab, ...authenticator }
}

const passkeysCard = (page: Page) => page.getByRole('region', { name: 'Passkeys' })
const lastUsed = (page: Page) => passkeysCard(page).locator('dt:text-is("Last used") + dd').textContent()

async function toSecurity(page: Page) {
  await page.getByRole('button', { name: 'Security' }).click()
  await page.getByRole('heading', { name: 'Security', level: 2 }).waitFor()
}

/** Logs in with the password, and registers a passkey named `name` in the Security view. */
async function registerPasskey(page: Page, person: Person, name: string) {
  await logIn(page, person, passwordOf(person))
  await page.getByRole('heading', { name: 'Node modules' }).waitFor()
  await toSecurity(page)
  const card = passkeysCard(page)
  await card.getByText('No passkey yet.').waitFor()
  await card.getByLabel('Passkey name').fill(name)
  await card.getByRole('button', { name: 'Add a passkey' }).click()
  await card.getByRole('list', { name: 'Your passkeys' }).getByRole('heading', { name }).waitFor()
  await expect
    .poll(() => card.getByRole('status').textContent())
    .toBe(`Passkey ${name} added. Your other sessions have ended.`)
}

/** Logs out from the console, which shows the sign-in page. */
async function logOut(page: Page) {
  await page.getByRole('button', { name: 'Log out' }).click()
  await page.getByRole('form', { name: 'Log in' }).waitFor()
  await page.getByText('You are logged out.').waitFor()
}

/** The console shows `person` signed in, with a token in this tab. */
async function signedInAs(page: Page, person: Person) {
  await page.getByRole('heading', { name: 'Node modules' }).waitFor({ timeout: 15_000 })
  expect(await page.locator('.who .user').textContent()).toBe(person)
  expect(await sessionToken(page)).toMatch(/^[A-Za-z0-9_-]{40,}$/)
}

/** How this tab's session signed in, as the Sessions view says. */
async function signedInWith(page: Page): Promise<string | null> {
  await page.getByRole('button', { name: 'Sessions and tokens' }).click()
  const session = page.getByRole('listitem').filter({ hasText: 'this tab' })
  await session.waitFor()
  return session.locator('dt:text-is("Signed in with") + dd').textContent()
}

/** The sign-in page says the passkey was refused, in its alert, and stays; no token in this tab. */
async function refusedOnPage(page: Page) {
  // Shown, or the page went elsewhere (signed in): then this fails within the timeout.
  const error = page.getByRole('alert').and(page.locator('#passkey-error'))
  await error.waitFor({ state: 'visible', timeout: 15_000 })
  expect(await error.textContent()).toBe(REFUSED)
  expect(new URL(page.url()).pathname).toBe('/auth/signin')
  expect(await sessionToken(page)).toBeNull()
}

/** The passkeys the person of `token` has, as the API lists them. */
async function passkeysOf(token: string) {
  const res = await fetch(`${env.server.url}/auth/passkeys`, {
    headers: { authorization: `Bearer ${token}` },
  })
  expect(res.status).toBe(200)
  return ((await res.json()) as { passkeys: Array<{ name: string; last_used_at: string | null }> }).passkeys
}

/** The credentials an authenticator holds, with their private keys and counters. */
async function credentialsOf(cdp: CDPSession, authenticatorId: string) {
  const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId })
  return credentials
}

/** A proxy at http://localhost:<its port> that forwards everything to `target`, as it came. */
function proxyTo(target: string): Promise<{ origin: string; close: () => Promise<void> }> {
  const { hostname, port } = new URL(target)
  const server: HttpServer = createServer((incoming, outgoing) => {
    const upstream = request(
      { host: hostname, port, method: incoming.method, path: incoming.url, headers: incoming.headers },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(outgoing)
      },
    )
    upstream.on('error', () => {
      outgoing.writeHead(502)
      outgoing.end()
    })
    incoming.pipe(upstream)
  })
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        origin: `http://localhost:${(server.address() as AddressInfo).port}`,
        close: () =>
          new Promise<void>((closed) => {
            server.closeAllConnections()
            server.close(() => closed())
          }),
      }),
    ),
  )
}

describe('signing in with a passkey', () => {
  it('registers a passkey in the Security view, then signs in with it alone on the sign-in page', async () => {
    const { page, problems, context } = await consoleWithAuthenticator()
    await registerPasskey(page, 'ada', 'ada laptop')
    expect(await lastUsed(page)).toBe('not yet')

    await logOut(page)
    const button = page.locator('#passkey-signin')
    await expect.poll(() => button.isVisible()).toBe(true)
    expect(await button.textContent()).toBe('Sign in with a passkey')
    expect(await axeFindings(page)).toEqual([])
    expect(await page.getByLabel('Password').inputValue()).toBe('')
    expect(await sessionToken(page)).toBeNull()

    await button.click()
    await signedInAs(page, 'ada')
    expect(new URL(page.url()).hash).toBe('')
    expect(await signedInWith(page)).toBe('Passkey')

    await toSecurity(page)
    await passkeysCard(page).getByRole('heading', { name: 'ada laptop' }).waitFor()
    expect(await lastUsed(page)).not.toBe('not yet')
    const [passkey] = await passkeysOf((await sessionToken(page)) as string)
    expect(passkey?.name).toBe('ada laptop')
    expect(Date.now() - Date.parse(passkey?.last_used_at ?? '')).toBeLessThan(60_000)
    expect(problems).toEqual([])
    await context.close()
  })

  it('a person with a passkey who types the password finishes with the passkey', async () => {
    const { page, problems, context } = await consoleWithAuthenticator()
    await registerPasskey(page, 'bob', 'bob phone')
    await logOut(page)

    await logIn(page, 'bob', passwordOf('bob'))
    await page.getByRole('heading', { name: 'Second factor' }).waitFor()
    await page.getByText('Your password was right. Finish with your passkey.').waitFor()
    // No code is asked of a person without an authenticator app.
    await expect(page.getByLabel(/Code from your authenticator app/).count()).resolves.toBe(0)
    const button = page.locator('#passkey-second')
    await expect.poll(() => button.isVisible()).toBe(true)
    expect(await button.textContent()).toBe('Sign in with your passkey')
    expect(await sessionToken(page)).toBeNull()
    expect(await axeFindings(page)).toEqual([])

    await button.click()
    await signedInAs(page, 'bob')
    expect(await signedInWith(page)).toBe('Passkey')
    expect(problems).toEqual([])
    await context.close()
  })
})

describe('passkey answers flowadmin refuses', () => {
  let proxy: Awaited<ReturnType<typeof proxyTo>>
  beforeAll(async () => {
    proxy = await proxyTo(env.server.url)
  })
  afterAll(() => proxy?.close())

  it('from another origin than the settings name: refused, said on the page, audited', async () => {
    const { page, problems, context } = await consoleWithAuthenticator()
    await registerPasskey(page, 'cyd', 'cyd laptop')
    await logOut(page)

    // The same flowadmin through another origin: the browser accepts the relying party
    // localhost on any port, so only flowadmin's check of the origin stands in the way.
    await page.goto(`${proxy.origin}/`)
    await page.getByRole('form', { name: 'Log in' }).waitFor()
    expect(new URL(page.url()).origin).toBe(proxy.origin)
    const button = page.locator('#passkey-signin')
    await expect.poll(() => button.isVisible()).toBe(true)
    await button.click()
    await refusedOnPage(page)
    await expect.poll(() => button.isEnabled()).toBe(true)

    const failures = await passkeyFailures('cyd', 1)
    expect(failures).toMatchObject([
      {
        actor: 'cyd',
        event: 'passkey.failed',
        outcome: 'failure',
        details: { reason: 'verification_failed' },
      },
    ])
    // The same passkey at flowadmin's own origin signs in: the origin was what was refused.
    await page.goto(`${env.server.origin}/`)
    await page.locator('#passkey-signin').click()
    await signedInAs(page, 'cyd')
    expect(problems).toEqual([])
    await context.close()
  })

  it('from a cloned authenticator whose counter is behind: refused, audited, no token', async () => {
    const first = await consoleWithAuthenticator()
    await registerPasskey(first.page, 'dee', 'dee key')
    const [credential] = await credentialsOf(first.cdp, first.authenticatorId)
    expect(credential).toBeDefined()
    // The clone: the same private key and counter in another browser's authenticator.
    const clone = await consoleWithAuthenticator()
    await clone.cdp.send('WebAuthn.addCredential', {
      authenticatorId: clone.authenticatorId,
      credential: credential as NonNullable<typeof credential>,
    })

    await logOut(first.page)
    await first.page.locator('#passkey-signin').click()
    await signedInAs(first.page, 'dee')
    const [used] = await credentialsOf(first.cdp, first.authenticatorId)
    expect(used?.signCount).toBeGreaterThan((credential as NonNullable<typeof credential>).signCount)

    await clone.page.getByRole('form', { name: 'Log in' }).waitFor()
    const button = clone.page.locator('#passkey-signin')
    await expect.poll(() => button.isVisible()).toBe(true)
    await button.click()
    await refusedOnPage(clone.page)
    // The clone did sign: its counter moved, but not past the one flowadmin holds.
    const [cloned] = await credentialsOf(clone.cdp, clone.authenticatorId)
    expect(cloned?.signCount).toBe(used?.signCount)

    expect(await passkeyFailures('dee', 1)).toMatchObject([
      { actor: 'dee', event: 'passkey.failed', outcome: 'failure', details: { reason: 'counter' } },
    ])
    expect(first.problems).toEqual([])
    expect(clone.problems).toEqual([])
    await Promise.all([first.context.close(), clone.context.close()])
  })
})
