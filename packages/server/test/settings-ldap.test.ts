// `adminAuth.ldap`: what the settings take, the defaults they get, and what they refuse, each
// refusal naming the field. The filters the adapter makes of them are checked here too.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { firstRdnValue, groupFilter, userFilter } from '../src/adapters/ldap.js'
import { ldapWarnings } from '../src/config/settings/ldap.js'
import { parseSettings, SettingsError } from '../src/index.js'

const HASH = '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaA'
const LDAP = {
  url: 'ldaps://ldap.example.org',
  bindDn: 'cn=flowadmin,ou=services,dc=example,dc=org',
  bindPassword: 'service-secret',
  userSearch: { base: 'ou=people,dc=example,dc=org', filter: '(uid={username})' },
  permissions: { map: { 'cn=nr-admins,ou=groups,dc=example,dc=org': '*', 'nr-viewers': 'read' } },
}

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'flowadmin-ldap-settings-'))
  await writeFile(path.join(dir, 'bind-password'), 'from-a-file\n')
  await writeFile(path.join(dir, 'ca.pem'), '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n')
  await writeFile(path.join(dir, 'not-a-ca.pem'), 'hello')
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

const parse = (ldap: Record<string, unknown>, users = false) =>
  parseSettings(
    {
      adminAuth: { ldap, ...(users && { users: [{ username: 'admin', password: HASH, permissions: '*' }] }) },
    },
    'settings.json',
    dir,
  ).adminAuth

function refusal(ldap: Record<string, unknown>): string {
  try {
    parse(ldap)
  } catch (error) {
    expect(error).toBeInstanceOf(SettingsError)
    return (error as Error).message
  }
  throw new Error('the settings were accepted')
}

const withEnv = <T>(value: string | undefined, run: () => T): T => {
  const before = process.env.FLOWADMIN_LDAP_BIND_PASSWORD
  if (value === undefined) delete process.env.FLOWADMIN_LDAP_BIND_PASSWORD
  else process.env.FLOWADMIN_LDAP_BIND_PASSWORD = value
  try {
    return run()
  } finally {
    if (before === undefined) delete process.env.FLOWADMIN_LDAP_BIND_PASSWORD
    else process.env.FLOWADMIN_LDAP_BIND_PASSWORD = before
  }
}

describe('directory settings', () => {
  it('start a directory-only server, with every default named', () => {
    expect(parse(LDAP)).toEqual({
      type: 'credentials',
      users: [],
      ldap: {
        urls: ['ldaps://ldap.example.org'],
        startTls: false,
        allowUnencrypted: false,
        bindDn: LDAP.bindDn,
        bindPassword: 'service-secret',
        userSearch: LDAP.userSearch,
        usernameAttribute: 'uid',
        identityAttribute: 'entryUUID',
        groups: { attribute: 'memberOf' },
        permissions: LDAP.permissions,
        timeout: 3000,
        poolSize: 4,
        recheckMinutes: 15,
        label: 'the directory',
      },
    })
    expect(parse(LDAP, true)?.users).toHaveLength(1)
  })

  it('take an Active Directory’s attributes, a nested group search, several URLs and StartTLS with a CA file', () => {
    const ldap = parse({
      ...LDAP,
      url: ['ldap://dc1.example.org', 'ldap://dc2.example.org:389'],
      startTls: true,
      caFile: 'ca.pem',
      usernameAttribute: 'sAMAccountName',
      identityAttribute: 'objectGUID',
      userSearch: {
        base: 'dc=example,dc=org',
        filter: '(&(objectCategory=person)(sAMAccountName={username}))',
      },
      groups: { base: 'ou=groups,dc=example,dc=org', nested: true },
      timeout: 5000,
      poolSize: 8,
      recheckMinutes: 0,
      label: 'Example AD',
      throttle: { maxFailures: 2, windowSeconds: 3600 },
    })?.ldap
    expect(ldap).toMatchObject({
      urls: ['ldap://dc1.example.org', 'ldap://dc2.example.org:389'],
      startTls: true,
      ca: expect.stringContaining('BEGIN CERTIFICATE'),
      caFile: path.join(dir, 'ca.pem'),
      groups: { base: 'ou=groups,dc=example,dc=org', filter: '(member:1.2.840.113556.1.4.1941:={dn})' },
      recheckMinutes: 0,
      throttle: { maxFailures: 2, windowSeconds: 3600 },
    })
  })

  it('take the service account’s password from a file, or from FLOWADMIN_LDAP_BIND_PASSWORD', () => {
    const { bindPassword: _, ...rest } = LDAP
    expect(parse({ ...rest, bindPasswordFile: 'bind-password' })?.ldap?.bindPassword).toBe('from-a-file')
    expect(withEnv('from-the-environment', () => parse(rest)?.ldap?.bindPassword)).toBe(
      'from-the-environment',
    )
    expect(withEnv(undefined, () => refusal(rest))).toBe(
      'settings.json: adminAuth.ldap.bindPassword: is required: set it here, name a file in bindPasswordFile, or set FLOWADMIN_LDAP_BIND_PASSWORD',
    )
  })

  it('refuse plain ldap:// unless StartTLS or allowUnencrypted says so, and warn of the latter at start', () => {
    expect(refusal({ ...LDAP, url: 'ldap://ldap.example.org' })).toBe(
      'settings.json: adminAuth.ldap.url: ldap://ldap.example.org would carry passwords in the clear: use ldaps://, set startTls, or (on a trusted network only) allowUnencrypted',
    )
    const plain = parse({ ...LDAP, url: 'ldap://ldap.example.org', allowUnencrypted: true })?.ldap
    expect(ldapWarnings(plain)).toEqual([
      "adminAuth.ldap: ldap://ldap.example.org is asked without encryption (allowUnencrypted): the directory's people's passwords and the service account's travel in the clear",
    ])
    expect(ldapWarnings(parse({ ...LDAP, url: 'ldap://ldap.example.org', startTls: true })?.ldap)).toEqual([])
    expect(refusal({ ...LDAP, startTls: true })).toBe(
      'settings.json: adminAuth.ldap.startTls: is for ldap:// URLs; ldaps://ldap.example.org is encrypted from the start',
    )
  })

  it.each([
    [{ url: 'http://ldap.example.org' }, 'adminAuth.ldap.url: must be an ldap:// or ldaps:// URL'],
    [{ url: 'ldaps://ldap.example.org/dc=example' }, 'must name a server only'],
    [{ url: [] }, 'adminAuth.ldap.url: must list at least one URL'],
    [
      { userSearch: { base: 'dc=x', filter: '(uid=*)' } },
      'adminAuth.ldap.userSearch.filter: must hold {username}',
    ],
    [{ userSearch: { base: 'dc=x', filter: 'uid={username}' } }, 'userSearch.filter: must be in parentheses'],
    [{ groups: { base: 'ou=g', filter: '(member=x)' } }, 'adminAuth.ldap.groups.filter: must hold {dn}'],
    [{ groups: { nested: true } }, 'adminAuth.ldap.groups: filter and nested need base'],
    [{ groups: { attribute: 'memberOf', base: 'ou=g' } }, 'give either attribute'],
    [{ groups: { base: 'ou=g', filter: '(member={dn})', nested: true } }, 'give either filter or nested'],
    [{ permissions: { map: {} } }, 'adminAuth.ldap.permissions.map: must map at least one group'],
    [
      { permissions: { map: { admins: 'root' } } },
      'adminAuth.ldap.permissions.map.admins: "root" is not a permission',
    ],
    [{ timeout: 50 }, 'adminAuth.ldap.timeout: must be at least 100'],
    [{ poolSize: 0 }, 'adminAuth.ldap.poolSize: must be at least 1'],
    [{ caFile: 'missing.pem' }, 'adminAuth.ldap.caFile: cannot read missing.pem: ENOENT'],
    [{ caFile: 'not-a-ca.pem' }, 'adminAuth.ldap.caFile: not-a-ca.pem holds no PEM certificate'],
    [{ bindPasswordFile: 'bind-password' }, 'give either bindPassword or bindPasswordFile'],
    [{ bindDn: '' }, 'adminAuth.ldap.bindDn: must not be empty'],
    [{ userSerch: {} }, 'adminAuth.ldap.userSerch: unknown setting; did you mean adminAuth.ldap.userSearch?'],
  ])('refuse %j, naming the field', (change, message) => {
    expect(refusal({ ...LDAP, ...change })).toContain(message)
  })
})

describe('the filters the adapter sends', () => {
  it('escape the username per RFC 4515: *, (, ), \\ and NUL match nothing but themselves', () => {
    expect(userFilter('(uid={username})', 'alice')).toBe('(uid=alice)')
    expect(userFilter('(|(uid={username})(mail={username}))', '*)(uid=*')).toBe(
      '(|(uid=\\2a\\29\\28uid=\\2a)(mail=\\2a\\29\\28uid=\\2a))',
    )
    expect(userFilter('(uid={username})', 'a\\b\u0000c')).toBe('(uid=a\\5cb\\00c)')
  })

  it('escape the DN of a group search, and read a group’s name from its DN', () => {
    expect(groupFilter('(member={dn})', 'cn=Smith\\, J (ops),ou=people')).toBe(
      '(member=cn=Smith\\5c, J \\28ops\\29,ou=people)',
    )
    expect(firstRdnValue('cn=nr-admins,ou=groups,dc=example,dc=org')).toBe('nr-admins')
    expect(firstRdnValue('CN=Ops\\, Team,OU=Groups')).toBe('Ops, Team')
    expect(firstRdnValue('cn=caf\\c3\\a9,ou=g')).toBe('café')
  })
})
