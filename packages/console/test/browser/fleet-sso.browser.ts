// `pnpm start:fleet --sso` in Chromium, as a newcomer tries it: the first editor's "Sign in with
// flowadmin" goes to flowadmin's sign-in page, whose provider button leads to the local provider's
// development login page, the second editor signs
// in with the same person without a second login, and both editors load. All on 127.0.0.1, offline.
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { freePort } from '../../../server/test/node-red-process.js'
import { type ProgramRun, runProgram, stopGroups } from '../../../server/test/program-process.js'
import { launch, open } from './harness.js'

const ROOT = new URL('../../../../', import.meta.url).pathname
/** The editors' button, to flowadmin's sign-in page; and the provider's button there. */
const LABEL = 'Sign in with flowadmin'
const PROVIDER_LABEL = 'Sign in with the demo provider'

let browser: Browser
let fleet: ProgramRun
let editors: string[]
let provider: string
/** The programs the command started, each in a process group of its own. */
let pids: number[] = []

beforeAll(async () => {
  const ports = [await freePort(), await freePort()]
  fleet = runProgram(
    'pnpm',
    ['start:fleet', '--sso', '--port', '0', '--provider-port', '0', '--editors', ports.join(',')],
    { cwd: ROOT, detached: true },
  )
  const pidsLine = await fleet.line(/^ {2}pids /)
  pids = [...pidsLine.matchAll(/ (\d+)(,|$)/g)].map((match) => Number(match[1]))
  editors = ports.map((port) => `http://127.0.0.1:${port}`)
  provider = /OpenID provider\s+(http:\/\/\S+?)\/?$/m.exec(fleet.stdout)?.[1] ?? ''
  browser = await launch()
})
afterAll(async () => {
  await browser?.close()
  if (fleet !== undefined) {
    process.kill(-(fleet.child.pid as number), 'SIGINT')
    await fleet.exited
  }
  await stopGroups()
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // Ended with the fleet, as it should.
    }
  }
})

/** Clicks the editor's button and waits for the editor to load with a token. */
async function signIn(
  page: Page,
  editor: string,
  atProvider: (page: Page) => Promise<void>,
): Promise<string> {
  await page.goto(`${editor}/`)
  const button = page.getByRole('link', { name: LABEL }).or(page.getByRole('button', { name: LABEL }))
  await button.first().waitFor({ state: 'visible', timeout: 20_000 })
  await button.first().click()
  // flowadmin's page: its users' password, or the provider.
  await page.getByRole('button', { name: PROVIDER_LABEL }).click()
  await atProvider(page)
  await page.waitForURL((url) => url.origin === editor && url.search === '', { timeout: 15_000 })
  await page.locator('#red-ui-header-button-deploy').waitFor({ state: 'visible', timeout: 30_000 })
  return page.evaluate(
    () =>
      (
        window as unknown as { RED: { settings: { get(key: string): { access_token: string } } } }
      ).RED.settings.get('auth-tokens').access_token,
  )
}

it('signs in at both editors with one login at the local provider', async () => {
  const [first, second] = editors as [string, string]
  const tab = await open(browser, 'about:blank')
  // Offline: the sign-in asks nothing of any address but this machine's. (The editor itself reads
  // Node-RED's palette catalogue from catalogue.nodered.org once loaded; offline it lists none.)
  const elsewhere: string[] = []
  tab.context.on('request', (request) => {
    const url = new URL(request.url())
    const local = url.protocol === 'about:' || url.protocol === 'data:' || url.hostname === '127.0.0.1'
    if (!local && url.hostname !== 'catalogue.nodered.org') elsewhere.push(url.href)
  })
  const token1 = await signIn(tab.page, first, async (page) => {
    await page.waitForURL((url) => url.origin === provider, { timeout: 15_000 })
    await page.locator('input[name="login"]').fill('grace')
    await page.locator('input[name="password"]').fill('any password')
    await page.locator('button[type="submit"]').click()
    await page.getByRole('button', { name: 'Continue' }).click()
  })
  // The same browser: the provider knows the person already.
  const page2 = await tab.context.newPage()
  const token2 = await signIn(page2, second, async (page) => {
    const consent = page.getByRole('button', { name: 'Continue' })
    await Promise.race([
      consent.click({ timeout: 15_000 }).catch(() => undefined),
      page.waitForURL((url) => url.origin === second, { timeout: 15_000 }),
    ])
  })
  expect(token2).not.toBe(token1)
  expect(elsewhere).toEqual([])
  for (const [editor, token] of [
    [first, token1],
    [second, token2],
  ] as const) {
    const settings = await fetch(`${editor}/settings`, { headers: { Authorization: `Bearer ${token}` } })
    expect(((await settings.json()) as { user: unknown }).user, editor).toEqual({
      username: 'grace',
      permissions: '*',
    })
  }
})
