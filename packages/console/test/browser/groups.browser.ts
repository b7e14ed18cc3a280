// The groups view in Chromium against the built server in fleet mode: each group of the settings,
// its instances and their state; an operator puts an instance in a group and takes it out, a
// reader only reads.
import { beforeAll, describe, expect, it } from 'vitest'
import { apiToken, axeFindings, screenshot, useBrowserAndServer } from './harness.js'
import { resourceServer, showView, signedIn } from './views.js'

const FLEET = resourceServer('fleet')

const env = useBrowserAndServer(async () => ({
  extra: { fleet: { modules: true, groups: { 'line-1': ['press-*'], test: [] } } },
  adminAuth: { resourceServers: [await FLEET.setting()] },
}))

/** What an instance's helper reports: Node-RED's version and no module. */
async function report(id: string) {
  const res = await fetch(`${env.server.url}/fleet/instances/${id}/report`, {
    method: 'POST',
    headers: { authorization: FLEET.basic, 'content-type': 'application/json' },
    body: JSON.stringify({
      sequence: 1,
      nodeRedVersion: '4.1.2',
      modules: [],
      typesInUse: [],
      applied: null,
      failures: [],
    }),
  })
  expect(res.status).toBe(204)
}

/** Whether the instance is in touch, as the API (and the Fleet view) says. */
async function stateOf(id: string): Promise<string> {
  const res = await fetch(`${env.server.url}/fleet/instances`, {
    headers: { authorization: `Bearer ${await apiToken(env.server.url, 'admin')}` },
  })
  const instances = (await res.json()) as Array<{ id: string; connected: boolean }>
  return instances.find((instance) => instance.id === id)?.connected ? 'connected' : 'not connected'
}

/** The groups as the API lists them now. */
async function groups() {
  const res = await fetch(`${env.server.url}/fleet/groups`, {
    headers: { authorization: `Bearer ${await apiToken(env.server.url, 'admin')}` },
  })
  expect(res.status).toBe(200)
  return (await res.json()) as Array<{
    name: string
    assigned: Array<{ instance: string; by: string | null }>
  }>
}

beforeAll(async () => {
  await report('press-1')
  await report('nr-7')
})

describe('the groups view', () => {
  it('an operator puts an instance in a group and takes it out; pattern members are the settings’', async () => {
    const { page, problems } = await signedIn(env.browser, env.server.url, 'admin')
    await showView(page, 'Groups')
    const list = page.getByRole('list', { name: 'Groups' })
    await list.waitFor()
    await expect(list.getByRole('heading').allTextContents()).resolves.toEqual(['line-1', 'test'])
    const card = (name: string) =>
      list.getByRole('listitem').filter({ has: page.getByRole('heading', { name, exact: true }) })
    // press-1 is in line-1 by the settings' pattern: shown, with its state, and nothing to take out.
    const line1 = page.getByRole('list', { name: 'Instances of line-1' })
    await expect(line1.textContent()).resolves.toBe(
      `press-1${await stateOf('press-1')}no driftBy the pattern press-*: the settings decide.`,
    )
    expect(await line1.getByRole('button').count()).toBe(0)
    await expect(card('test').textContent()).resolves.toMatch(
      /Patterns\s*none: filled by assignments.*No instance yet\./,
    )

    // A malformed id: the server's message, nothing put in.
    const form = page.getByRole('form', { name: 'Put an instance in test' })
    await form.getByLabel('Instance id').fill('not an id!')
    await form.getByRole('button', { name: 'Put in group' }).click()
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/instance: 1 to 128 letters/)

    await form.getByLabel('Instance id').fill('nr-7')
    await form.getByRole('button', { name: 'Put in group' }).click()
    await page.getByRole('status').filter({ hasText: 'nr-7 is in test now.' }).waitFor()
    const test = page.getByRole('list', { name: 'Instances of test' })
    await expect(test.textContent()).resolves.toMatch(
      new RegExp(`^nr-7${await stateOf('nr-7')}no driftPut in .* by admin\\.Take out$`),
    )
    expect(await groups()).toEqual([
      { name: 'line-1', patterns: ['press-*'], assigned: [] },
      { name: 'test', patterns: [], assigned: [{ instance: 'nr-7', by: 'admin', at: expect.any(String) }] },
    ])
    expect(await axeFindings(page)).toEqual([])
    await screenshot(page, 'groups')

    // Taking it out asks first; Cancel keeps it.
    await test.getByRole('button', { name: 'Take out nr-7 from test' }).click()
    await page.getByRole('button', { name: 'Cancel' }).click()
    expect((await groups())[1]?.assigned).toHaveLength(1)
    await test.getByRole('button', { name: 'Take out nr-7 from test' }).click()
    await page.getByRole('button', { name: 'Yes, remove' }).click()
    await page.getByRole('status').filter({ hasText: 'nr-7 was taken out of test.' }).waitFor()
    await expect(card('test').textContent()).resolves.toMatch(/No instance yet\./)
    expect((await groups())[1]?.assigned).toEqual([])
    expect(problems).toEqual([])
  })

  it('a reader sees the groups and their instances, with nothing to change', async () => {
    const admin = await apiToken(env.server.url, 'admin')
    const put = await fetch(`${env.server.url}/fleet/groups/test/instances/nr-9`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${admin}` },
    })
    expect(put.status).toBe(204)
    const { page, problems } = await signedIn(env.browser, env.server.url, 'viewer')
    await showView(page, 'Groups')
    const test = page.getByRole('list', { name: 'Instances of test' })
    // Put in before it ever reported.
    await expect(test.textContent()).resolves.toMatch(/nr-9.*not reported yet.*Put in .* by admin\./)
    await expect(page.getByRole('list', { name: 'Instances of line-1' }).textContent()).resolves.toMatch(
      /press-1/,
    )
    expect(await page.getByRole('form').count()).toBe(0)
    expect(await page.getByRole('button', { name: /^Take / }).count()).toBe(0)
    expect(await axeFindings(page)).toEqual([])
    expect(problems).toEqual([])
  })
})
