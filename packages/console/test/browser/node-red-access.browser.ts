// Stock Node-RED 4.1 editors in Chromium for alice, deployer on line-1 and viewer on line-2, behind
// the built flowadmin (the set-up the HTTP test shares, node-red-access.ts). Signed in with each
// editor's own login form: line-1's instance shows her the deploy as anyone who may deploy sees it;
// line-2's shows it locked, as Node-RED does for a user without `flows.write` (its deploy group
// marked read-only with a lock instead of the menu's caret, the button disabled and inert even once
// the flows change) and refuses a deploy all the same.
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type AccessFleet,
  type Instance,
  PASSWORD,
  startAccessFleet,
} from '../../../server/test/node-red-access.js'
import { deployFromEditor } from './editor.js'
import { launch, open } from './harness.js'

let fleet: AccessFleet
let browser: Browser

beforeAll(async () => {
  fleet = await startAccessFleet()
  browser = await launch()
})
afterAll(async () => {
  await browser?.close()
  await fleet?.stop()
})

/** Opens the instance's editor, logs in with its form as `username`, and waits for the editor. */
async function signInToEditor(instance: Instance, username: string) {
  const tab = await open(browser, `${instance.run.url}/`)
  const { page } = tab
  await page.locator('#node-dialog-login-username').waitFor({ state: 'visible', timeout: 20_000 })
  await page.locator('#node-dialog-login-username').fill(username)
  await page.locator('#node-dialog-login-password').fill(PASSWORD)
  await page.locator('#node-dialog-login-submit').click()
  await page.locator('#red-ui-header-button-deploy').waitFor({ state: 'visible', timeout: 30_000 })
  // Its flows loaded (they carry a revision): loading them marks the workspace clean, so a change
  // made before would be undone.
  await page.waitForFunction(
    () =>
      (window as unknown as { RED: { nodes: { version(): string | null } } }).RED.nodes.version() !== null,
    undefined,
    { timeout: 30_000 },
  )
  return tab
}

/** What the editor shows of its deploy: the group read-only, its lock shown, the button disabled. */
const deployShown = async (page: Page) => ({
  readOnly: await page
    .locator('.red-ui-deploy-button-group')
    .evaluate((group) => group.classList.contains('readOnly')),
  lock: await page.locator('#red-ui-header-button-deploy-options .fa-lock').isVisible(),
  disabled: await page
    .locator('#red-ui-header-button-deploy')
    .evaluate((button) => button.classList.contains('disabled')),
})

/** The flows changed in the editor, as an edit marks them: the editor then offers the deploy. */
const changeFlows = (page: Page) =>
  page.evaluate(() =>
    (window as unknown as { RED: { nodes: { dirty(dirty: boolean): void } } }).RED.nodes.dirty(true),
  )

describe("alice's editors: the deploy where she is deployer, the read-only editor where she is viewer", () => {
  it("line-1's instance offers her the deploy once the flows change, and deploys", async () => {
    const { page, context, problems } = await signInToEditor(fleet.instances['press-1'], 'alice')
    expect(await deployShown(page)).toEqual({ readOnly: false, lock: false, disabled: true })
    await changeFlows(page)
    expect(await deployShown(page)).toEqual({ readOnly: false, lock: false, disabled: false })
    expect(await deployFromEditor(page)).toBe(200)
    expect(problems).toEqual([])
    await context.close()
  })

  it("line-2's instance shows her the flows with the deploy locked, and refuses a deploy", async () => {
    const { page, context } = await signInToEditor(fleet.instances['weld-1'], 'alice')
    // Node-RED's user for the editor is what flowadmin answered weld-1: read alone.
    const user = await page.evaluate(
      () => (window as unknown as { RED: { settings: { user: unknown } } }).RED.settings.user,
    )
    expect(user).toEqual({ username: 'alice', permissions: 'read' })
    expect(await deployShown(page)).toEqual({ readOnly: true, lock: true, disabled: true })
    await changeFlows(page)
    expect(await deployShown(page)).toEqual({ readOnly: true, lock: true, disabled: true })
    // The button takes no click: the editor's read-only group lets none through.
    const inert = await page
      .locator('#red-ui-header-button-deploy')
      .evaluate((button) => getComputedStyle(button).pointerEvents)
    expect(inert).toBe('none')
    // Sent all the same, Node-RED refuses it (its answer to a live token without the permission).
    expect(await deployFromEditor(page)).toBe(401)
    await context.close()
  })
})
