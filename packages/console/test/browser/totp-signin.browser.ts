// A code of an authenticator app on flowadmin's sign-in page, in Chromium against the built
// server: a person enrols in the console's Security view (codes computed from the secret the page
// shows), then signs in with the password and a code; a wrong code keeps the step, a code is
// taken once, and a recovery code works once.
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { totpCode } from '../../../server/test/totp-code.js'
import {
  axeFindings,
  logIn,
  MFA_KEY,
  open,
  sessionToken,
  trailEvents,
  USERS,
  useBrowserAndServer,
} from './harness.js'

const env = useBrowserAndServer({ adminAuth: { mfa: { key: MFA_KEY } } })

const WRONG_CODE = 'That code is wrong, expired or used already.'
const CODE_FIELD = 'Code from your authenticator app, or a recovery code'
const STEP_MS = 30_000

/** flowadmin's `mfa.failed` events of the viewer in the trail, newest first, once `count` are there. */
const codeFailures = (count: number) => trailEvents(env.server.url, 'viewer', 'mfa.failed', count)

async function logOut(page: Page) {
  await page.getByRole('button', { name: 'Log out' }).click()
  await page.getByText('You are logged out.').waitFor()
}

/** The password step done: the page asks for the second factor. */
async function toCodeStep(page: Page) {
  await logIn(page, 'viewer', USERS.viewer)
  await page.getByRole('heading', { name: 'Second factor' }).waitFor()
  expect(await sessionToken(page)).toBeNull()
}

async function verify(page: Page, code: string) {
  await page.getByLabel(CODE_FIELD).fill(code)
  await page.getByRole('button', { name: 'Verify' }).click()
}

/** The code step refused the code: said in an alert, and the step stays for another try. */
async function refused(page: Page) {
  await page.getByRole('alert').filter({ hasText: WRONG_CODE }).waitFor()
  await page.getByRole('heading', { name: 'Second factor' }).waitFor()
  expect(await page.getByLabel(CODE_FIELD).isVisible()).toBe(true)
  expect(await sessionToken(page)).toBeNull()
}

/** The console, signed in as the viewer: how the Sessions view says this tab signed in. */
async function signedInWith(page: Page): Promise<string | null> {
  await page.getByRole('heading', { name: 'Node modules' }).waitFor({ timeout: 15_000 })
  expect(await page.locator('.who .user').textContent()).toBe('viewer')
  expect(await sessionToken(page)).toMatch(/^[A-Za-z0-9_-]{40,}$/)
  await page.getByRole('button', { name: 'Sessions and tokens' }).click()
  const session = page.getByRole('listitem').filter({ hasText: 'this tab' })
  await session.waitFor()
  return session.locator('dt:text-is("Signed in with") + dd').textContent()
}

describe('signing in with a code of an authenticator app', () => {
  it('password, then a code: a wrong one keeps the step, each code serves once, a recovery code too', async () => {
    const { page, problems, context } = await open(env.browser, `${env.server.url}/`)
    await logIn(page, 'viewer', USERS.viewer)
    await page.getByRole('button', { name: 'Security' }).click()
    const card = page.getByRole('region', { name: 'Authenticator app' })
    await card.getByRole('button', { name: 'Set up' }).click()
    const secret = await card.getByLabel('Secret').inputValue()
    const enrolledAt = Date.now()
    await card.getByLabel('Code from the app').fill(totpCode(secret, enrolledAt))
    await card.getByRole('button', { name: 'Confirm' }).click()
    const listed = card.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem')
    await expect.poll(() => listed.count()).toBe(10)
    const recoveryCodes = await listed.allTextContents()
    await card.getByRole('button', { name: 'Done' }).click()
    await card.getByText('Enrolled', { exact: true }).waitFor()
    await logOut(page)

    // The password alone no longer signs in: the next step asks for a code.
    await toCodeStep(page)
    expect(await axeFindings(page)).toEqual([])
    // A code of no step near now (the one before the enrolment's is used up already, too).
    const near = [-1, 0, 1, 2].map((step) => totpCode(secret, enrolledAt + step * STEP_MS))
    const wrong = ['000000', '111111', '222222', '333333', '444444'].find(
      (code) => !near.includes(code),
    ) as string
    await verify(page, wrong)
    await refused(page)
    expect(await axeFindings(page)).toEqual([])

    // The next step's code (the enrolment took this step's) signs in, on the same page.
    const next = totpCode(secret, enrolledAt + STEP_MS)
    await verify(page, next)
    expect(await signedInWith(page)).toBe('Password + code')
    await logOut(page)

    // The same code in a new sign-in: refused, it was used.
    await toCodeStep(page)
    await verify(page, next)
    await refused(page)

    // A recovery code signs in once.
    const [recovery] = recoveryCodes as [string]
    await verify(page, recovery)
    expect(await signedInWith(page)).toBe('Password + recovery code')
    await page.getByRole('button', { name: 'Security' }).click()
    await card.getByText(/9 recovery codes left/).waitFor()
    await logOut(page)
    await toCodeStep(page)
    await verify(page, recovery)
    await refused(page)

    expect(await codeFailures(3)).toMatchObject([
      { actor: 'viewer', event: 'mfa.failed', details: { factor: 'recovery_code', reason: 'wrong' } },
      { actor: 'viewer', event: 'mfa.failed', details: { factor: 'totp', reason: 'replayed' } },
      { actor: 'viewer', event: 'mfa.failed', details: { factor: 'totp', reason: 'wrong' } },
    ])
    expect(problems).toEqual([])
    await context.close()
  })
})
