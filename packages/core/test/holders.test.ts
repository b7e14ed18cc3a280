// Who holds which role where: the rows of the settings' users, the identity provider's and the
// directory's group maps, and the API tokens that carry grants.
import { createMemoryStores } from '@flowadmin/adapter-memory'
import { createCoreWorld, createFakeIdentityProvider } from '@flowadmin/testkit'
import { describe, expect, it } from 'vitest'
import { holdingsOf } from '../src/access/holders.js'
import { createAccessRights } from '../src/access/rights.js'
import { operator } from '../src/auth/principal.js'
import { rightsOfUser } from '../src/auth/users.js'

const rights = createAccessRights({
  groups: { 'line-1': ['press-*'], test: [] },
  roles: { operator: { permissions: ['read', 'inject.write'] } },
})
const DEPLOYER = ['read', 'flows.write', 'inject.write', 'debug.write', 'library.write']
const none = { identityProvider: null, directory: null, apiTokens: [] }
const user = (username: string, options: Parameters<typeof rightsOfUser>[0]) => ({
  username,
  permissions: rightsOfUser(options),
})

describe('holdingsOf', () => {
  it("lists each user's permissions (everywhere) and grants, in the settings' order, with the roles' permissions", () => {
    const rows = holdingsOf(rights, {
      ...none,
      users: [
        user('root', { permissions: '*' }),
        user('alice', {
          permissions: ['nodes.read', 'audit.read'],
          grants: [
            { role: 'deployer', on: 'line-1' },
            { role: 'operator', on: 'everywhere' },
          ],
        }),
      ],
    })
    const settings = { owner: null, from: 'settings' }
    expect(rows).toEqual([
      { kind: 'user', holder: 'root', role: null, permissions: ['*'], on: 'everywhere', ...settings },
      {
        kind: 'user',
        holder: 'alice',
        role: null,
        permissions: ['nodes.read', 'audit.read'],
        on: 'everywhere',
        ...settings,
      },
      { kind: 'user', holder: 'alice', role: 'deployer', permissions: DEPLOYER, on: 'line-1', ...settings },
      {
        kind: 'user',
        holder: 'alice',
        role: 'operator',
        permissions: ['read', 'inject.write'],
        on: 'everywhere',
        ...settings,
      },
    ])
  })

  it("lists the identity provider's groups, then the directory's, each by name", () => {
    const rows = holdingsOf(rights, {
      users: [],
      apiTokens: [],
      identityProvider: {
        'nr-ops': [{ role: 'admin', on: 'flowadmin' }, 'read'],
        'nr-dev': 'read',
      },
      directory: { 'cn=line1,ou=groups': [{ role: 'viewer', on: 'line-1' }] },
    })
    expect(
      rows.map(({ kind, holder, role, on, permissions }) => [kind, holder, role, on, permissions]),
    ).toEqual([
      ['identity-provider-group', 'nr-dev', null, 'everywhere', ['read']],
      ['identity-provider-group', 'nr-ops', 'admin', 'flowadmin', ['*']],
      ['identity-provider-group', 'nr-ops', null, 'everywhere', ['read']],
      ['directory-group', 'cn=line1,ou=groups', 'viewer', 'line-1', ['read']],
    ])
  })

  it("lists an API token's grants and scoped permissions with its owner, never its plain ceiling", () => {
    const rows = holdingsOf(rights, {
      ...none,
      users: [],
      apiTokens: [
        { name: 'reader', username: 'alice', scope: ['read'] },
        { name: 'ci', username: 'alice', scope: ['role:deployer@test', 'flows.write@line-1', 'read'] },
      ],
    })
    const token = { kind: 'api-token', holder: 'ci', owner: 'alice', from: 'token' }
    expect(rows).toEqual([
      { ...token, role: 'deployer', permissions: DEPLOYER, on: 'test' },
      { ...token, role: null, permissions: ['flows.write'], on: 'line-1' },
    ])
  })

  it('shows a role the settings no longer have with no permissions, and skips words that are not rights', () => {
    const rows = holdingsOf(rights, {
      ...none,
      users: [{ username: 'bea', permissions: ['role:gone@test', 'not a word'] }],
    })
    expect(rows).toEqual([
      {
        kind: 'user',
        holder: 'bea',
        owner: null,
        role: 'gone',
        permissions: [],
        on: 'test',
        from: 'settings',
      },
    ])
  })

  it('lists nothing when there is no grant anywhere', () => {
    expect(holdingsOf(rights, { ...none, users: [] })).toEqual([])
  })
})

describe('core.holdings', () => {
  it("lists the settings' users and the identity provider's map to `*` on flowadmin, and refuses anyone else", async () => {
    const { core } = createCoreWorld({
      stores: createMemoryStores(),
      seed: 17,
      identityProvider: createFakeIdentityProvider('https://id.example/realms/ops').provider,
      access: { groups: { 'line-1': ['press-*'] } },
      adminAuth: (hasher) => ({
        users: [
          { username: 'olga', password: hasher.hash('pw'), grants: [{ role: 'viewer', on: 'line-1' }] },
        ],
        oidc: {
          label: 'Example ID',
          permissions: { claim: 'groups', map: { 'nr-ops': [{ role: 'admin', on: 'flowadmin' }] } },
        },
      }),
    })
    const listed = await core.holdings(operator)
    expect(listed.ok && listed.value.map(({ kind, holder, role, on }) => [kind, holder, role, on])).toEqual([
      ['user', 'olga', 'viewer', 'line-1'],
      ['identity-provider-group', 'nr-ops', 'admin', 'flowadmin'],
    ])
    const reader = { ...operator, permissions: ['read'] }
    expect(await core.holdings(reader)).toEqual({ ok: false, error: { code: 'forbidden', permission: '*' } })
  })
})
