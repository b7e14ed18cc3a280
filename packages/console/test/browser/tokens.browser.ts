// Sessions and API tokens, in Chromium against the built server.
import * as path from 'node:path'
import type { SignInMethod, TokenRecord } from '@flowadmin/core'
import type { Locator, Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
// The server's own database, opened beside it as the command line does.
import { createSqliteStores } from '../../../adapter-sqlite/src/index.js'
import {
  apiToken,
  axeFindings,
  screenshot,
  sessionToken,
  type USERS,
  useBrowserAndServer,
} from './harness.js'
import { itReadsWell, showView, signedIn, type TabOptions } from './views.js'

const env = useBrowserAndServer()

const settingsWith = (url: string, token: string) =>
  fetch(`${url}/settings`, { headers: { authorization: `Bearer ${token}` } })

async function sessionsOf(user: keyof typeof USERS, options: TabOptions = {}) {
  const tab = await signedIn(env.browser, env.server.url, user, options)
  await showView(tab.page, 'Sessions and tokens', 'Sessions and API tokens')
  await tab.page.getByRole('list', { name: 'Your sessions and API tokens' }).waitFor()
  return tab
}

const entries = (page: Page) =>
  page.getByRole('list', { name: 'Your sessions and API tokens' }).getByRole('listitem')

describe('sessions and API tokens', () => {
  it('lists the own sessions, this tab marked, and ends another one', async () => {
    const otherToken = await apiToken(env.server.url, 'viewer')
    const { page, problems, context } = await sessionsOf('viewer')
    const mine = (await sessionToken(page)) as string
    // This tab's session and the API login above: the viewer has no other token yet.
    await expect(entries(page).count()).resolves.toBe(2)
    await expect(entries(page).filter({ hasText: 'this tab' }).count()).resolves.toBe(1)
    // Each tells where it came from: this browser, and the script (Node's fetch) that logged in.
    const agent = (entry: Locator) => entry.locator('dt:text-is("Browser or tool") + dd').textContent()
    expect(await agent(entries(page).filter({ hasText: 'this tab' }))).toMatch(/^Chrome \d+ on Linux$/)
    expect(await agent(entries(page).filter({ hasNotText: 'this tab' }))).toBe('node')
    // And how each signed in: this tab with the console's form, the script with the password grant.
    const method = (entry: Locator) => entry.locator('dt:text-is("Signed in with") + dd').textContent()
    expect(await method(entries(page).filter({ hasText: 'this tab' }))).toBe('Password')
    expect(await method(entries(page).filter({ hasNotText: 'this tab' }))).toBe('Password')
    expect(await axeFindings(page)).toEqual([])

    const other = entries(page).filter({ hasNotText: 'this tab' })
    await other.getByRole('button', { name: /^End Session / }).click()
    await expect.poll(() => entries(page).count()).toBe(1)
    await expect(
      page
        .getByRole('status')
        .filter({ hasText: /^Session .+ ended\.$/ })
        .count(),
    ).resolves.toBe(1)
    expect((await settingsWith(env.server.url, otherToken)).status).toBe(401)
    expect((await settingsWith(env.server.url, mine)).status).toBe(200)
    expect(problems).toEqual([])
    await context.close()
  })

  it('creates an API token, shows it once with a copy button, and revokes it', async () => {
    const { page, context, problems } = await sessionsOf('admin')
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], {
      origin: new URL(env.server.url).origin,
    })
    await page.getByLabel('Name').fill('ci-deploy')
    await page.getByLabel('Scope').selectOption({ label: 'Read only' })
    await page.getByLabel('Expires after').selectOption({ label: '30 days' })
    await page.getByRole('button', { name: 'Create' }).click()
    const shown = page.getByLabel('Token', { exact: true })
    await shown.waitFor()
    const token = await shown.inputValue()
    expect(token).toMatch(/^fa_[A-Za-z0-9_-]{20,}$/)
    await page.getByRole('button', { name: 'Copy' }).click()
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(token)
    await screenshot(page, 'token-created-1440-light')
    expect(await axeFindings(page)).toEqual([])

    // The token works, with the scope picked.
    const settings = await settingsWith(env.server.url, token)
    expect(settings.status).toBe(200)
    expect(((await settings.json()) as { user: { permissions: string[] } }).user.permissions).toEqual([
      'read',
    ])

    // Shown once: after Done it is gone from the page, and the list shows it by name only.
    await page.getByRole('button', { name: 'Done' }).click()
    await expect(page.getByLabel('Token', { exact: true }).count()).resolves.toBe(0)
    expect(await page.content()).not.toContain(token)
    const row = entries(page).filter({ hasText: 'ci-deploy' })
    await expect(row.getByText('API token').isVisible()).resolves.toBe(true)
    expect(await row.locator('dt:text-is("For") + dd').textContent()).toBe('flowadmin (this API)')
    // An API token was not signed in with: it says nothing of how.
    await expect(row.locator('dt:text-is("Signed in with")').count()).resolves.toBe(0)
    await row.getByRole('button', { name: 'Revoke ci-deploy' }).click()
    await expect.poll(() => entries(page).filter({ hasText: 'ci-deploy' }).count()).toBe(0)
    expect((await settingsWith(env.server.url, token)).status).toBe(401)
    expect(problems).toEqual([])
    await context.close()
  })

  it('refuses a token for an audience that is neither flowadmin nor a resource server, saying so', async () => {
    const { page, context, problems } = await sessionsOf('viewer')
    const before = await entries(page).count()
    expect(await page.getByLabel('For', { exact: true }).inputValue()).toBe('flowadmin')
    await page.getByLabel('Name').fill('elsewhere')
    await page.getByLabel('For', { exact: true }).fill('nowhere')
    await page.getByRole('button', { name: 'Create' }).click()
    await page
      .getByRole('alert')
      .filter({ hasText: 'Unknown audience: nowhere (flowadmin, or the id of a configured resource server)' })
      .waitFor()
    await expect(page.getByLabel('Token', { exact: true }).count()).resolves.toBe(0)
    await expect(entries(page).count()).resolves.toBe(before)
    expect(problems).toEqual([])
    await context.close()
  })

  it("ending this tab's own session goes back to the login form", async () => {
    const { page, context } = await sessionsOf('viewer')
    const mine = (await sessionToken(page)) as string
    await entries(page)
      .filter({ hasText: 'this tab' })
      .getByRole('button', { name: /^End Session / })
      .click()
    await page.getByRole('form', { name: 'Log in' }).waitFor()
    await expect(page.getByRole('status').first().textContent()).resolves.toBe('You ended this session.')
    expect(await sessionToken(page)).toBeNull()
    expect((await settingsWith(env.server.url, mine)).status).toBe(401)
    await context.close()
  })

  it('"Sign out everywhere" ends every session and token of the user and goes back to the login form', async () => {
    const other = await apiToken(env.server.url, 'admin')
    const { page, context } = await sessionsOf('admin')
    const mine = (await sessionToken(page)) as string
    await page.getByRole('button', { name: 'Sign out everywhere' }).click()
    await page.getByRole('form', { name: 'Log in' }).waitFor()
    await expect(page.getByRole('status').first().textContent()).resolves.toBe(
      'Signed out everywhere: every session and API token of yours has ended.',
    )
    expect((await settingsWith(env.server.url, mine)).status).toBe(401)
    expect((await settingsWith(env.server.url, other)).status).toBe(401)
    // Other users keep theirs.
    expect((await settingsWith(env.server.url, await apiToken(env.server.url, 'viewer'))).status).toBe(200)
    await context.close()
  })

  it('says how each session was signed in, in words', async () => {
    const { page, context, problems } = await sessionsOf('viewer')
    // Sessions of the viewer as other ways of signing in leave them, beside this tab's.
    const stores = createSqliteStores(path.join(env.server.userDir, 'flowadmin.db'))
    const mine = (await stores.tokens.list('viewer')).at(-1) as TokenRecord
    const words: Array<[SignInMethod | null, string | null]> = [
      ['password_totp', 'Password + code'],
      ['password_recovery_code', 'Password + recovery code'],
      ['passkey', 'Passkey'],
      [null, null],
    ]
    const seeded = words.map(([signIn], i) => ({
      ...mine,
      hash: `seeded-${i}`.padEnd(64, '0'),
      id: `seeded-${i}`,
      signIn,
    }))
    for (const record of seeded) await stores.tokens.save(record)
    // This tab's session lives on in its storage: the page comes back signed in.
    await page.reload()
    await page.getByRole('button', { name: 'Sessions and tokens' }).click()
    const method = (id: string) =>
      entries(page).filter({ has: page.getByRole('heading', { name: `Session ${id}`, exact: true }) })
    await method('seeded-0').waitFor()
    for (const [i, [, said]] of words.entries()) {
      const fact = method(`seeded-${i}`).locator('dt:text-is("Signed in with") + dd')
      if (said === null) await expect(fact.count()).resolves.toBe(0)
      else expect(await fact.textContent()).toBe(said)
    }
    expect(await axeFindings(page)).toEqual([])
    for (const record of seeded) await stores.tokens.delete(record.id)
    await stores.close()
    expect(problems).toEqual([])
    await context.close()
  })

  itReadsWell('sessions', (options) => sessionsOf('viewer', options))
})
