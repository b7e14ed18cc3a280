// Seeing and switching node modules, in Chromium against the built server.
import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  apiToken,
  axeFindings,
  BROKEN,
  GREETING,
  moduleState,
  open,
  screenshot,
  TEXT_TOOLS,
  USERS,
  useBrowserAndServer,
} from './harness.js'
import { itReadsWell, signedIn, type TabOptions } from './views.js'

const env = useBrowserAndServer()
let admin: string
beforeAll(async () => {
  admin = await apiToken(env.server.url, 'admin')
})

const moduleSwitch = (page: Page, name: string) => page.getByRole('switch', { name, exact: true })
const card = (page: Page, name: string) =>
  page.getByRole('listitem').filter({ has: page.getByRole('heading', { name, exact: true }) })

async function loggedIn(user: keyof typeof USERS, options: TabOptions = {}) {
  const tab = await signedIn(env.browser, env.server.url, user, options)
  await moduleSwitch(tab.page, GREETING).waitFor()
  return tab
}

describe('the modules', () => {
  it('shows every module: name, version, node sets with their types, loaded or the load error', async () => {
    const { page, problems, context } = await loggedIn('admin')
    // The modules' cards, sorted by name (the install form has a heading of its own).
    const headings = await page.locator('ul.cards').getByRole('heading', { level: 3 }).allTextContents()
    expect(headings).toEqual([TEXT_TOOLS, BROKEN, GREETING])

    const tools = card(page, TEXT_TOOLS)
    await expect(tools.getByText('v0.3.0').isVisible()).resolves.toBe(true)
    const sets = await tools
      .getByRole('list', { name: `Node sets of ${TEXT_TOOLS}` })
      .getByRole('listitem')
      .count()
    expect(sets).toBeGreaterThan(0)
    for (const type of ['upper', 'lower']) {
      await expect(
        tools.getByRole('list', { name: 'Types' }).getByText(type, { exact: true }).isVisible(),
      ).resolves.toBe(true)
    }
    await expect(tools.getByText('loaded', { exact: true }).first().isVisible()).resolves.toBe(true)
    await expect(
      card(page, BROKEN)
        .getByText(/^error: /)
        .textContent(),
    ).resolves.toMatch(/SyntaxError/)
    await expect(card(page, BROKEN).getByText('faulty-in', { exact: true }).isVisible()).resolves.toBe(true)

    // One switch per module, named exactly by it, and one per node set.
    for (const name of [TEXT_TOOLS, BROKEN, GREETING]) {
      await expect(moduleSwitch(page, name).getAttribute('aria-checked')).resolves.toBe('true')
    }
    await expect(page.getByRole('switch', { name: `${BROKEN}/faulty`, exact: true }).count()).resolves.toBe(1)
    expect(await axeFindings(page)).toEqual([])
    expect(problems).toEqual([])
    await context.close()
  })

  it('switching a module off and on follows the server, which keeps the change', async () => {
    const { page, problems, context } = await loggedIn('admin')
    const toggle = moduleSwitch(page, TEXT_TOOLS)
    await toggle.click()
    await expect.poll(() => toggle.getAttribute('aria-checked')).toBe('false')
    let state = await moduleState(env.server.url, admin, TEXT_TOOLS)
    expect(state.nodes.every((set) => !set.enabled)).toBe(true)
    for (const set of state.nodes) {
      await expect(
        page.getByRole('switch', { name: set.id, exact: true }).getAttribute('aria-checked'),
      ).resolves.toBe('false')
    }
    await expect(
      page
        .getByRole('status')
        .filter({ hasText: `${TEXT_TOOLS} switched off.` })
        .count(),
    ).resolves.toBe(1)

    // After a reload the page shows what the server stored.
    await page.reload()
    await expect(moduleSwitch(page, TEXT_TOOLS).getAttribute('aria-checked')).resolves.toBe('false')
    await moduleSwitch(page, TEXT_TOOLS).click()
    await expect.poll(() => moduleSwitch(page, TEXT_TOOLS).getAttribute('aria-checked')).toBe('true')
    state = await moduleState(env.server.url, admin, TEXT_TOOLS)
    expect(state.nodes.every((set) => set.enabled)).toBe(true)
    expect(problems).toEqual([])
    await context.close()
  })

  it('one node set switches on its own', async () => {
    const { page, context } = await loggedIn('admin')
    const first = (await moduleState(env.server.url, admin, TEXT_TOOLS)).nodes[0] as { id: string }
    const setSwitch = page.getByRole('switch', { name: first.id, exact: true })
    await setSwitch.click()
    await expect.poll(() => setSwitch.getAttribute('aria-checked')).toBe('false')
    // The module is no longer wholly on.
    await expect(moduleSwitch(page, TEXT_TOOLS).getAttribute('aria-checked')).resolves.toBe('false')
    let state = await moduleState(env.server.url, admin, TEXT_TOOLS)
    expect(state.nodes.find((set) => set.id === first.id)?.enabled).toBe(false)
    await setSwitch.click()
    await expect.poll(() => setSwitch.getAttribute('aria-checked')).toBe('true')
    state = await moduleState(env.server.url, admin, TEXT_TOOLS)
    expect(state.nodes.every((set) => set.enabled)).toBe(true)
    await context.close()
  })

  it('a module switched off and on keeps its node sets in the order the API lists them', async () => {
    const { page, problems, context } = await loggedIn('admin')
    const listed = (await (
      await fetch(`${env.server.url}/nodes`, { headers: { authorization: `Bearer ${admin}` } })
    ).json()) as Array<{ id: string; module: string }>
    const expected = listed.filter((set) => set.module === TEXT_TOOLS).map((set) => set.id)
    expect(expected.length).toBeGreaterThan(1)
    const shown = () =>
      page
        .getByRole('list', { name: `Node sets of ${TEXT_TOOLS}` })
        .getByRole('switch')
        .evaluateAll((switches) => switches.map((element) => element.getAttribute('aria-label')))
    expect(await shown()).toEqual(expected)

    const toggle = moduleSwitch(page, TEXT_TOOLS)
    await toggle.click()
    await expect.poll(() => toggle.getAttribute('aria-checked')).toBe('false')
    expect(await shown()).toEqual(expected)
    await toggle.click()
    await expect.poll(() => toggle.getAttribute('aria-checked')).toBe('true')
    expect(await shown()).toEqual(expected)
    await page.reload()
    await moduleSwitch(page, TEXT_TOOLS).waitFor()
    expect(await shown()).toEqual(expected)
    expect(problems).toEqual([])
    await context.close()
  })

  it('a module whose types the flows use stays on, and an alert names the types', async () => {
    const { page, problems, context } = await loggedIn('admin')
    await moduleSwitch(page, GREETING).click()
    const alert = page.getByRole('alert')
    await alert.waitFor()
    await expect(alert.textContent()).resolves.toBe(
      `${GREETING} stays on: the deployed flows use its type greeting. Remove those nodes from the flows first.`,
    )
    await expect(moduleSwitch(page, GREETING).getAttribute('aria-checked')).resolves.toBe('true')
    const state = await moduleState(env.server.url, admin, GREETING)
    expect(state.nodes.every((set) => set.enabled)).toBe(true)
    expect(await axeFindings(page)).toEqual([])
    await screenshot(page, 'type-in-use-1440-light')
    expect(problems).toEqual([])
    await context.close()
  })

  it('a read-only user sees the switches disabled', async () => {
    const { page, context } = await loggedIn('viewer')
    const switches = page.getByRole('switch')
    const count = await switches.count()
    expect(count).toBeGreaterThan(3)
    for (let index = 0; index < count; index++) {
      await expect(switches.nth(index).isDisabled()).resolves.toBe(true)
    }
    await expect(page.getByText(/read-only access/).isVisible()).resolves.toBe(true)
    expect(await axeFindings(page)).toEqual([])
    await context.close()
  })
})

describe('keyboard only', () => {
  it('logs in, switches a module off and on, and logs out without a mouse', async () => {
    const { page, context } = await open(env.browser, `${env.server.url}/`)
    // The first field has focus when the page opens: typing starts once it has (as a person
    // starts once they see the cursor there), never before.
    await page.getByLabel('Username').waitFor()
    await page.waitForFunction(
      () =>
        (document.activeElement as HTMLInputElement | null)?.labels?.[0]?.textContent?.trim() === 'Username',
      undefined,
      { timeout: 10_000 },
    )
    await page.keyboard.type('admin')
    await page.keyboard.press('Tab')
    await page.keyboard.type(USERS.admin)
    await page.keyboard.press('Enter')
    await moduleSwitch(page, TEXT_TOOLS).waitFor()

    // Tab until the module's switch has focus, then Space.
    const focusedName = () =>
      page.evaluate(() => {
        const element = document.activeElement
        const by = element?.getAttribute('aria-labelledby')
        return by
          ? (document.getElementById(by)?.textContent ?? '')
          : (element?.getAttribute('aria-label') ?? element?.textContent ?? '')
      })
    for (let presses = 0; presses < 30 && (await focusedName()) !== TEXT_TOOLS; presses++) {
      await page.keyboard.press('Tab')
    }
    expect(await focusedName()).toBe(TEXT_TOOLS)
    await page.keyboard.press('Space')
    await expect.poll(() => moduleSwitch(page, TEXT_TOOLS).getAttribute('aria-checked')).toBe('false')
    await page.keyboard.press('Enter')
    await expect.poll(() => moduleSwitch(page, TEXT_TOOLS).getAttribute('aria-checked')).toBe('true')
    expect((await moduleState(env.server.url, admin, TEXT_TOOLS)).nodes.every((set) => set.enabled)).toBe(
      true,
    )

    // Back up to Log out.
    for (let presses = 0; presses < 30 && (await focusedName()) !== 'Log out'; presses++) {
      await page.keyboard.press('Shift+Tab')
    }
    expect(await focusedName()).toBe('Log out')
    await page.keyboard.press('Enter')
    await page.getByRole('form', { name: 'Log in' }).waitFor()
    await context.close()
  })
})

/**
 * Each module name as laid out, one string a line, and whether any of its characters reaches past
 * the window's right edge: read from the characters' boxes, so it is what a person sees.
 */
function nameLines(page: Page) {
  return page.locator('ul.cards h3').evaluateAll((headings) =>
    headings.map((heading) => {
      const lines: string[] = []
      let top: number | null = null
      let beyond = false
      const walker = document.createTreeWalker(heading, NodeFilter.SHOW_TEXT)
      const range = document.createRange()
      for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
        const text = node.textContent ?? ''
        for (let index = 0; index < text.length; index++) {
          range.setStart(node, index)
          range.setEnd(node, index + 1)
          const box = range.getBoundingClientRect()
          if (box.right > window.innerWidth) beyond = true
          // A character lower than the previous one by more than half a line starts a new line.
          const character = text.charAt(index)
          if (top === null || box.top > top + box.height / 2) {
            lines.push(character)
            top = box.top
          } else {
            lines.push(`${lines.pop() ?? ''}${character}`)
          }
        }
      }
      return { name: heading.textContent ?? '', lines, beyond }
    }),
  )
}

/** A line of a name may end only after `/`, `-`, `.` or a space: anywhere else cuts a word. */
const cutsWord = (line: string) => !/[/.\s-]$/.test(line)

describe('screens', () => {
  it('at 390 px, module names wrap between words and nothing is wider than the screen', async () => {
    const { page, problems, context } = await loggedIn('admin', { width: 390, height: 844 })
    await screenshot(page, 'modules-390-light')
    const names = await nameLines(page)
    expect(names.map((name) => name.name)).toEqual([TEXT_TOOLS, BROKEN, GREETING])
    for (const { name, lines, beyond } of names) {
      const laidOut = `${name} laid out as ${JSON.stringify(lines)}`
      expect(lines.join('')).toBe(name)
      expect(lines.slice(0, -1).filter(cutsWord), laidOut).toEqual([])
      expect(beyond, laidOut).toBe(false)
    }
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
    expect(problems).toEqual([])
    await context.close()
  })

  // The sign-in page first, as it comes before the modules.
  itReadsWell('modules', async (options) => {
    const login = await open(env.browser, `${env.server.url}/`, { ...options, height: 800 })
    await login.page.getByLabel('Username').waitFor()
    await screenshot(login.page, `login-${options.width}-${options.colorScheme}`)
    expect(await axeFindings(login.page)).toEqual([])
    await login.context.close()
    return loggedIn('admin', options)
  })
})
