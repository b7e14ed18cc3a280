// Signing in with the organisation's identity provider, in Chromium against the built server and
// a real OpenID provider (oidc-provider) on 127.0.0.1: the console's button, the provider's login
// and consent pages, back to the console's module list; the session shows where it came from.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  CLIENT_ID,
  CLIENT_SECRET,
  startProvider,
  type TestProvider,
} from '../../../server/test/oidc-provider.js'
import { axeFindings, open, screenshot, sessionToken, useBrowserAndServer } from './harness.js'

const LABEL = 'Sign in with Example ID'
let provider: TestProvider

const env = useBrowserAndServer(async () => {
  provider = await startProvider()
  return {
    users: false,
    adminAuth: {
      oidc: {
        issuer: provider.issuer,
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        label: LABEL,
        scope: 'openid profile groups',
        permissions: { claim: 'groups', map: { 'nr-admins': '*', 'nr-viewers': 'read' } },
      },
    },
  }
})

beforeAll(async () => {
  await provider.register({
    redirectUris: [`${env.server.url}/auth/strategy/callback`],
    backchannelLogoutUri: `${env.server.url}/auth/strategy/backchannel-logout`,
  })
  provider.people.set('alice-sub', { username: 'alice', groups: ['nr-admins'] })
  provider.people.set('mallory-sub', { username: 'mallory', groups: ['marketing'] })
})
afterAll(async () => {
  await provider?.close()
})

/** Through the provider's development login and consent pages, as a person would. */
async function throughProvider(page: import('playwright-core').Page, login: string): Promise<void> {
  await page.locator('input[name="login"]').fill(login)
  await page.locator('input[name="password"]').fill('any password')
  await page.locator('button[type="submit"]').click()
  await page.getByRole('button', { name: 'Continue' }).click()
}

describe('signing in with the identity provider', () => {
  it('the sign-in page’s button leads through the provider to the module list, signed in', async () => {
    const { page, problems, context } = await open(env.browser, `${env.server.url}/`)
    const button = page.getByRole('button', { name: LABEL })
    await button.waitFor({ state: 'visible', timeout: 10_000 })
    // Only the provider signs people in here: no username or password fields.
    await expect(page.getByLabel('Username').count()).resolves.toBe(0)
    expect(await axeFindings(page)).toEqual([])
    await screenshot(page, 'login-sso-1280-light')
    const consoleProblems = [...problems]

    await button.click()
    await page.waitForURL((url) => url.origin === provider.issuer)
    await throughProvider(page, 'alice-sub')
    await page.getByRole('heading', { name: 'Node modules' }).waitFor({ timeout: 15_000 })
    await expect(page.getByText('alice', { exact: true }).isVisible()).resolves.toBe(true)
    // The one-time code is gone from the address; the token is in this tab's storage only.
    expect(page.url()).toBe(`${env.server.url}/`)
    expect(await sessionToken(page)).toMatch(/^[A-Za-z0-9_-]{40,}$/)

    await page.getByRole('button', { name: 'Sessions and tokens' }).click()
    const session = page.getByRole('listitem').filter({ hasText: 'this tab' })
    await session.waitFor()
    await expect(session.getByText(LABEL).isVisible()).resolves.toBe(true)
    expect(await session.locator('dt:text-is("Signed in with") + dd').textContent()).toBe(LABEL)
    expect(consoleProblems).toEqual([])
    await context.close()
  })

  it('a person whose groups give nothing here sees why, and gets no token', async () => {
    const { page, context } = await open(env.browser, `${env.server.url}/`)
    await page.getByRole('button', { name: LABEL }).click()
    await throughProvider(page, 'mallory-sub')
    await page.getByRole('heading', { name: 'No access' }).waitFor()
    await expect(page.locator('#message').textContent()).resolves.toContain(
      'Signed in as mallory, but your groups (marketing) give no permission here.',
    )
    await page.getByRole('link', { name: 'Back to the console' }).click()
    await page.getByRole('button', { name: LABEL }).waitFor()
    expect(await sessionToken(page)).toBeNull()
    await context.close()
  })
})
