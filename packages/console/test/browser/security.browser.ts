// The Security view, in Chromium against the built server: a person sets up an authenticator app
// (the code computed from the secret the page shows), and an administrator removes another
// person's second factors.
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { loginFor } from '../../../server/test/target-server.js'
import { totpCode } from '../../../server/test/totp-code.js'
import {
  apiToken,
  axeFindings,
  hash,
  MFA_KEY,
  screenshot,
  sessionToken,
  USERS,
  useBrowserAndServer,
  useServer,
} from './harness.js'
import { itReadsWell, type Person, showView, signedIn, type TabOptions } from './views.js'

/** A third person, whose factor the administrator removes: untouched by the other tests. */
const OPERATOR = { username: 'operator', password: 'operator-pw' }
const env = useBrowserAndServer(async () => ({
  adminAuth: {
    mfa: { key: MFA_KEY, issuer: 'Console test' },
    users: [
      { username: 'admin', password: await hash(USERS.admin), permissions: '*' },
      { username: 'viewer', password: await hash(USERS.viewer), permissions: 'read' },
      { username: OPERATOR.username, password: await hash(OPERATOR.password), permissions: 'read' },
    ],
  },
}))

const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } })

async function securityOf(url: string, person: Person, options: TabOptions = {}) {
  const tab = await signedIn(env.browser, url, person, options)
  await showView(tab.page, 'Security')
  return tab
}

const totpCard = (page: Page) => page.getByRole('region', { name: 'Authenticator app' })

const codeOf = (secret: string) => totpCode(secret)

describe('the Security view', () => {
  it('sets up an authenticator app: QR code and secret, one code, ten recovery codes shown once', async () => {
    // Another session of the viewer's, which the enrolment ends.
    const other = await apiToken(env.server.url, 'viewer')
    const { page, problems, context } = await securityOf(env.server.url, 'viewer')
    const card = totpCard(page)
    await card.getByRole('button', { name: 'Set up' }).waitFor()
    // Said before anything happens: the other sessions end.
    await expect(card.getByText(/ends your other sessions/).count()).resolves.toBe(1)
    // Passkeys are not configured on this server: the section says so instead of failing.
    await page
      .getByRole('region', { name: 'Passkeys' })
      .getByText(
        'Passkeys are not available on this server yet: an administrator must configure them (adminAuth.webauthn).',
      )
      .waitFor()
    expect(await axeFindings(page)).toEqual([])

    await card.getByRole('button', { name: 'Set up' }).click()
    const qr = card.getByRole('img', { name: /QR code/ })
    await qr.waitFor()
    // The QR code (a data: URL) is drawn: the page's CSP lets it in.
    await expect
      .poll(() => qr.evaluate((image: HTMLImageElement) => image.complete && image.naturalWidth))
      .toBeGreaterThan(0)
    const secret = await card.getByLabel('Secret').inputValue()
    expect(secret).toMatch(/^[A-Z2-7]{16,}$/)
    await screenshot(page, 'security-enrol-1440-light')
    expect(await axeFindings(page)).toEqual([])

    // A wrong code is refused in an alert, and the form stays for another try.
    const wrong = codeOf(secret) === '000000' ? '111111' : '000000'
    await card.getByLabel('Code from the app').fill(wrong)
    await card.getByRole('button', { name: 'Confirm' }).click()
    await card.getByRole('alert').filter({ hasText: 'That code is wrong, expired or used already' }).waitFor()
    expect(await (await fetch(`${env.server.url}/auth/mfa`, bearer(other))).json()).toEqual({
      totp: 'pending',
      recovery_codes: 0,
    })

    await card.getByLabel('Code from the app').fill(codeOf(secret))
    await card.getByRole('button', { name: 'Confirm' }).click()
    const codes = card.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem')
    await expect.poll(() => codes.count()).toBe(10)
    const shown = await codes.allTextContents()
    expect(new Set(shown).size).toBe(10)
    await expect(card.getByText(/Save these now/).count()).resolves.toBe(1)
    await expect(card.getByRole('alert').count()).resolves.toBe(0)
    await screenshot(page, 'security-recovery-codes-1440-light')
    expect(await axeFindings(page)).toEqual([])

    // Shown once: after Done they are gone from the page, and the state says how many are left.
    await card.getByRole('button', { name: 'Done' }).click()
    await card.getByText('Enrolled', { exact: true }).waitFor()
    await expect(card.getByText(/10 recovery codes left/).count()).resolves.toBe(1)
    const html = await page.content()
    for (const code of shown) expect(html).not.toContain(code)
    expect(html).not.toContain(secret)

    // The server agrees; this tab's session goes on, the other one ended.
    const mine = (await sessionToken(page)) as string
    const status = await fetch(`${env.server.url}/auth/mfa`, bearer(mine))
    expect(status.status).toBe(200)
    expect(await status.json()).toEqual({ totp: 'enrolled', recovery_codes: 10 })
    expect((await fetch(`${env.server.url}/settings`, bearer(other))).status).toBe(401)

    // A reload shows the same state, from the server.
    await page.reload()
    await page.getByRole('button', { name: 'Security' }).click()
    await totpCard(page)
      .getByText(/10 recovery codes left/)
      .waitFor()
    expect(problems).toEqual([])
    await context.close()
  })

  it("lets an administrator remove another person's second factors, after a confirmation", async () => {
    // The operator has an authenticator app (set up through the API as a script would) and a session.
    const operator = await loginFor(env.server.url, OPERATOR, '')
    const started = await fetch(`${env.server.url}/auth/mfa/totp`, { method: 'POST', ...bearer(operator) })
    const { secret } = (await started.json()) as { secret: string }
    const confirmed = await fetch(`${env.server.url}/auth/mfa/totp/confirm`, {
      method: 'POST',
      headers: { authorization: `Bearer ${operator}`, 'content-type': 'application/json' },
      body: JSON.stringify({ code: codeOf(secret) }),
    })
    expect(confirmed.status).toBe(200)

    const { page, problems, context } = await securityOf(env.server.url, 'admin')
    const card = page.getByRole('region', { name: "Another person's second factors" })
    // The people with a session are offered by name; the administrator is not among them.
    const offered = () =>
      card.locator('datalist option').evaluateAll((options) => options.map((o) => o.getAttribute('value')))
    await expect.poll(offered).toContain('operator')
    expect(await offered()).not.toContain('admin')
    expect(await axeFindings(page)).toEqual([])

    await card.getByLabel('Username').fill('operator')
    await card.getByRole('button', { name: 'Remove second factors' }).click()
    const question = card.getByText(/Remove every second factor of operator .* and end all their sessions\?/)
    await question.waitFor()
    // Cancel changes nothing.
    await card.getByRole('button', { name: 'Cancel' }).click()
    await expect(question.count()).resolves.toBe(0)
    expect((await fetch(`${env.server.url}/settings`, bearer(operator))).status).toBe(200)

    await card.getByRole('button', { name: 'Remove second factors' }).click()
    await card.getByRole('button', { name: 'Yes, remove' }).click()
    await expect
      .poll(() => card.getByRole('status').textContent())
      .toBe(
        "operator's second factors removed and their sessions ended. They sign in with their password until they set one up again.",
      )
    // Their session ended; the administrator's own goes on; a new sign-in sees no factor.
    expect((await fetch(`${env.server.url}/settings`, bearer(operator))).status).toBe(401)
    expect(
      (await fetch(`${env.server.url}/settings`, bearer((await sessionToken(page)) as string))).status,
    ).toBe(200)
    const fresh = await loginFor(env.server.url, OPERATOR, '')
    expect(await (await fetch(`${env.server.url}/auth/mfa`, bearer(fresh))).json()).toEqual({
      totp: 'none',
      recovery_codes: 0,
    })

    // Again: nothing to remove, and the page says so.
    await card.getByRole('button', { name: 'Remove second factors' }).click()
    await card.getByRole('button', { name: 'Yes, remove' }).click()
    await expect
      .poll(() => card.getByRole('status').textContent())
      .toBe('operator has no second factor: nothing was changed.')
    expect(problems).toEqual([])
    await context.close()
  })

  it('a person without `*` sees no administrator section', async () => {
    // Not the viewer: once enrolled above, a password alone may no longer sign them in.
    const { page, context } = await securityOf(env.server.url, OPERATOR)
    await totpCard(page).waitFor()
    await expect(page.getByRole('region', { name: "Another person's second factors" }).count()).resolves.toBe(
      0,
    )
    await context.close()
  })

  itReadsWell('security', async (options) => {
    const tab = await securityOf(env.server.url, 'admin', options)
    await totpCard(tab.page).getByRole('button', { name: 'Set up' }).waitFor()
    return tab
  })
})

describe('without a key for second-factor secrets', () => {
  const unkeyed = useServer()

  it('says that an administrator must set the key', async () => {
    const { page, problems, context } = await securityOf(unkeyed.server.url, 'viewer')
    const card = totpCard(page)
    await card.getByRole('button', { name: 'Set up' }).click()
    await card
      .getByRole('alert')
      .filter({
        hasText:
          'an administrator must set the key for their secrets (adminAuth.mfa.key or FLOWADMIN_MFA_KEY)',
      })
      .waitFor()
    await expect(card.getByRole('img').count()).resolves.toBe(0)
    expect(problems).toEqual([])
    await context.close()
  })
})
