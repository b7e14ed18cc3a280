// The fleet view in Chromium against the built server in fleet mode: instances that report (over
// HTTP, as the Node-RED helper does), their state and drift, as a person sees them.
import { beforeAll, describe, expect, it } from 'vitest'
import { apiToken, axeFindings, screenshot, useBrowserAndServer } from './harness.js'
import { resourceServer, showView, signedIn } from './views.js'

const FLEET = resourceServer('fleet')

const env = useBrowserAndServer(async () => ({
  extra: { fleet: { modules: true } },
  adminAuth: { resourceServers: [await FLEET.setting()] },
}))

/** What an instance's helper sends: one module of one set, enabled as given. */
const report = (enabled: boolean, extra: object[] = [], sequence = 1) => ({
  sequence,
  nodeRedVersion: '4.1.2',
  modules: [
    {
      name: 'node-red-contrib-shout',
      version: '1.2.0',
      sets: [{ name: 'shout', types: ['shout'], enabled, loaded: true }],
    },
    ...extra,
  ],
  typesInUse: [],
  applied: null,
  failures: enabled
    ? []
    : [{ module: 'node-red-contrib-shout', action: 'enable', message: 'Node-RED said no' }],
})

async function send(id: string, body: object) {
  const res = await fetch(`${env.server.url}/fleet/instances/${id}/report`, {
    method: 'POST',
    headers: { authorization: FLEET.basic, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  expect(res.status).toBe(204)
}

beforeAll(async () => {
  await send('edge-1', report(true))
  await send(
    'edge-2',
    report(true, [
      { name: 'by-hand', version: '1.0.0', sets: [{ name: 'h', types: ['h'], enabled: true, loaded: true }] },
    ]),
  )
  // An operator decides the module enabled; edge-3 cannot enable it.
  const decided = await fetch(`${env.server.url}/nodes/node-red-contrib-shout`, {
    method: 'PUT',
    headers: {
      authorization: `Bearer ${await apiToken(env.server.url, 'admin')}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ enabled: true }),
  })
  expect(decided.status).toBe(200)
  await send('edge-3', report(false))
})

describe('the fleet view', () => {
  it('shows each instance, in touch or not, its Node-RED version and its drift with the reason', async () => {
    const { page, problems } = await signedIn(env.browser, env.server.url, 'viewer')
    await showView(page, 'Fleet')
    const list = page.getByRole('list', { name: 'Instances' })
    await list.waitFor()
    await expect(list.getByRole('heading').allTextContents()).resolves.toEqual(['edge-1', 'edge-2', 'edge-3'])
    const card = (id: string) =>
      list.getByRole('listitem').filter({ has: page.getByRole('heading', { name: id }) })
    expect(await card('edge-1').textContent()).toMatch(/connected.*Node-RED\s*4\.1\.2.*Drift\s*none/)
    // The name its Node-RED's own events have in the Activity view.
    expect(await card('edge-2').textContent()).toMatch(/In Activity\s*fleet\/edge-2/)
    await expect(page.getByRole('list', { name: 'Drift of edge-2' }).textContent()).resolves.toBe(
      'by-hand: installed by hand',
    )
    await expect(page.getByRole('list', { name: 'Drift of edge-3' }).textContent()).resolves.toBe(
      'node-red-contrib-shout: refused by Node-RED (Node-RED said no)',
    )
    expect(await axeFindings(page)).toEqual([])
    await screenshot(page, 'fleet')

    // Drift that is gone is gone at the view's next refresh of its own, or at once with the button.
    await send('edge-3', report(true, [], 2))
    await page.getByRole('list', { name: 'Drift of edge-3' }).waitFor({ state: 'detached', timeout: 15_000 })
    await page.getByRole('button', { name: 'Refresh' }).click()
    await page.getByRole('status').filter({ hasText: 'Instances refreshed.' }).waitFor()
    expect(problems).toEqual([])
    // The data is the API's: the same three instances.
    const token = await apiToken(env.server.url, 'viewer')
    const listed = (await (
      await fetch(`${env.server.url}/fleet/instances`, { headers: { authorization: `Bearer ${token}` } })
    ).json()) as Array<{ id: string }>
    expect(listed.map((instance) => instance.id)).toEqual(['edge-1', 'edge-2', 'edge-3'])
  })

  it('an operator makes an enrolment token, shown once; the instance that enrols with it shows its enrolment', async () => {
    const { page, problems } = await signedIn(env.browser, env.server.url, 'admin')
    await showView(page, 'Fleet')
    const form = page.getByRole('form', { name: 'Enrol an instance' })
    await form.getByLabel('Instance id (optional)').fill('nr-7')
    await form.getByRole('button', { name: 'Create' }).click()
    const shown = page.getByRole('region', { name: 'Enrolment token for nr-7' })
    const token = await shown.getByLabel('Token').inputValue()
    expect(token).toMatch(/^fae_[A-Za-z0-9_-]{43}$/)
    const enrolled = await fetch(`${env.server.url}/fleet/enrol`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token }),
    })
    expect(enrolled.status).toBe(201)
    const { clientId, clientSecret } = (await enrolled.json()) as { clientId: string; clientSecret: string }
    const polled = await fetch(`${env.server.url}/fleet/instances/nr-7/desired`, {
      headers: { authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}` },
    })
    expect(polled.status).toBe(200)
    await shown.getByRole('button', { name: 'Done' }).click()
    await page.getByRole('button', { name: 'Refresh' }).click()
    const card = page
      .getByRole('list', { name: 'Instances' })
      .getByRole('listitem')
      .filter({ has: page.getByRole('heading', { name: 'nr-7' }) })
    await expect(card.textContent()).resolves.toMatch(/Enrolled.*by admin/)
    expect(await axeFindings(page)).toEqual([])
    expect(problems).toEqual([])
  })
})
