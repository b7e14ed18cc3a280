// The access view in Chromium against the built server: everyone sees their own access; an
// operator with every right on flowadmin also sees who holds which role where, read-only.
import { describe, expect, it } from 'vitest'
import {
  apiToken,
  axeFindings,
  hash,
  logIn,
  open,
  screenshot,
  sessionToken,
  USERS,
  useBrowserAndServer,
  useServer,
} from './harness.js'
import { itReadsWell, resourceServer, showView, signedIn, type TabOptions } from './views.js'

const FLEET = resourceServer('fleet')
const ALICE = { username: 'alice', password: 'alice-pw' }
const CARL = { username: 'carl', password: 'carl-pw' }
const DEPLOYER = 'read, flows.write, inject.write, debug.write, library.write'

const env = useBrowserAndServer(async () => ({
  extra: { fleet: { modules: true, groups: { 'line-1': ['press-*'] } } },
  adminAuth: {
    users: [
      { username: 'admin', password: await hash(USERS.admin), permissions: '*' },
      { username: 'viewer', password: await hash(USERS.viewer), permissions: 'read' },
      {
        username: 'alice',
        password: await hash(ALICE.password),
        grants: [
          { role: 'viewer', on: 'everywhere' },
          { role: 'deployer', on: 'line-1' },
        ],
      },
      // A contractor: a role on one group of instances, nothing on flowadmin itself.
      { username: 'carl', password: await hash(CARL.password), grants: [{ role: 'viewer', on: 'line-1' }] },
    ],
    resourceServers: [await FLEET.setting()],
  },
}))

/** The rows of a table as a person reads them, each row's cells joined. */
const rowsOf = (tab: Awaited<ReturnType<typeof signedIn>>, name: string) =>
  tab.page.getByRole('table', { name }).getByRole('row').allTextContents()

const accessOf = async (options: TabOptions = {}) => {
  const tab = await signedIn(env.browser, env.server.url, 'admin', options)
  await showView(tab.page, 'Access')
  await tab.page.getByRole('table', { name: 'Who holds which role where' }).waitFor()
  return tab
}

describe('the access view', () => {
  it('shows an operator their own access and who holds which role where, from the settings and the tokens', async () => {
    // An API token that carries a grant of its own.
    const made = await fetch(`${env.server.url}/auth/tokens`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await apiToken(env.server.url, 'admin')}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ name: 'ci', scope: 'role:deployer@line-1' }),
    })
    expect(made.status).toBe(201)
    const tab = await accessOf()
    await expect(rowsOf(tab, 'What this session may do')).resolves.toEqual([
      'ScopePermissions',
      'everywhere*',
      'flowadmin*',
      'line-1*',
    ])
    await expect(tab.page.getByRole('list', { name: 'Your grants' }).textContent()).resolves.toBe(
      '* on everywhere',
    )
    await expect(rowsOf(tab, 'Who holds which role where')).resolves.toEqual([
      'WhoRole or permissionsScopeFrom',
      'admin user*everywherethe settings',
      'viewer userreadeverywherethe settings',
      'alice userviewer (read)everywherethe settings',
      `alice userdeployer (${DEPLOYER})line-1the settings`,
      'carl userviewer (read)line-1the settings',
      `ci API token of admindeployer (${DEPLOYER})line-1its scope`,
    ])
    await tab.page.getByText('Read-only: the settings decide these').waitFor()
    expect(await axeFindings(tab.page)).toEqual([])
    await screenshot(tab.page, 'access')
    expect(tab.problems).toEqual([])
    await tab.context.close()
  })

  it('shows a person with grants their own access, what their session may do on each scope, and no one else’s', async () => {
    const tab = await signedIn(env.browser, env.server.url, ALICE)
    await showView(tab.page, 'Access')
    const table = tab.page.getByRole('table', { name: 'What this session may do' })
    await table.waitFor()
    // The same as the API tells this session.
    const own = await fetch(`${env.server.url}/auth/access`, {
      headers: { authorization: `Bearer ${await sessionToken(tab.page)}` },
    })
    expect(own.status).toBe(200)
    const { scopes } = (await own.json()) as { scopes: Record<string, string[]> }
    expect(Object.keys(scopes)).toEqual(['everywhere', 'flowadmin', 'line-1'])
    expect(scopes['line-1']).toContain('flows.write')
    await expect(rowsOf(tab, 'What this session may do')).resolves.toEqual([
      'ScopePermissions',
      ...Object.entries(scopes).map(([scope, permissions]) => `${scope}${permissions.join(', ')}`),
    ])
    await expect(
      tab.page.getByRole('list', { name: 'Your grants' }).getByRole('listitem').allTextContents(),
    ).resolves.toEqual(['the role viewer on everywhere', 'the role deployer on line-1'])
    await expect(rowsOf(tab, 'Your roles')).resolves.toEqual([
      'RolePermissionsLongest token',
      'viewerreadno limit',
      `deployer${DEPLOYER}no limit`,
    ])
    expect(await tab.page.getByRole('heading', { name: 'Who holds which role where' }).count()).toBe(0)
    // She reads the groups, and has nothing to change there.
    await showView(tab.page, 'Groups')
    await tab.page.getByRole('list', { name: 'Groups' }).waitFor()
    expect(await tab.page.getByRole('form').count()).toBe(0)
    expect(await axeFindings(tab.page)).toEqual([])
    expect(tab.problems).toEqual([])
    await tab.context.close()
  })

  it('lets in a person with a role on one group and nothing on flowadmin, and shows them their access', async () => {
    const tab = await open(env.browser, `${env.server.url}/`)
    await logIn(tab.page, CARL.username, CARL.password)
    // flowadmin's own settings are not theirs to read: the console knows them from their access,
    // and opens on the first view they may use, the fleet's instances they may read.
    await tab.page.getByRole('heading', { name: 'Fleet', level: 2 }).waitFor()
    // Nothing offered there that they may not do: enrolment tokens need nodes.write on flowadmin.
    expect(await tab.page.getByRole('form', { name: 'Enrol an instance' }).count()).toBe(0)
    await showView(tab.page, 'Access')
    await expect(rowsOf(tab, 'What this session may do')).resolves.toEqual(['ScopePermissions', 'line-1read'])
    await expect(tab.page.locator('.user').textContent()).resolves.toBe('carl')
    // No view of flowadmin's own that would only say "not allowed".
    for (const name of ['Node modules', 'Groups', 'Resource servers', 'Activity']) {
      await expect(tab.page.getByRole('button', { name, exact: true }).count()).resolves.toBe(0)
    }
    expect(await axeFindings(tab.page)).toEqual([])
    expect(tab.problems).toEqual([])
    await tab.context.close()
  })

  itReadsWell('access', accessOf)
})

describe('without fleet mode', () => {
  const plain = useServer()

  it('offers the Access view and no Groups view', async () => {
    const { page, problems, context } = await signedIn(env.browser, plain.server.url, 'viewer')
    await showView(page, 'Access')
    await page.getByRole('table', { name: 'What this session may do' }).waitFor()
    await expect(page.getByRole('button', { name: 'Groups', exact: true }).count()).resolves.toBe(0)
    expect(await page.getByRole('heading', { name: 'Who holds which role where' }).count()).toBe(0)
    expect(problems).toEqual([])
    await context.close()
  })
})
