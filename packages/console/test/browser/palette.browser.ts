// Installing and removing node modules, in Chromium against the built server and a registry the
// test serves itself.
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type LocalRegistry, startLocalRegistry } from '../../../server/test/local-registry.js'
import { apiToken, axeFindings, GREETING, screenshot, type USERS, useBrowserAndServer } from './harness.js'
import { signedIn } from './views.js'

const SHOUT = { name: 'node-red-contrib-shout', version: '1.4.0', sets: { shout: ['shout'] } }
const SLOW = { name: 'node-red-contrib-slow', version: '1.0.0', sets: { slow: ['slow'] } }
const DENIED = { name: 'node-red-contrib-denied', version: '1.0.0', sets: { denied: ['denied'] } }

let registry: LocalRegistry
let admin: string
const env = useBrowserAndServer(async () => {
  registry = await startLocalRegistry()
  for (const fixture of [SHOUT, SLOW, DENIED]) await registry.publish(fixture)
  registry.hang(SLOW.name)
  return {
    extra: { externalModules: { palette: { registry: registry.url, timeout: 4, denyList: [DENIED.name] } } },
  }
})
beforeAll(async () => {
  admin = await apiToken(env.server.url, 'admin')
})
afterAll(() => registry?.close())

const moduleSwitch = (page: Page, name: string) => page.getByRole('switch', { name, exact: true })
const status = (url: string, name: string) =>
  fetch(`${url}/nodes/${name}`, { headers: { authorization: `Bearer ${admin}` } }).then(
    (response) => response.status,
  )

async function loggedIn(user: keyof typeof USERS) {
  const tab = await signedIn(env.browser, env.server.url, user)
  await moduleSwitch(tab.page, GREETING).waitFor()
  return tab
}

async function install(page: Page, name: string, version = '') {
  await page.getByLabel('Package name').fill(name)
  await page.getByLabel('Version (optional)').fill(version)
  await page.getByLabel('Package name').press('Enter')
}

describe('installing and removing modules', () => {
  it('installs a module from the registry; it appears with its node sets, switched on', async () => {
    const { page, problems, context } = await loggedIn('admin')
    await install(page, SHOUT.name, '^1.0.0')
    await moduleSwitch(page, SHOUT.name).waitFor({ timeout: 60_000 })
    await expect(moduleSwitch(page, SHOUT.name).getAttribute('aria-checked')).resolves.toBe('true')
    await expect(
      page
        .getByRole('status')
        .filter({ hasText: `${SHOUT.name} 1.4.0 installed.` })
        .count(),
    ).resolves.toBe(1)
    await expect(
      page.getByRole('switch', { name: `${SHOUT.name}/shout`, exact: true }).count(),
    ).resolves.toBe(1)
    expect(await status(env.server.url, SHOUT.name)).toBe(200)
    expect(await axeFindings(page)).toEqual([])
    expect(problems).toEqual([])
    await context.close()
  })

  it('shows the install in progress, then the time-out as an alert', async () => {
    const { page, context } = await loggedIn('admin')
    await install(page, SLOW.name)
    const progress = page.getByRole('progressbar', { name: `Installing ${SLOW.name}` })
    await progress.waitFor()
    await expect(page.getByRole('button', { name: 'Install' }).isDisabled()).resolves.toBe(true)
    await screenshot(page, 'installing-1440-light')
    expect(await axeFindings(page)).toEqual([])
    const alert = page.getByRole('alert')
    await alert.waitFor({ timeout: 30_000 })
    await expect(progress.count()).resolves.toBe(0)
    expect(await alert.textContent()).toMatch(/./)
    expect(await status(env.server.url, SLOW.name)).toBe(404)
    await context.close()
  })

  it('a module the policy denies is refused with an alert, and nothing is installed', async () => {
    const { page, context } = await loggedIn('admin')
    await install(page, DENIED.name)
    const alert = page.getByRole('alert')
    await alert.waitFor()
    expect(await alert.textContent()).toMatch(new RegExp(DENIED.name.replace(/[-/]/g, '.')))
    expect(await status(env.server.url, DENIED.name)).toBe(404)
    await context.close()
  })

  it('removes a module after a confirmation; one the flows use stays, with an alert naming its types', async () => {
    const { page, problems, context } = await loggedIn('admin')
    await moduleSwitch(page, SHOUT.name).waitFor()
    await page.getByRole('button', { name: `Remove ${GREETING}` }).click()
    await page.getByRole('button', { name: 'Yes, remove' }).click()
    const alert = page.getByRole('alert')
    await alert.waitFor()
    expect(await alert.textContent()).toContain('greeting')
    expect(await status(env.server.url, GREETING)).toBe(200)

    await page.getByRole('button', { name: `Remove ${SHOUT.name}` }).click()
    await page.getByRole('button', { name: 'Cancel' }).click()
    await expect(moduleSwitch(page, SHOUT.name).count()).resolves.toBe(1)
    await page.getByRole('button', { name: `Remove ${SHOUT.name}` }).click()
    await page.getByRole('button', { name: 'Yes, remove' }).click()
    await expect.poll(() => moduleSwitch(page, SHOUT.name).count(), { timeout: 60_000 }).toBe(0)
    await expect(
      page
        .getByRole('status')
        .filter({ hasText: `${SHOUT.name} removed.` })
        .count(),
    ).resolves.toBe(1)
    expect(await status(env.server.url, SHOUT.name)).toBe(404)
    expect(problems).toEqual([])
    await context.close()
  })

  it('a read-only user gets neither the install form nor remove buttons', async () => {
    const { page, context } = await loggedIn('viewer')
    await expect(page.getByLabel('Package name').count()).resolves.toBe(0)
    await expect(page.getByRole('button', { name: /^Remove / }).count()).resolves.toBe(0)
    await context.close()
  })
})
