// Logging in, out, and losing a session, in Chromium against the built server.
import { describe, expect, it } from 'vitest'
import {
  apiToken,
  axeFindings,
  logIn,
  open,
  screenshot,
  sessionToken,
  USERS,
  useBrowserAndServer,
  useServer,
} from './harness.js'

const env = useBrowserAndServer({ adminAuth: { throttle: { maxFailuresPerUser: 3 } } })

describe('logging in', () => {
  it("sends people to flowadmin's sign-in page: labelled fields, Enter submits, back with a token", async () => {
    const { page, problems, context } = await open(env.browser, `${env.server.url}/`)
    const urls: string[] = []
    page.on('request', (request) => urls.push(request.url()))
    const form = page.getByRole('form', { name: 'Log in' })
    // The console sends the browser to the sign-in page once GET /auth/login says who signs in.
    await form.waitFor({ state: 'visible', timeout: 10_000 })
    expect(new URL(page.url()).pathname).toBe('/auth/signin')
    await expect(form.isVisible()).resolves.toBe(true)
    await expect(page.getByLabel('Username').getAttribute('type')).resolves.toBe('text')
    await expect(page.getByLabel('Password').getAttribute('type')).resolves.toBe('password')
    expect(await axeFindings(page)).toEqual([])
    await screenshot(page, 'login-1440-light')

    await logIn(page, 'admin', USERS.admin)
    await page.getByRole('heading', { name: 'Node modules' }).waitFor()
    await expect(page.getByText('admin', { exact: true }).isVisible()).resolves.toBe(true)
    // The token lives in sessionStorage, never in the address.
    const token = await sessionToken(page)
    expect(token).toMatch(/^[A-Za-z0-9_-]{40,}$/)
    expect(page.url()).toBe(`${env.server.url}/`)
    await page.reload()
    await page.getByRole('heading', { name: 'Node modules' }).waitFor()
    expect(urls.length).toBeGreaterThan(3)
    expect(urls.filter((url) => url.includes(token as string))).toEqual([])
    // Nowhere else: no cookie, nothing in localStorage.
    expect(await context.cookies()).toEqual([])
    expect(await page.evaluate(() => localStorage.length)).toBe(0)
    expect(problems).toEqual([])
    await context.close()
  })

  it('a wrong password shows an alert and keeps the form and the username', async () => {
    const { page, problems, context } = await open(env.browser, `${env.server.url}/`)
    await logIn(page, 'viewer', 'not-the-password')
    const alert = page.getByRole('alert')
    await alert.waitFor()
    await expect(alert.textContent()).resolves.toBe('Wrong username or password.')
    await expect(page.getByLabel('Username').inputValue()).resolves.toBe('viewer')
    await expect(page.getByRole('form', { name: 'Log in' }).isVisible()).resolves.toBe(true)
    expect(await sessionToken(page)).toBeNull()

    // The same form then logs in.
    await page.getByLabel('Password').fill(USERS.viewer)
    await page.getByLabel('Password').press('Enter')
    await page.getByRole('heading', { name: 'Node modules' }).waitFor()
    expect(problems).toEqual([])
    await context.close()
  })

  it('a throttled login says when to retry', async () => {
    const { page, context } = await open(env.browser, `${env.server.url}/`)
    for (let attempt = 1; attempt <= 3; attempt++) {
      await logIn(page, 'mallory', `guess-${attempt}`)
      await page.getByRole('alert').filter({ hasText: 'Wrong username or password.' }).waitFor()
      // The next attempt must not find the previous alert.
      await page.getByLabel('Password').fill('')
    }
    await logIn(page, 'mallory', 'guess-4')
    const alert = page.getByRole('alert').filter({ hasText: 'Too many failed attempts' })
    await alert.waitFor()
    expect(await alert.textContent()).toMatch(
      /^Too many failed attempts\. Try again in \d+ seconds \(at \d\d:\d\d.*\)\.$/,
    )
    await context.close()
  })
})

describe('logging out and lost sessions', () => {
  it('Log out revokes the token and goes back to the login form', async () => {
    const { page, problems, context } = await open(env.browser, `${env.server.url}/`)
    await logIn(page, 'admin', USERS.admin)
    await page.getByRole('heading', { name: 'Node modules' }).waitFor()
    const token = await sessionToken(page)
    await page.getByRole('button', { name: 'Log out' }).click()
    await page.getByRole('form', { name: 'Log in' }).waitFor()
    await expect(
      page.getByRole('status').filter({ hasText: 'You are logged out.' }).isVisible(),
    ).resolves.toBe(true)
    expect(await sessionToken(page)).toBeNull()
    const after = await fetch(`${env.server.url}/settings`, { headers: { authorization: `Bearer ${token}` } })
    expect(after.status).toBe(401)
    expect(problems).toEqual([])
    await context.close()
  })

  it('a token revoked elsewhere leads back to the login form with a message', async () => {
    const { page, context } = await open(env.browser, `${env.server.url}/`)
    await logIn(page, 'admin', USERS.admin)
    await page.getByRole('heading', { name: 'Node modules' }).waitFor()
    const token = (await sessionToken(page)) as string
    const other = await apiToken(env.server.url, 'admin')
    const revoked = await fetch(`${env.server.url}/auth/revoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${other}` },
      body: new URLSearchParams({ token }),
    })
    expect(revoked.status).toBe(200)

    await page.getByRole('switch', { name: 'flowadmin-example-greeting', exact: true }).click()
    await page.getByRole('form', { name: 'Log in' }).waitFor()
    await expect(page.getByRole('status').first().textContent()).resolves.toBe(
      'Your session has ended (it expired or was revoked). Please log in again.',
    )
    expect(await sessionToken(page)).toBeNull()
    await screenshot(page, 'session-ended-1440-light')
    await context.close()
  })
})

describe('an expired token', () => {
  const short = useServer({ adminAuth: { sessionExpiryTime: 5 } })

  it('leads back to the login form with a message, not a broken page', async () => {
    const { page, problems, context } = await open(env.browser, `${short.server.url}/`)
    await logIn(page, 'admin', USERS.admin)
    await page.getByRole('heading', { name: 'Node modules' }).waitFor()
    // The token lives five seconds (time enough for the page to show on a busy machine): once the
    // server refuses it, come back to the page. (The server
    // forgets an expired token when it first sees it, as its sweeper would; the page is told 401
    // either way.)
    const token = (await sessionToken(page)) as string
    await expect
      .poll(
        async () =>
          (await fetch(`${short.server.url}/settings`, { headers: { authorization: `Bearer ${token}` } }))
            .status,
        { timeout: 20_000, interval: 200 },
      )
      .toBe(401)
    await page.reload()
    await page.getByRole('form', { name: 'Log in' }).waitFor()
    await expect(page.getByRole('status').first().textContent()).resolves.toBe(
      'Your session has ended (it expired or was revoked). Please log in again.',
    )
    expect(problems).toEqual([])
    await context.close()
  })
})

describe('without adminAuth', () => {
  const withoutAuth = useServer({ auth: false })

  it('there is no login at all: the modules show at once, and no Log out', async () => {
    const { page, problems, context } = await open(env.browser, `${withoutAuth.server.url}/`)
    await page.getByRole('heading', { name: 'Node modules' }).waitFor()
    await expect(page.getByRole('form', { name: 'Log in' }).count()).resolves.toBe(0)
    await expect(page.getByRole('button', { name: 'Log out' }).count()).resolves.toBe(0)
    await expect(
      page.getByRole('switch', { name: 'flowadmin-example-greeting', exact: true }).isEnabled(),
    ).resolves.toBe(true)
    expect(problems).toEqual([])
    await context.close()
  })
})
