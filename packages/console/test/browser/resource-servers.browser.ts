// The resource servers and their last call, in Chromium against the built server.
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { apiToken, axeFindings, open, USERS, useBrowserAndServer, useServer } from './harness.js'
import { itReadsWell, resourceServer, showView, signedIn, signIn, type TabOptions } from './views.js'

const FLEET = resourceServer('fleet')
const SPARE = resourceServer('spare', 'digest')

const env = useBrowserAndServer(async () => ({
  adminAuth: { resourceServers: [await FLEET.setting(), await SPARE.setting()] },
}))

/** What a Node-RED instance does on each request: asks about a token, with HTTP Basic. */
const introspect = (url: string, token: string) =>
  fetch(`${url}/auth/introspect`, {
    method: 'POST',
    headers: { authorization: FLEET.basic },
    body: new URLSearchParams({ token }),
  })

/** What a Node-RED editor's login does: the password grant with the server's own credentials; a token for it alone. */
async function editorToken(url: string, username: keyof typeof USERS): Promise<string> {
  const answer = await fetch(`${url}/auth/token`, {
    method: 'POST',
    headers: { authorization: FLEET.basic },
    body: new URLSearchParams({ grant_type: 'password', scope: '', username, password: USERS[username] }),
  })
  expect(answer.status).toBe(200)
  return ((await answer.json()) as { access_token: string }).access_token
}

/** Logs in and waits for the modules, noting every call the page makes to the API. */
async function loggedIn(user: keyof typeof USERS, options: TabOptions = {}) {
  const tab = await open(env.browser, `${env.server.url}/`, options)
  const calls: string[] = []
  tab.page.on('request', (request) => calls.push(new URL(request.url()).pathname))
  await signIn(tab.page, user)
  return { ...tab, calls }
}

async function resourceServersOf(page: Page) {
  await showView(page, 'Resource servers')
  await page.getByRole('list', { name: 'Resource servers' }).waitFor()
}

const row = (page: Page, id: string) =>
  page.getByRole('list', { name: 'Resource servers' }).getByRole('listitem').filter({ hasText: id })

describe('resource servers', () => {
  it('an admin sees each one, "never" before its first call, and the time of its last call after a refresh', async () => {
    const { page, problems, context } = await loggedIn('admin')
    await resourceServersOf(page)
    const rows = page.getByRole('list', { name: 'Resource servers' }).getByRole('listitem')
    await expect(rows.count()).resolves.toBe(2)
    for (const id of [FLEET.id, SPARE.id]) {
      await expect(row(page, id).getByRole('heading', { name: id, exact: true }).count()).resolves.toBe(1)
      expect(await row(page, id).textContent()).toMatch(/Last call\s*never since start/)
    }
    // A secret kept as a password hash is marked, with what to do; a machine secret is not.
    await expect(row(page, FLEET.id).locator('.tag.warn').textContent()).resolves.toBe('password hash')
    expect(await row(page, FLEET.id).textContent()).toContain('Replace it with one from flowadmin secret.')
    await expect(row(page, SPARE.id).locator('.tag.warn').count()).resolves.toBe(0)
    expect(await row(page, SPARE.id).textContent()).toMatch(/Secret\s*a machine secret/)
    expect(await axeFindings(page)).toEqual([])

    const before = Date.now()
    const answer = await introspect(env.server.url, await editorToken(env.server.url, 'viewer'))
    const after = Date.now()
    expect(answer.status).toBe(200)
    expect(await answer.json()).toMatchObject({ active: true, username: 'viewer' })

    await page.getByRole('button', { name: 'Refresh' }).click()
    const time = row(page, FLEET.id).locator('time')
    await time.waitFor()
    const at = Date.parse((await time.getAttribute('datetime')) ?? '')
    expect(at).toBeGreaterThanOrEqual(before)
    expect(at).toBeLessThanOrEqual(after)
    // Shown as the sessions show their times: the date and the minute, in the person's locale.
    const shown = await page.evaluate(
      (ms) => new Date(ms).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }),
      at,
    )
    expect(shown).toMatch(/\d{4}.*\d{1,2}:\d{2}/)
    expect(await row(page, FLEET.id).textContent()).toContain(`Last call${shown}`)
    expect(await row(page, SPARE.id).textContent()).toMatch(/Last call\s*never since start/)
    await expect(
      page.getByRole('status').filter({ hasText: 'Resource servers refreshed.' }).count(),
    ).resolves.toBe(1)
    await expect(page.getByRole('alert').count()).resolves.toBe(0)
    expect(await axeFindings(page)).toEqual([])
    expect(problems).toEqual([])
    await context.close()
  })

  it('an admin makes an API token for a resource server: offered by name, listed with it, good there alone', async () => {
    const { page, problems, context } = await loggedIn('admin')
    await showView(page, 'Sessions and tokens', 'Sessions and API tokens')
    const offered = page.locator('#token-audiences option')
    await expect
      .poll(() =>
        offered.evaluateAll((options) => options.map((option) => (option as HTMLOptionElement).value)),
      )
      .toEqual(['flowadmin', FLEET.id, SPARE.id])
    await page.getByLabel('Name').fill('fleet probe')
    await page.getByLabel('For', { exact: true }).fill(FLEET.id)
    await page.getByRole('button', { name: 'Create' }).click()
    const shown = page.getByLabel('Token', { exact: true })
    await shown.waitFor()
    const token = await shown.inputValue()
    expect(await (await introspect(env.server.url, token)).json()).toMatchObject({
      active: true,
      aud: FLEET.id,
    })
    const settings = await fetch(`${env.server.url}/settings`, {
      headers: { authorization: `Bearer ${token}` },
    })
    expect(settings.status).toBe(401)
    await page.getByRole('button', { name: 'Done' }).click()
    const entry = page
      .getByRole('list', { name: 'Your sessions and API tokens' })
      .getByRole('listitem')
      .filter({ hasText: 'fleet probe' })
    expect(await entry.locator('dt:text-is("For") + dd').textContent()).toBe(`resource server ${FLEET.id}`)
    expect(problems).toEqual([])
    await context.close()
  })

  it('a viewer has no such section, and the page never asks for it', async () => {
    const viewer = await apiToken(env.server.url, 'viewer')
    const refused = await fetch(`${env.server.url}/auth/resource-servers`, {
      headers: { authorization: `Bearer ${viewer}` },
    })
    expect(refused.status).toBe(401)

    const { page, problems, context, calls } = await loggedIn('viewer')
    await showView(page, 'Sessions and tokens', 'Sessions and API tokens')
    await expect(page.getByRole('button', { name: 'Resource servers' }).count()).resolves.toBe(0)
    await expect(page.getByText('Resource servers').count()).resolves.toBe(0)
    await expect(page.getByRole('alert').count()).resolves.toBe(0)
    expect(calls.filter((path) => path.endsWith('/auth/resource-servers'))).toEqual([])
    expect(problems).toEqual([])
    await context.close()
  })

  it('a server whose API has no /auth/resource-servers shows no section and no error', async () => {
    const tab = await open(env.browser, 'about:blank')
    // An older server: its own OpenAPI document, without that path.
    await tab.page.route('**/openapi.json', async (route) => {
      const response = await route.fetch()
      const document = (await response.json()) as { paths: Record<string, unknown> }
      delete document.paths['/auth/resource-servers']
      await route.fulfill({ response, json: document })
    })
    const calls: string[] = []
    tab.page.on('request', (request) => calls.push(new URL(request.url()).pathname))
    await tab.page.goto(`${env.server.url}/`)
    await signIn(tab.page, 'admin')
    await tab.page.getByRole('navigation', { name: 'Sections' }).waitFor()
    await expect(tab.page.getByRole('button', { name: 'Sessions and tokens' }).count()).resolves.toBe(1)
    await expect(tab.page.getByRole('button', { name: 'Resource servers' }).count()).resolves.toBe(0)
    await expect(tab.page.getByRole('alert').count()).resolves.toBe(0)
    expect(calls.filter((path) => path.endsWith('/auth/resource-servers'))).toEqual([])
    expect(tab.problems).toEqual([])
    await tab.context.close()
  })

  itReadsWell('resource-servers', async (options) => {
    const tab = await loggedIn('admin', options)
    await resourceServersOf(tab.page)
    return tab
  })
})

describe('without adminAuth.resourceServers', () => {
  const bare = useServer()

  it('an admin is told that none is configured, and where to configure them', async () => {
    const { page, problems, context } = await signedIn(env.browser, bare.server.url, 'admin')
    await showView(page, 'Resource servers')
    await page
      .getByText('None is configured: add them to adminAuth.resourceServers in the settings.')
      .waitFor()
    await expect(page.getByRole('list', { name: 'Resource servers' }).count()).resolves.toBe(0)
    await expect(page.getByRole('alert').count()).resolves.toBe(0)
    expect(await axeFindings(page)).toEqual([])
    expect(problems).toEqual([])
    await context.close()
  })
})
