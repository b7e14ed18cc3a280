// A stock Node-RED 4.1 editor in Chromium, its "Sign in with …" button through the built flowadmin
// and a real OpenID provider (oidc-provider) and back to the editor, which deploys with the token
// it got, for a person in an admin group, and is refused for a viewer. All on 127.0.0.1.
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LABEL, type NodeRedSso, startNodeRedSso } from '../../../server/test/node-red-sso.js'
import { deployFromEditor } from './editor.js'
import { launch, open } from './harness.js'

let env: NodeRedSso
let browser: Browser

beforeAll(async () => {
  env = await startNodeRedSso()
  browser = await launch()
})
afterAll(async () => {
  await browser?.close()
  await env?.stop()
})

/** Through the provider's development login and consent pages, as a person would. */
async function throughProvider(page: Page, login: string): Promise<void> {
  await page.locator('input[name="login"]').fill(login)
  await page.locator('input[name="password"]').fill('any password')
  await page.locator('button[type="submit"]').click()
  await page.getByRole('button', { name: 'Continue' }).click()
}

/** Opens the editor, signs in with the button, and waits for the editor to load. */
async function signInToEditor(login: string) {
  const tab = await open(browser, `${env.nodeRed.url}/`)
  const button = tab.page.getByRole('link', { name: LABEL }).or(tab.page.getByRole('button', { name: LABEL }))
  await button.first().waitFor({ state: 'visible', timeout: 20_000 })
  await button.first().click()
  await tab.page.waitForURL((url) => url.origin === env.provider.issuer, { timeout: 15_000 })
  await throughProvider(tab.page, login)
  await tab.page.waitForURL((url) => url.origin === env.nodeRed.url && url.search === '', { timeout: 15_000 })
  await tab.page.locator('#red-ui-header-button-deploy').waitFor({ state: 'visible', timeout: 30_000 })
  return tab
}

describe('a Node-RED editor signs in through flowadmin', () => {
  it('a person in the admin group comes back to the editor and deploys', async () => {
    const { page, context } = await signInToEditor('ada-sub')
    // The editor holds flowadmin's token, issued to the fleet.
    const token = await page.evaluate(
      () =>
        (
          window as unknown as { RED: { settings: { get(key: string): { access_token: string } } } }
        ).RED.settings.get('auth-tokens').access_token,
    )
    const answer = await fetch(`${env.flowadmin.url}/auth/introspect`, {
      method: 'POST',
      headers: { Authorization: env.basic, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token }),
    })
    expect(await answer.json()).toMatchObject({ active: true, username: 'ada', scope: '*' })
    expect(await deployFromEditor(page)).toBe(200)
    await context.close()
  })

  it('the editor’s Logout: the editor shows its sign-in again and the token is already dead at flowadmin', async () => {
    const { page, context } = await signInToEditor('ada-sub')
    const token = await page.evaluate(
      () =>
        (
          window as unknown as { RED: { settings: { get(key: string): { access_token: string } } } }
        ).RED.settings.get('auth-tokens').access_token,
    )
    expect(await page.evaluate(() => localStorage.getItem('auth-tokens'))).toContain(token)
    const revoke = page.waitForResponse((response) => new URL(response.url()).pathname === '/auth/revoke')
    await page.locator('#red-ui-header-button-user').click()
    await page.locator('#usermenu-item-logout').click()
    // Node-RED's own answer, given once flowadmin had revoked the token.
    expect((await revoke).status()).toBe(200)
    const answer = await fetch(`${env.flowadmin.url}/auth/introspect`, {
      method: 'POST',
      headers: { Authorization: env.basic, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token }),
    })
    expect(await answer.json()).toEqual({ active: false })
    // The editor forgot its token (it does so only on a 200) and shows the sign-in button.
    const button = page.getByRole('link', { name: LABEL }).or(page.getByRole('button', { name: LABEL }))
    await button.first().waitFor({ state: 'visible', timeout: 20_000 })
    expect(await page.evaluate(() => localStorage.getItem('auth-tokens'))).toBeNull()
    await context.close()
  })

  it('a viewer comes back to the editor, and their deploy is refused', async () => {
    const { page, context } = await signInToEditor('vic-sub')
    expect(await deployFromEditor(page)).toBe(401)
    await context.close()
  })
})
