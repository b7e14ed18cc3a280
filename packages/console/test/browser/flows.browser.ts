// The flows view in Chromium against the built server in fleet mode: a snapshot uploaded and
// downloaded, rolled out to a group; the instance (over HTTP, as its helper does) fetches its
// target and reports, and the view follows the rollout to its end, then shows drift; a rollback;
// the group's mode and variables; who sees what.
import { readFile } from 'node:fs/promises'
import type { Page } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  apiToken,
  axeFindings,
  hash,
  logIn,
  open,
  screenshot,
  USERS,
  useBrowserAndServer,
} from './harness.js'
import { itReadsWell, resourceServer, showView, signedIn } from './views.js'

const FLEET = resourceServer('fleet')
const CARL = { username: 'carl', password: 'carl-pw' }
const NORA = { username: 'nora', password: 'nora-pw' }

const env = useBrowserAndServer(async () => ({
  extra: {
    fleet: {
      modules: true,
      groups: { 'line-1': ['press-*'], 'line-2': ['weld-*'] },
      flows: { key: 'a-key-for-secret-flow-variables-of-the-browser-tests' },
    },
  },
  adminAuth: {
    users: [
      { username: 'admin', password: await hash(USERS.admin), permissions: '*' },
      { username: 'viewer', password: await hash(USERS.viewer), permissions: 'read' },
      // A contractor: a role on one group, nothing on flowadmin itself.
      { username: 'carl', password: await hash(CARL.password), grants: [{ role: 'viewer', on: 'line-1' }] },
      // The node modules' reader, with no right on flows anywhere.
      { username: 'nora', password: await hash(NORA.password), permissions: 'nodes.read' },
    ],
    resourceServers: [await FLEET.setting()],
  },
}))

/** A snapshot's file as a person keeps it in git. */
const snapshotFile = (greeting: string) =>
  `${JSON.stringify(
    {
      name: 'line-1',
      flows: [
        { id: 't1', type: 'tab', label: 'Line 1' },
        { id: 'n1', type: 'inject', z: 't1', name: greeting, wires: [['n2']] },
        { id: 'n2', type: 'debug', z: 't1', wires: [] },
      ],
    },
    null,
    2,
  )}\n`

/** A call of the instance `id`'s helper, with its resource server's shared secret. */
async function asInstance(id: string, method: string, route: string, body?: unknown) {
  const res = await fetch(`${env.server.url}/fleet/instances/${id}${route}`, {
    method,
    headers: { authorization: FLEET.basic, 'content-type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  })
  const text = await res.text()
  return { status: res.status, body: text === '' ? null : (JSON.parse(text) as Record<string, unknown>) }
}

/** What an instance's helper reports of its modules: made known to the fleet. */
async function report(id: string) {
  const res = await asInstance(id, 'POST', '/report', {
    sequence: 1,
    nodeRedVersion: '4.1.2',
    modules: [],
    typesInUse: [],
    applied: null,
    failures: [],
  })
  expect(res.status).toBe(204)
}

/** What the API says of a route now, as the admin. */
async function api<T>(route: string): Promise<T> {
  const res = await fetch(`${env.server.url}${route}`, {
    headers: { authorization: `Bearer ${await apiToken(env.server.url, 'admin')}` },
  })
  expect(res.status).toBe(200)
  return res.json() as Promise<T>
}

/** Uploads a file through the form and waits for the status that names the snapshot made. */
async function upload(page: Page, file: string, made: string) {
  const form = page.getByRole('form', { name: 'Upload a snapshot' })
  await form.getByLabel('Snapshot file (JSON)').setInputFiles({
    name: 'line-1.json',
    mimeType: 'application/json',
    buffer: Buffer.from(file),
  })
  await form.getByRole('button', { name: 'Upload' }).click()
  await page.getByRole('status').filter({ hasText: made }).waitFor()
}

/** Rolls the snapshot `label` out to line-1, all at once, through the group's form. */
async function rollOut(page: Page, label: string) {
  const form = page.getByRole('form', { name: 'Roll out to line-1' })
  await form.getByLabel('Snapshot').selectOption({ label })
  await form.getByRole('button', { name: 'Roll out' }).click()
  await page
    .getByRole('status')
    .filter({ hasText: `${label} is rolling out to line-1.` })
    .waitFor()
}

/** The card of the rollout whose heading is `heading`. */
const rolloutCard = (page: Page, heading: string) =>
  page.getByRole('list', { name: 'Rollouts' }).getByRole('listitem', { name: heading, exact: true })

/** The rows of a table as a person reads them, each row's cells joined. */
const rowsOf = (page: Page, name: string) =>
  page.getByRole('table', { name }).getByRole('row').allTextContents()

beforeAll(async () => {
  // Known to the fleet before any rollout: a rollout takes the group's known instances.
  await report('press-1')
  await report('weld-1')
})

describe('the flows view', () => {
  it('uploads a snapshot, rolls it out, follows the outcome, shows drift, rolls back; mode and variables', async () => {
    const { page, problems } = await signedIn(env.browser, env.server.url, 'admin')
    await showView(page, 'Flows')
    await page.getByRole('heading', { name: 'Groups', level: 3 }).waitFor()
    await expect(page.getByText('No snapshot yet.').count()).resolves.toBe(1)

    // A file that is not JSON: said so, nothing sent.
    await page
      .getByRole('form', { name: 'Upload a snapshot' })
      .getByLabel('Snapshot file (JSON)')
      .setInputFiles({
        name: 'broken.json',
        mimeType: 'application/json',
        buffer: Buffer.from('{"name": '),
      })
    await page.getByRole('button', { name: 'Upload' }).click()
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/^broken\.json is not JSON: /)
    // The server's refusal, as it says it.
    await page
      .getByRole('form', { name: 'Upload a snapshot' })
      .getByLabel('Snapshot file (JSON)')
      .setInputFiles({
        name: 'stray.json',
        mimeType: 'application/json',
        buffer: Buffer.from(
          JSON.stringify({ name: 'line-1', flows: [{ id: 'n1', type: 'debug', z: 't9' }] }),
        ),
      })
    await page.getByRole('button', { name: 'Upload' }).click()
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/z names "t9", no tab or subflow/)
    await upload(page, snapshotFile('tick'), 'line-1@1 made: 3 nodes.')
    await expect(rowsOf(page, 'Snapshots')).resolves.toEqual([
      'NameVersionNodesModulesMadeFile',
      expect.stringMatching(/^line-113none.* by adminDownload$/),
    ])

    // The download is the snapshot's file, under its own name.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download line-1@1' }).click(),
    ])
    expect(download.suggestedFilename()).toBe('line-1-v1.json')
    const downloaded = JSON.parse(await readFile(await download.path(), 'utf8')) as {
      name: string
      flows: unknown[]
    }
    expect(downloaded.name).toBe('line-1')
    expect(downloaded.flows).toHaveLength(3)

    // Rolled out to line-1: press-1 is waited for.
    await rollOut(page, 'line-1@1')
    const first = rolloutCard(page, 'Rollout 1: line-1@1 to line-1')
    await expect(first.textContent()).resolves.toMatch(
      /pending.*all at once.*press-1.*by admin.*Waiting for press-1\./,
    )
    const snapshots = await api<Array<{ id: string }>>('/fleet/snapshots')
    const v1 = snapshots[0]?.id

    // The instance fetches its target and says it deployed it: the view follows by itself.
    const target = await asInstance('press-1', 'GET', '/flows/target')
    expect(target.status).toBe(200)
    expect(target.body).toMatchObject({ snapshot: v1, mode: 'report', env: [] })
    const rollout = target.body?.rollout as string
    const said = await asInstance('press-1', 'POST', '/flows/report', {
      rollout,
      outcome: 'succeeded',
      rev: 'abc',
    })
    expect(said.status).toBe(204)
    await first.getByText('succeeded', { exact: true }).first().waitFor({ timeout: 10_000 })
    await expect(rowsOf(page, 'Outcomes of Rollout 1: line-1@1 to line-1')).resolves.toEqual([
      'InstanceOutcomeRevMessageMissing credentialsWhen',
      expect.stringMatching(/^press-1succeededabcnone/),
    ])
    await page.getByRole('table', { name: 'Flows of the instances of line-1' }).getByText('abc').waitFor()
    await expect(rowsOf(page, 'Flows of the instances of line-1')).resolves.toEqual([
      'InstanceRollout deployedRevDrift',
      'press-1line-1@1abcnone',
    ])
    const line1 = page.getByRole('listitem', { name: 'line-1', exact: true })
    await expect(line1.textContent()).resolves.toMatch(
      /Target\s*line-1@1, succeeded.*A rollback goes back to\s*nothing yet/,
    )

    // Someone deploys on the instance: drift, with who and when.
    const drifted = await asInstance('press-1', 'POST', '/flows/report', { rev: 'def', by: 'bob' })
    expect(drifted.status).toBe(204)
    await page.getByRole('button', { name: 'Refresh' }).click()
    await page.getByRole('status').filter({ hasText: 'Flows refreshed.' }).waitFor()
    await expect(rowsOf(page, 'Flows of the instances of line-1')).resolves.toEqual([
      'InstanceRollout deployedRevDrift',
      expect.stringMatching(/^press-1line-1@1defflows changed on the instance: rev def by bob, .+$/),
    ])

    // A second version rolled out, then the group rolled back to the first.
    await upload(page, snapshotFile('tock'), 'line-1@2 made: 3 nodes.')
    await rollOut(page, 'line-1@2')
    const second = (await asInstance('press-1', 'GET', '/flows/target')).body?.rollout as string
    expect(second).not.toBe(rollout)
    expect(
      (
        await asInstance('press-1', 'POST', '/flows/report', {
          rollout: second,
          outcome: 'succeeded',
          rev: 'ghi',
        })
      ).status,
    ).toBe(204)
    await rolloutCard(page, 'Rollout 2: line-1@2 to line-1')
      .getByText('succeeded', { exact: true })
      .first()
      .waitFor({
        timeout: 10_000,
      })
    await expect(line1.textContent()).resolves.toMatch(/A rollback goes back to\s*line-1@1/)
    await line1.getByRole('button', { name: 'Roll back line-1' }).click()
    await line1.getByRole('button', { name: 'Cancel' }).click()
    expect(await api<unknown[]>('/fleet/rollouts')).toHaveLength(2)
    await line1.getByRole('button', { name: 'Roll back line-1' }).click()
    await line1.getByRole('button', { name: 'Yes, roll back' }).click()
    await page.getByRole('status').filter({ hasText: 'line-1 is rolling back to line-1@1.' }).waitFor()
    const back = rolloutCard(page, 'Rollback 3: line-1@1 to line-1')
    await expect(back.textContent()).resolves.toMatch(/pending.*Waiting for press-1\./)
    const rolledBack = await asInstance('press-1', 'GET', '/flows/target')
    expect(rolledBack.body).toMatchObject({ snapshot: v1 })
    expect(
      (
        await asInstance('press-1', 'POST', '/flows/report', {
          rollout: rolledBack.body?.rollout,
          outcome: 'failed',
          rev: null,
          message: 'Node-RED said no',
          missingCredentials: ['n9'],
        })
      ).status,
    ).toBe(204)
    await back.getByText('failed', { exact: true }).first().waitFor({ timeout: 10_000 })
    await expect(rowsOf(page, 'Outcomes of Rollback 3: line-1@1 to line-1')).resolves.toEqual([
      'InstanceOutcomeRevMessageMissing credentialsWhen',
      expect.stringMatching(/^press-1failed—Node-RED said non9/),
    ])

    // The mode: enforced with the switch.
    const mode = line1.getByRole('switch', { name: 'Enforce the flows of line-1' })
    await expect(mode.getAttribute('aria-checked')).resolves.toBe('false')
    await mode.click()
    await page.getByRole('status').filter({ hasText: 'The flows of line-1 are enforced now.' }).waitFor()
    await expect(mode.getAttribute('aria-checked')).resolves.toBe('true')
    expect((await api<{ mode: string }>('/fleet/groups/line-1/flows')).mode).toBe('enforce')

    // Variables: a plain one, a secret one shown as dots, one removed after the question.
    const variables = line1.getByRole('form', { name: 'Set a variable of line-1' })
    await variables.getByLabel('Name').fill('GREETING')
    await variables.getByLabel('Value').fill('hello')
    await variables.getByRole('button', { name: 'Set' }).click()
    await page.getByRole('status').filter({ hasText: 'GREETING is set for line-1.' }).waitFor()
    await variables.getByLabel('Name').fill('TOKEN')
    await variables.getByLabel('Value').fill('s3cret')
    await variables.getByLabel('Secret').check()
    await variables.getByRole('button', { name: 'Set' }).click()
    await page.getByRole('status').filter({ hasText: 'TOKEN is set for line-1, as a secret.' }).waitFor()
    await expect(rowsOf(page, 'Variables of line-1')).resolves.toEqual([
      'NameValueSetRemove',
      expect.stringMatching(/^GREETINGhello.* by adminRemove$/),
      expect.stringMatching(/^TOKEN••••secret, not shownsecret.* by adminRemove$/),
    ])
    await expect(page.getByText('s3cret').count()).resolves.toBe(0)
    const delivered = await asInstance('press-1', 'GET', '/flows/target')
    expect(delivered.body?.env).toEqual([
      { name: 'GREETING', value: 'hello', type: 'str' },
      { name: 'TOKEN', value: 's3cret', type: 'cred' },
    ])
    await line1.getByRole('button', { name: 'Remove GREETING from line-1' }).click()
    await line1.getByRole('button', { name: 'Yes, remove' }).click()
    await page.getByRole('status').filter({ hasText: 'GREETING was removed from line-1.' }).waitFor()
    expect(
      (await api<Array<{ name: string }>>('/fleet/groups/line-1/variables')).map(({ name }) => name),
    ).toEqual(['TOKEN'])

    // Staged: the first instance first; weld-1 is that stage.
    const staged = page.getByRole('form', { name: 'Roll out to line-2' })
    await staged.getByLabel('Snapshot').selectOption({ label: 'line-1@2' })
    await staged.getByLabel('Staged').check()
    await staged.getByLabel('Instances first').fill('1')
    await staged.getByRole('button', { name: 'Roll out' }).click()
    await page.getByRole('status').filter({ hasText: 'line-1@2 is rolling out to line-2.' }).waitFor()
    await expect(rolloutCard(page, 'Rollout 4: line-1@2 to line-2').textContent()).resolves.toMatch(
      /pending.*staged: the first 1 instance first \(first stage\).*Waiting for weld-1\./,
    )
    expect((await api<Array<{ strategy: unknown }>>('/fleet/rollouts'))[0]?.strategy).toEqual({
      kind: 'staged',
      first: 1,
    })

    expect(await axeFindings(page)).toEqual([])
    await screenshot(page, 'flows')
    expect(problems).toEqual([])
  })

  // With the snapshots, groups and rollouts above.
  itReadsWell('flows', async (options) => {
    const tab = await signedIn(env.browser, env.server.url, 'admin', options)
    await showView(tab.page, 'Flows')
    await tab.page.getByRole('list', { name: 'Rollouts' }).waitFor()
    return tab
  })

  it('a reader reads everything and is offered no change', async () => {
    const { page, problems } = await signedIn(env.browser, env.server.url, 'viewer')
    await showView(page, 'Flows')
    await page.getByRole('table', { name: 'Snapshots' }).waitFor()
    await page.getByRole('list', { name: 'Rollouts' }).waitFor()
    await expect(page.getByRole('listitem', { name: 'line-2', exact: true }).textContent()).resolves.toMatch(
      /Target\s*none released to the whole group\s*Latest rollout\s*line-1@2, pending.*weld-1.*none yet/,
    )
    await expect(page.getByRole('form').count()).resolves.toBe(0)
    await expect(page.getByRole('switch').count()).resolves.toBe(0)
    await expect(page.getByRole('button', { name: /^(Roll back|Remove) / }).count()).resolves.toBe(0)
    // Downloading is reading.
    await expect(page.getByRole('button', { name: 'Download line-1@2' }).count()).resolves.toBe(1)
    expect(await axeFindings(page)).toEqual([])
    expect(problems).toEqual([])
  })

  it('a person with a role on one group sees that group’s flows; one with no right on flows sees no Flows view', async () => {
    const carl = await open(env.browser, `${env.server.url}/`)
    await logIn(carl.page, CARL.username, CARL.password)
    await carl.page.getByRole('heading', { name: 'Fleet', level: 2 }).waitFor()
    await showView(carl.page, 'Flows')
    await carl.page.getByRole('list', { name: "Groups' flows" }).waitFor()
    await expect(
      carl.page
        .getByRole('list', { name: "Groups' flows" })
        .getByRole('heading', { level: 4 })
        .allTextContents(),
    ).resolves.toEqual(['line-1'])
    // Snapshots to choose from, and the rollouts of line-1 alone; no upload for a viewer.
    await carl.page.getByRole('table', { name: 'Snapshots' }).waitFor()
    await expect(carl.page.getByRole('form', { name: 'Upload a snapshot' }).count()).resolves.toBe(0)
    const rolloutTitles = await carl.page
      .getByRole('list', { name: 'Rollouts' })
      .getByRole('heading', { level: 4 })
      .allTextContents()
    expect(rolloutTitles.length).toBeGreaterThan(0)
    expect(rolloutTitles.every((title) => title.endsWith(' to line-1'))).toBe(true)
    await expect(rowsOf(carl.page, 'Flows of the instances of line-1')).resolves.toEqual([
      'InstanceRollout deployedRevDrift',
      expect.stringMatching(/^press-1/),
    ])
    expect(await axeFindings(carl.page)).toEqual([])
    expect(carl.problems).toEqual([])
    await carl.context.close()

    const nora = await signedIn(env.browser, env.server.url, NORA)
    await expect(nora.page.getByRole('button', { name: 'Flows', exact: true }).count()).resolves.toBe(0)
    expect(nora.problems).toEqual([])
    await nora.context.close()
  })
})
