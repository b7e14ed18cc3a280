// Roles, groups of instances and grants in the settings: what they take, the defaults, and what
// they refuse, each refusal naming the field and what it names.
import { describe, expect, it } from 'vitest'
import { parse, refusal } from './settings-parse.js'

const HASH = '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaA'
const OIDC = {
  issuer: 'https://id.example.com/realms/ops',
  clientId: 'flowadmin',
  clientSecret: 'a-secret',
  permissions: { claim: 'groups', map: { 'nr-admins': '*' } },
}
const FLEET = { modules: true, groups: { 'line-1': ['press-*', 'nr-7'], 'line-2': ['weld-?'], test: [] } }
const alice = (grants: unknown, more: Record<string, unknown> = {}) => ({
  username: 'alice',
  password: HASH,
  grants,
  ...more,
})
const withUsers = (users: unknown[], adminAuth: Record<string, unknown> = {}) => ({
  fleet: FLEET,
  adminAuth: { users, ...adminAuth },
})

describe('settings: roles, groups and grants', () => {
  it('take grants on users, roles with lifetimes and groups of instances', () => {
    const settings = parse(
      withUsers(
        [
          alice([
            { role: 'deployer', on: 'line-1' },
            { role: 'viewer', on: 'everywhere' },
          ]),
          {
            username: 'ops',
            password: HASH,
            permissions: 'read',
            grants: [{ role: 'break-glass', on: 'flowadmin' }],
          },
        ],
        { roles: { 'break-glass': { permissions: '*', maxTokenLifetime: 900 } } },
      ),
    )
    expect(settings.access).toEqual({
      roles: { 'break-glass': { permissions: '*', maxTokenLifetime: 900 } },
      groups: FLEET.groups,
    })
    expect(settings.adminAuth?.users[0]?.grants).toEqual([
      { role: 'deployer', on: 'line-1' },
      { role: 'viewer', on: 'everywhere' },
    ])
  })

  it('have none beyond the built-in roles by default, and permissions keep working alone', () => {
    const settings = parse({ adminAuth: { users: [{ username: 'a', password: HASH, permissions: '*' }] } })
    expect(settings.access).toEqual({ roles: {}, groups: {} })
  })

  it('take grants as values of the identity provider’s group map, beside permissions', () => {
    const map = { 'nr-admins': '*', 'line-1-ops': [{ role: 'deployer', on: 'line-1' }, 'read'] }
    const settings = parse({
      fleet: FLEET,
      adminAuth: { oidc: { ...OIDC, permissions: { claim: 'groups', map } } },
    })
    expect(settings.adminAuth?.oidc?.permissions.map).toEqual(map)
  })

  it.each([
    [
      'a grant on a group not declared',
      withUsers([alice([{ role: 'deployer', on: 'line-9' }])]),
      'settings.json: adminAuth.users[0].grants[0]: unknown group line-9 (declare it in fleet.groups, or grant on everywhere or flowadmin)',
    ],
    [
      'a grant of a role there is not',
      withUsers([
        alice([
          { role: 'viewer', on: 'everywhere' },
          { role: 'operator', on: 'test' },
        ]),
      ]),
      'settings.json: adminAuth.users[0].grants[1]: unknown role operator',
    ],
    [
      'a group of the provider’s map granting on an unknown group',
      {
        fleet: FLEET,
        adminAuth: {
          oidc: { ...OIDC, permissions: { claim: 'groups', map: { ops: [{ role: 'admin', on: 'prod' }] } } },
        },
      },
      'settings.json: adminAuth.oidc.permissions.map["ops"][0]: unknown group prod (declare it in fleet.groups, or grant on everywhere or flowadmin)',
    ],
    [
      'a user with neither permissions nor grants',
      withUsers([alice([])]),
      'settings.json: adminAuth.users[0]: needs permissions (everywhere) or grants ({ role, on }), or both',
    ],
    [
      'a grant without a scope',
      withUsers([alice([{ role: 'viewer' }])]),
      'settings.json: adminAuth.users[0].grants[0].on: is required',
    ],
    [
      'a grant whose scope is no name',
      withUsers([alice([{ role: 'viewer', on: 'line 1' }])]),
      'settings.json: adminAuth.users[0].grants[0].on: line 1 is not a scope: "everywhere", "flowadmin" or a group\'s name',
    ],
    [
      'a group called as a scope',
      {
        fleet: { modules: true, groups: { flowadmin: [] } },
        adminAuth: { users: [alice([{ role: 'viewer', on: 'everywhere' }])] },
      },
      "settings.json: fleet.groups.flowadmin: flowadmin is a scope of its own, not a group's name",
    ],
    [
      'a pattern with other characters',
      {
        fleet: { modules: true, groups: { a: ['press/*'] } },
        adminAuth: { users: [alice([{ role: 'viewer', on: 'a' }])] },
      },
      'settings.json: fleet.groups.a[0]: a pattern is 1 to 128 letters, digits, ".", "_", "-", "*" (any characters) or "?" (one)',
    ],
    [
      'a role of an unknown permission',
      withUsers([alice([{ role: 'viewer', on: 'everywhere' }])], {
        roles: { ops: { permissions: 'deploy' } },
      }),
      'settings.json: adminAuth.roles.ops.permissions: "deploy" is not a permission (use *, read, write, *.read, *.write, or <resource>.read|write)',
    ],
    [
      'a role lifetime of no seconds',
      withUsers([alice([{ role: 'viewer', on: 'everywhere' }])], {
        roles: { ops: { permissions: '*', maxTokenLifetime: 0 } },
      }),
      'settings.json: adminAuth.roles.ops.maxTokenLifetime: must be at least 1',
    ],
  ])('refuse %s, naming the field', (_what, input, message) => {
    expect(refusal(input)).toBe(message)
  })
})
