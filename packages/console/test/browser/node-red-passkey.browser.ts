// A stock Node-RED 4.1 editor in Chromium whose "Sign in with flowadmin" goes to flowadmin's own
// sign-in page (no identity provider): a passkey made in flowadmin's console (Chromium's virtual
// authenticator) or a code of an authenticator app (otpauth) brings the person back to the editor,
// which deploys with the token it got; the editor's own login form refuses a person with a second
// factor. The built flowadmin and two Node-REDs with the helper, all on this host.
import type { Browser, Page, Response } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  enrolTotp,
  LABEL,
  type NodeRedPasskey,
  PEOPLE,
  startNodeRedPasskey,
} from '../../../server/test/node-red-passkey.js'
import { deploy } from '../../../server/test/node-red-sso.js'
import { totpCode } from '../../../server/test/totp-code.js'
import { deployFromEditor } from './editor.js'
import { addAuthenticator, launch, logIn, open } from './harness.js'

/** A test that loads the editor twice (about 8 s each on a busy host) and signs in between. */
const EDITOR_TEST_MS = 120_000

let env: NodeRedPasskey
let browser: Browser
/** tom's authenticator app: the secret it holds. */
let tomSecret: string

beforeAll(async () => {
  ;[env, browser] = await Promise.all([startNodeRedPasskey(), launch()])
  tomSecret = await enrolTotp(env.flowadmin.url, 'tom', PEOPLE.tom)
})
afterAll(async () => {
  await browser?.close()
  await env?.stop()
})

/** flowadmin's answer to an introspection of `token` by the fleet (the editor's resource server). */
async function introspect(token: string) {
  const answer = await fetch(`${env.flowadmin.url}/auth/introspect`, {
    method: 'POST',
    headers: { Authorization: env.basic, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token }),
  })
  expect(answer.status).toBe(200)
  return (await answer.json()) as Record<string, unknown>
}

/** The token the editor holds. */
const editorToken = (page: Page) =>
  page.evaluate(
    () =>
      (
        window as unknown as { RED: { settings: { get(key: string): { access_token: string } } } }
      ).RED.settings.get('auth-tokens').access_token,
  )

/** The editor's "Sign in with flowadmin" button, then flowadmin's sign-in page. */
async function toFlowadminPage(page: Page): Promise<void> {
  await page.goto(`${env.nodeRed.url}/`)
  const button = page.getByRole('link', { name: LABEL }).or(page.getByRole('button', { name: LABEL }))
  await button.first().waitFor({ state: 'visible', timeout: 20_000 })
  await button.first().click()
  await page.waitForURL((url) => url.origin === env.flowadmin.url, { timeout: 15_000 })
  await page.getByRole('form', { name: 'Log in' }).waitFor({ state: 'visible' })
}

/** Back in the editor, its token out of the address, the editor loaded (Deploy shown). */
async function editorLoaded(page: Page): Promise<void> {
  await page.waitForURL((url) => url.origin === env.nodeRed.url && url.search === '', { timeout: 15_000 })
  await page.locator('#red-ui-header-button-deploy').waitFor({ state: 'visible', timeout: 30_000 })
}

/** The editor's token is the fleet's: active at its introspection, refused by flowadmin's own API. */
async function expectEditorToken(token: string, username: string): Promise<void> {
  expect(await introspect(token)).toMatchObject({ active: true, username, scope: '*' })
  const own = await fetch(`${env.flowadmin.url}/auth/tokens`, {
    headers: { authorization: `Bearer ${token}` },
  })
  expect(own.status).toBe(401)
}

describe('a Node-RED editor signs in on flowadmin’s page with a second factor', () => {
  it(
    'a passkey made in flowadmin’s console signs the person in to the editor, which deploys',
    async () => {
      const { page, problems, context } = await open(browser, `${env.flowadmin.url}/`)
      const { cdp, authenticatorId } = await addAuthenticator(context, page)

      // In flowadmin's console: sign in with the password, make a passkey in the Security view.
      await page.getByRole('form', { name: 'Log in' }).waitFor({ state: 'visible', timeout: 10_000 })
      await logIn(page, 'pia', PEOPLE.pia)
      await page.getByRole('button', { name: 'Security' }).click()
      const card = page.getByRole('region', { name: 'Passkeys' })
      await card.getByText('No passkey yet.').waitFor()
      await card.getByLabel('Passkey name').fill('this laptop')
      await card.getByRole('button', { name: 'Add a passkey' }).click()
      await card.getByRole('list', { name: 'Your passkeys' }).getByText('this laptop').waitFor()
      const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId })
      expect(credentials).toHaveLength(1)
      expect(credentials[0]).toMatchObject({ rpId: 'localhost', isResidentCredential: true })

      // In the editor: the button, flowadmin's page, the passkey alone, back in the editor.
      const callbacks: string[] = []
      page.on('request', (request) => {
        if (request.url().startsWith(`${env.nodeRed.url}/auth/strategy/callback`))
          callbacks.push(request.url())
      })
      await toFlowadminPage(page)
      const passkey = page.getByRole('button', { name: 'Sign in with a passkey' })
      await passkey.waitFor({ state: 'visible' })
      await passkey.click()
      await editorLoaded(page)
      expect(callbacks).toHaveLength(1)
      expect(new URL(callbacks[0] as string).searchParams.get('code')).toMatch(/^[\w-]+$/)
      // The authenticator signed once more (its counter grew from the registration's).
      const after = await cdp.send('WebAuthn.getCredentials', { authenticatorId })
      expect(after.credentials[0]?.signCount).toBeGreaterThan(credentials[0]?.signCount ?? 0)

      const token = await editorToken(page)
      await expectEditorToken(token, 'pia')
      expect(await deployFromEditor(page)).toBe(200)
      expect(problems).toEqual([])

      // Back in the console of this tab: the passkey was used just now.
      await page.goto(`${env.flowadmin.url}/`)
      await page.getByRole('button', { name: 'Security' }).click()
      const used = page.getByRole('region', { name: 'Passkeys' }).locator('dt:text-is("Last used") + dd')
      await expect.poll(() => used.textContent()).not.toBe('not yet')
      await context.close()
    },
    EDITOR_TEST_MS,
  )

  it(
    'a code of the authenticator app signs the person in to the editor; a wrong code is refused on the page',
    async () => {
      const { page, problems, context } = await open(browser, 'about:blank')
      const callbacks: string[] = []
      page.on('request', (request) => {
        if (request.url().startsWith(`${env.nodeRed.url}/auth/strategy/callback`))
          callbacks.push(request.url())
      })
      await toFlowadminPage(page)
      await logIn(page, 'tom', PEOPLE.tom)
      const code = page.getByLabel('Code from your authenticator app, or a recovery code')
      await code.waitFor({ state: 'visible' })
      expect(new URL(page.url()).origin).toBe(env.flowadmin.url)

      // A code the app does not show now (nor 30 s before or after): the alert, still on flowadmin's page.
      const near = new Set([-30_000, 0, 30_000].map((shift) => totpCode(tomSecret, Date.now() + shift)))
      let wrong = 123_456
      while (near.has(String(wrong))) wrong += 1
      await code.fill(String(wrong))
      await page.getByRole('button', { name: 'Verify' }).click()
      const alert = page.getByRole('alert').filter({ hasText: 'That code' })
      await alert.waitFor({ state: 'visible' })
      expect(await alert.textContent()).toBe('That code is wrong, expired or used already.')
      expect(new URL(page.url()).origin).toBe(env.flowadmin.url)
      expect(callbacks).toEqual([])
      expect(await page.evaluate(() => document.title)).toContain('Second factor')

      // The app's code (of the next 30 s: the one that confirmed the enrolment is spent).
      await code.fill(totpCode(tomSecret, Date.now() + 30_000))
      await page.getByRole('button', { name: 'Verify' }).click()
      await editorLoaded(page)
      expect(callbacks).toHaveLength(1)
      const token = await editorToken(page)
      await expectEditorToken(token, 'tom')
      expect(await deployFromEditor(page)).toBe(200)
      expect(problems).toEqual([])
      await context.close()
    },
    EDITOR_TEST_MS,
  )

  it('the editor’s own login form refuses a person with a second factor, and says why in its log', async () => {
    const { page, problems, context } = await open(browser, `${env.formEditor.url}/`)
    const username = page.locator('#node-dialog-login-username')
    await username.waitFor({ state: 'visible', timeout: 20_000 })

    /** Logs in with the editor's form: Node-RED's answer to POST /auth/token. */
    const loginWith = async (name: string, password: string): Promise<Response> => {
      await username.fill(name)
      await page.locator('#node-dialog-login-password').fill(password)
      const answer = page.waitForResponse(
        (response) =>
          new URL(response.url()).pathname === '/auth/token' && response.request().method() === 'POST',
      )
      await page.locator('#node-dialog-login-submit').click()
      return answer
    }

    const refused = await loginWith('tom', PEOPLE.tom)
    // Node-RED's usual failed login.
    expect(refused.status()).toBe(403)
    expect(await refused.json()).toMatchObject({ error: 'invalid_grant' })
    await page.locator('#node-dialog-login-failed').waitFor({ state: 'visible' })
    expect(await page.locator('#node-dialog-login-failed').textContent()).toBe('Login failed')
    expect(await page.evaluate(() => localStorage.getItem('auth-tokens'))).toBeNull()
    await expect
      .poll(() => env.formEditor.stderr + env.formEditor.stdout)
      .toContain('"tom" must sign in with a second factor')

    // The same form signs in a person with a password alone: the refusal is tom's second factor.
    await page.locator('#node-dialog-login-submit').waitFor({ state: 'visible' })
    await expect.poll(() => page.locator('#node-dialog-login-submit').isEnabled()).toBe(true)
    const accepted = await loginWith('ned', PEOPLE.ned)
    expect(accepted.status()).toBe(200)
    await page.locator('#red-ui-header-button-deploy').waitFor({ state: 'visible', timeout: 30_000 })
    const token = await editorToken(page)
    expect(await introspect(token)).toMatchObject({ active: true, username: 'ned' })
    expect((await deploy(env.formEditor.url, token)).status).toBe(200)
    expect(env.formEditor.stderr + env.formEditor.stdout).not.toContain('"ned" must sign in')
    expect(problems).toEqual([])
    await context.close()
  })
})
