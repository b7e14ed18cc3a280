// The activity view: the trail of this server and its instances, filtered and exported, in
// Chromium against the built server.
import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { axeFindings, useBrowserAndServer } from './harness.js'
import { resourceServer, showView, signedIn } from './views.js'

const FLEET = resourceServer('fleet')

const env = useBrowserAndServer(async () => ({
  adminAuth: { resourceServers: [await FLEET.setting()] },
}))

/** What the helper in a Node-RED instance sends: a report of its audit events. */
const report = (url: string, events: unknown[]) =>
  fetch(`${url}/audit/events`, {
    method: 'POST',
    headers: { authorization: FLEET.basic, 'content-type': 'application/json' },
    body: JSON.stringify({ events }),
  })

const now = Date.now()
const EVENTS = [
  {
    time: now - 3000,
    instance: 'line-1',
    actor: 'alice',
    event: 'flows.set',
    address: '10.0.0.7',
    details: { type: 'full' },
  },
  {
    time: now - 2000,
    instance: 'line-2',
    actor: 'bob',
    event: 'nodes.install',
    address: null,
    details: { module: 'x' },
  },
  {
    time: now - 1000,
    instance: 'line-1',
    actor: 'mallory',
    event: 'auth.login.fail.credentials',
    address: '10.0.0.9',
    details: {},
  },
]

describe('activity', () => {
  it('shows the trail newest first, filters it, and exports it as CSV', async () => {
    expect((await report(env.server.url, EVENTS)).status).toBe(200)
    const { page, problems, context } = await signedIn(env.browser, env.server.url, 'admin')
    await showView(page, 'Activity')
    const table = page.getByRole('table', { name: 'Activity' })
    await table.waitFor()
    const rows = table.getByRole('row')
    // The header, the three reported events, and this server's own: the admin's login.
    await expect(rows.filter({ hasText: 'mallory' }).count()).resolves.toBe(1)
    const texts = await rows.allTextContents()
    expect(texts.findIndex((text) => text.includes('mallory'))).toBeLessThan(
      texts.findIndex((text) => text.includes('alice')),
    )
    expect(texts.some((text) => text.includes('flowadmin') && text.includes('login.succeeded'))).toBe(true)
    expect(await rows.filter({ hasText: 'alice' }).textContent()).toContain('10.0.0.7reported')
    expect(await axeFindings(page)).toEqual([])

    await page.getByLabel('Person').fill('alice')
    await page.getByRole('button', { name: 'Show' }).click()
    await page.waitForFunction(() => !document.body.textContent?.includes('mallory'))
    expect((await rows.allTextContents()).slice(1).map((text) => text.includes('alice'))).toEqual([true])

    await page.getByLabel('Person').fill('')
    await page.getByLabel('Outcome').selectOption('failure')
    await page.getByRole('button', { name: 'Show' }).click()
    // The failures' page is there once alice's success is gone and a failure is listed (the table
    // may be empty between the two answers).
    await page.waitForFunction(
      () =>
        !document.body.textContent?.includes('alice') &&
        document.body.textContent?.includes('auth.login.fail.credentials'),
    )
    const failures = (await rows.allTextContents()).slice(1)
    expect(failures.some((text) => text.includes('auth.login.fail.credentials'))).toBe(true)
    expect(failures.every((text) => text.includes('failure'))).toBe(true)

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export CSV' }).click(),
    ])
    expect(download.suggestedFilename()).toBe('flowadmin-audit.csv')
    const csv = await readFile((await download.path()) as string, 'utf8')
    const lines = csv.trimEnd().split('\r\n')
    // The columns docs/audit.md names, the time flowadmin received each event and its check last.
    expect(lines[0]).toBe(
      'time,instance,actor,event,outcome,address,address_reported,details,received,time_suspect',
    )
    expect(lines.slice(1).every((line) => line.includes(',failure,'))).toBe(true)
    expect(lines.some((line) => line.includes('fleet/line-1,mallory,auth.login.fail.credentials'))).toBe(true)
    expect(problems).toEqual([])
    await context.close()
  })
})
