// People of the organisation's directory on flowadmin's sign-in page, in Chromium against the built
// server and a real OpenLDAP slapd (StartTLS with a test CA): a person signs in with the
// directory's password and the Sessions view says so; a person of the directory enrols a second
// factor and is asked for it at the next sign-in, as flowadmin's own users are; a wrong password
// is refused; a directory that is away is said to be away, while a configured user signs in.
import type { Page } from 'playwright-core'
import { afterAll, describe, expect, it } from 'vitest'
import {
  GROUPS,
  PEOPLE,
  PEOPLE_OF_DIRECTORY,
  SERVICE_DN,
  SERVICE_PASSWORD,
  type Slapd,
  startSlapd,
} from '../../../server/test/slapd.js'
import { totpCode } from '../../../server/test/totp-code.js'
import { axeFindings, logIn, MFA_KEY, open, sessionToken, USERS, useBrowserAndServer } from './harness.js'

const LABEL = 'Example directory'
let slapd: Slapd

const env = useBrowserAndServer(async () => {
  slapd = await startSlapd({ tls: true })
  return {
    adminAuth: {
      mfa: { key: MFA_KEY },
      ldap: {
        url: slapd.url,
        startTls: true,
        caFile: slapd.ca,
        bindDn: SERVICE_DN,
        bindPassword: SERVICE_PASSWORD,
        userSearch: { base: PEOPLE, filter: '(uid={username})' },
        permissions: {
          map: { [`cn=nr-admins,${GROUPS}`]: '*', 'nr-viewers': 'read', 'nr-deployers': ['read', 'write'] },
        },
        timeout: 1500,
        label: LABEL,
      },
    },
  }
})
afterAll(async () => {
  await slapd?.close()
})

/** The console, signed in as `username`: how the Sessions view says this tab signed in. */
async function signedInWith(page: Page, username: string): Promise<string | null> {
  await page.getByRole('heading', { name: 'Node modules' }).waitFor({ timeout: 15_000 })
  expect(await page.locator('.who .user').textContent()).toBe(username)
  expect(await sessionToken(page)).toMatch(/^[A-Za-z0-9_-]{40,}$/)
  await page.getByRole('button', { name: 'Sessions and tokens' }).click()
  const session = page.getByRole('listitem').filter({ hasText: 'this tab' })
  await session.waitFor()
  return session.locator('dt:text-is("Signed in with") + dd').textContent()
}

async function logOut(page: Page) {
  await page.getByRole('button', { name: 'Log out' }).click()
  await page.getByText('You are logged out.').waitFor()
}

describe('the sign-in page and a directory', () => {
  it('signs a person of the directory in with its password; the session says the directory', async () => {
    const { page, problems, context } = await open(env.browser, `${env.server.url}/`)
    await page.getByLabel('Username').waitFor({ timeout: 10_000 })
    expect(await axeFindings(page)).toEqual([])
    await logIn(page, 'ada', PEOPLE_OF_DIRECTORY.ada.password)
    expect(await signedInWith(page, 'ada')).toBe(`Password (${LABEL})`)
    expect(problems).toEqual([])
    await context.close()
  })

  it('asks a person of the directory for the second factor they enrolled, as it asks its own users', async () => {
    const { page, context } = await open(env.browser, `${env.server.url}/`)
    await logIn(page, 'dev', PEOPLE_OF_DIRECTORY.dev.password)
    await page.getByRole('heading', { name: 'Node modules' }).waitFor({ timeout: 15_000 })
    await page.getByRole('button', { name: 'Security' }).click()
    const card = page.getByRole('region', { name: 'Authenticator app' })
    await card.getByRole('button', { name: 'Set up' }).click()
    const secret = await card.getByLabel('Secret').inputValue()
    const enrolledAt = Date.now()
    await card.getByLabel('Code from the app').fill(totpCode(secret, enrolledAt))
    await card.getByRole('button', { name: 'Confirm' }).click()
    await card.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem').first().waitFor()
    await card.getByRole('button', { name: 'Done' }).click()
    await logOut(page)

    await logIn(page, 'dev', PEOPLE_OF_DIRECTORY.dev.password)
    await page.getByRole('heading', { name: 'Second factor' }).waitFor()
    expect(await sessionToken(page)).toBeNull()
    await page
      .getByLabel('Code from your authenticator app, or a recovery code')
      .fill(totpCode(secret, enrolledAt + 30_000))
    await page.getByRole('button', { name: 'Verify' }).click()
    expect(await signedInWith(page, 'dev')).toBe(`Password + code (${LABEL})`)
    await context.close()
  })

  it('refuses a wrong password, and says when the directory is away while a configured user signs in', async () => {
    const { page, context } = await open(env.browser, `${env.server.url}/`)
    await logIn(page, 'vic', 'not vic’s password')
    await page.getByRole('alert').filter({ hasText: 'Wrong username or password.' }).waitFor()
    await slapd.stop()
    try {
      await logIn(page, 'vic', PEOPLE_OF_DIRECTORY.vic.password)
      await page
        .getByRole('alert')
        .filter({ hasText: 'The directory does not answer right now, so its people cannot sign in' })
        .waitFor()
      expect(await sessionToken(page)).toBeNull()
      await logIn(page, 'admin', USERS.admin)
      expect(await signedInWith(page, 'admin')).toBe('Password')
      await logOut(page)
    } finally {
      await slapd.start()
    }
    await logIn(page, 'vic', PEOPLE_OF_DIRECTORY.vic.password)
    expect(await signedInWith(page, 'vic')).toBe(`Password (${LABEL})`)
    await context.close()
  })
})
