// The console as a person reaches its views (signed in, a tab chosen), the resource servers its
// tests configure, and the check every view passes at two widths in both schemes.
import { createHash } from 'node:crypto'
import type { Browser, Page } from 'playwright-core'
import { expect, it } from 'vitest'
import { axeFindings, hash, logIn, open, screenshot, type Tab, USERS } from './harness.js'

export type TabOptions = NonNullable<Parameters<typeof open>[2]>

/** A user of the test servers by name, or anyone by username and password. */
export type Person = keyof typeof USERS | { username: string; password: string }

/** Signs `person` in on the sign-in page with the keyboard and waits for the first view (the node modules). */
export async function signIn(page: Page, person: Person): Promise<void> {
  const { username, password } =
    typeof person === 'string' ? { username: person, password: USERS[person] } : person
  await logIn(page, username, password)
  await page.getByRole('heading', { name: 'Node modules', level: 2 }).waitFor()
}

/** Opens the console at `url` and signs `person` in (see signIn). */
export async function signedIn(browser: Browser, url: string, person: Person, options: TabOptions = {}) {
  const tab = await open(browser, `${url}/`, options)
  await signIn(tab.page, person)
  return tab
}

/** Chooses a view by its tab and waits for its heading, `heading` where it is not the tab's name. */
export async function showView(page: Page, name: string, heading = name): Promise<void> {
  await page.getByRole('button', { name, exact: true }).click()
  await page.getByRole('heading', { name: heading, level: 2 }).waitFor()
}

/**
 * A resource server (a Node-RED instance) with its secret: its entry in
 * `adminAuth.resourceServers` and the HTTP Basic header it calls flowadmin with.
 */
export function resourceServer(id: string, kept: 'password_hash' | 'digest' = 'password_hash') {
  const secret = `${id}-secret`
  return {
    id,
    basic: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`,
    setting: async () => ({
      id,
      secret:
        kept === 'digest'
          ? `sha256:${createHash('sha256').update(secret).digest('hex')}`
          : await hash(secret),
      fleet: true,
    }),
  }
}

/**
 * Tests that the view `show` opens reads well at 360 and 1440 px, light and dark: nothing wider
 * than the screen, no serious axe finding, no page error; saves `<name>-<width>-<scheme>.png`.
 */
export function itReadsWell(name: string, show: (options: TabOptions) => Promise<Tab>): void {
  for (const colorScheme of ['light', 'dark'] as const) {
    for (const width of [360, 1440]) {
      it(`reads well at ${width} px, ${colorScheme}`, async () => {
        const { page, context, problems } = await show({ width, height: 900, colorScheme })
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)
        expect(overflow).toBeLessThanOrEqual(0)
        await screenshot(page, `${name}-${width}-${colorScheme}`)
        expect(await axeFindings(page)).toEqual([])
        expect(problems).toEqual([])
        await context.close()
      })
    }
  }
}
