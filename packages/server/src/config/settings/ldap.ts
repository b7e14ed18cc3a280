// `adminAuth.ldap`: the people of the organisation's directory (OpenLDAP, Active Directory).
import { readFileSync } from 'node:fs'
import * as path from 'node:path'
import type { GroupRights } from '@flowadmin/core'
import { DEFAULT_DIRECTORY_LABEL, DEFAULT_RECHECK_MINUTES } from '@flowadmin/core'
import * as v from 'valibot'
import { groupRights } from './access.js'
import { type FieldProblem, issueOf, onOff, strictObject, text, whole } from './fields.js'

/** The directory's groups: an attribute of the person's entry, or a search for groups that name them. */
export type LdapGroups =
  | { attribute: string }
  | {
      /** Where groups are searched. */
      base: string
      /** The search filter; `{dn}` stands for the person's DN (escaped per RFC 4515). */
      filter: string
    }

/** `adminAuth.ldap`, with the service account's password and the CA certificates read. */
export interface LdapSettings {
  /** `ldaps://` or `ldap://` URLs, tried in order. */
  urls: string[]
  /** StartTLS on `ldap://` URLs before anything else is sent. */
  startTls: boolean
  /** The CA certificates (PEM) the directory's certificate must chain to; absent: the system's. */
  ca?: string | undefined
  /** Where they were read from, for messages. */
  caFile?: string | undefined
  /** `ldap://` without StartTLS: passwords travel in the clear (warned at start). */
  allowUnencrypted: boolean
  bindDn: string
  /** The service account's password: from the file named, the settings, or the environment. */
  bindPassword: string
  userSearch: { base: string; filter: string }
  /** The attribute whose value is the person's name here. Default `uid`. */
  usernameAttribute: string
  /** The attribute that is the entry's lasting identity (`entryUUID`, `objectGUID`), or `dn`. */
  identityAttribute: string
  groups: LdapGroups
  permissions: { map: Record<string, GroupRights> }
  /** Milliseconds a sign-in may wait for the directory in all. */
  timeout: number
  /** Connections kept for the service account (searches), and as many for the people's binds. */
  poolSize: number
  recheckMinutes: number
  label: string
  throttle?: { maxFailures?: number | undefined; windowSeconds?: number | undefined } | undefined
}

/** Where the service account's password comes from when neither the settings nor a file hold it. */
export const LDAP_PASSWORD_ENV = 'FLOWADMIN_LDAP_BIND_PASSWORD'
/** Milliseconds a sign-in waits for the directory unless `timeout` says otherwise. */
export const DEFAULT_LDAP_TIMEOUT = 3000
export const DEFAULT_LDAP_POOL = 4
/** Active Directory's matching rule that follows nested groups (LDAP_MATCHING_RULE_IN_CHAIN). */
export const IN_CHAIN = '1.2.840.113556.1.4.1941'

function urlProblem(text: string): string | null {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return 'must be a URL such as "ldaps://ldap.example.org" or "ldap://dc1.example.org"'
  }
  if (url.protocol !== 'ldap:' && url.protocol !== 'ldaps:') return 'must be an ldap:// or ldaps:// URL'
  if (url.username !== '' || url.password !== '') return 'must not hold credentials'
  if ((url.pathname !== '' && url.pathname !== '/') || url.search !== '' || url.hash !== '')
    return 'must name a server only (scheme, host and port): the search base is userSearch.base'
  return null
}

const url = v.pipe(text('an ldap:// or ldaps:// URL'), issueOf(urlProblem))
const dn = (what: string) => text(what)

export const ldap = strictObject({
  url: v.union(
    [url, v.pipe(v.array(url), v.nonEmpty('must list at least one URL'))],
    'must be an ldap:// or ldaps:// URL, or a list of them (tried in order)',
  ),
  startTls: v.optional(onOff),
  caFile: v.optional(text('a file of PEM certificates')),
  allowUnencrypted: v.optional(onOff),
  bindDn: dn('the service account’s DN'),
  bindPassword: v.optional(text(`the service account’s password, or set ${LDAP_PASSWORD_ENV}`)),
  bindPasswordFile: v.optional(text('a file holding the service account’s password')),
  userSearch: strictObject({
    base: dn('the DN people are searched below'),
    filter: v.pipe(
      text('a filter such as "(uid={username})"'),
      v.check((filter) => filter.includes('{username}'), 'must hold {username}, e.g. "(uid={username})"'),
      v.check((filter) => filter.startsWith('(') && filter.endsWith(')'), 'must be in parentheses'),
    ),
  }),
  usernameAttribute: v.optional(text('an attribute, e.g. "uid" or "sAMAccountName"')),
  identityAttribute: v.optional(text('an attribute, e.g. "entryUUID" or "objectGUID", or "dn"')),
  groups: v.optional(
    strictObject({
      attribute: v.optional(text('an attribute of the person’s entry, e.g. "memberOf"')),
      base: v.optional(dn('the DN groups are searched below')),
      filter: v.optional(
        v.pipe(
          text('a filter such as "(member={dn})"'),
          v.check((filter) => filter.includes('{dn}'), 'must hold {dn}, e.g. "(member={dn})"'),
        ),
      ),
      nested: v.optional(onOff),
    }),
  ),
  permissions: strictObject({
    map: v.pipe(
      v.record(v.string(), groupRights, 'must map group DNs or names to permissions and grants'),
      v.check((map) => Object.keys(map).length > 0, 'must map at least one group'),
    ),
  }),
  timeout: v.optional(whole(100, 60_000)),
  poolSize: v.optional(whole(1, 64)),
  recheckMinutes: v.optional(whole(0, 1440)),
  label: v.optional(text('the directory’s name in sessions and the audit')),
  throttle: v.optional(
    strictObject({
      maxFailures: v.optional(whole(1, 1000)),
      windowSeconds: v.optional(whole(60, 86_400)),
    }),
  ),
})

/** The text of a file the settings name, relative to them, or a problem naming the field. */
function readSetting(file: string, baseDir: string, field: string, problem: FieldProblem): string {
  try {
    return readFileSync(path.resolve(baseDir, file), 'utf8')
  } catch (error) {
    throw problem(field, `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`)
  }
}

/** The groups as the adapter reads them, or a problem. */
function groupsOf(parsed: v.InferOutput<typeof ldap>['groups'], problem: FieldProblem): LdapGroups {
  const { attribute, base, filter, nested } = parsed ?? {}
  if (base === undefined) {
    if (filter !== undefined || nested !== undefined)
      throw problem('.ldap.groups', 'filter and nested need base: the DN groups are searched below')
    return { attribute: attribute ?? 'memberOf' }
  }
  if (attribute !== undefined)
    throw problem(
      '.ldap.groups',
      'give either attribute (read from the person’s entry) or base (a search), not both',
    )
  if (nested === true && filter !== undefined)
    throw problem(
      '.ldap.groups',
      `give either filter or nested (which searches (member:${IN_CHAIN}:={dn})), not both`,
    )
  return { base, filter: filter ?? (nested === true ? `(member:${IN_CHAIN}:={dn})` : '(member={dn})') }
}

/**
 * `adminAuth.ldap` as the server uses it: the password from `bindPasswordFile`, the settings or
 * the environment; the CA file read; encryption required unless explicitly allowed.
 */
export function ldapOf(
  parsed: v.InferOutput<typeof ldap>,
  baseDir: string,
  problem: FieldProblem,
): LdapSettings {
  const urls = [parsed.url].flat()
  const startTls = parsed.startTls ?? false
  const allowUnencrypted = parsed.allowUnencrypted ?? false
  for (const each of urls) {
    if (each.startsWith('ldaps:') && startTls)
      throw problem('.ldap.startTls', `is for ldap:// URLs; ${each} is encrypted from the start`)
    if (each.startsWith('ldap:') && !startTls && !allowUnencrypted)
      throw problem(
        '.ldap.url',
        `${each} would carry passwords in the clear: use ldaps://, set startTls, or (on a trusted network only) allowUnencrypted`,
      )
  }
  if (parsed.bindPassword !== undefined && parsed.bindPasswordFile !== undefined)
    throw problem('.ldap.bindPassword', 'give either bindPassword or bindPasswordFile, not both')
  const bindPassword =
    parsed.bindPasswordFile !== undefined
      ? readSetting(parsed.bindPasswordFile, baseDir, '.ldap.bindPasswordFile', problem).replace(/\r?\n$/, '')
      : (parsed.bindPassword ?? process.env[LDAP_PASSWORD_ENV])
  if (bindPassword === undefined || bindPassword === '')
    throw problem(
      '.ldap.bindPassword',
      `is required: set it here, name a file in bindPasswordFile, or set ${LDAP_PASSWORD_ENV}`,
    )
  const ca =
    parsed.caFile === undefined ? undefined : readSetting(parsed.caFile, baseDir, '.ldap.caFile', problem)
  if (ca !== undefined && !ca.includes('-----BEGIN CERTIFICATE-----'))
    throw problem('.ldap.caFile', `${parsed.caFile} holds no PEM certificate`)
  return {
    urls,
    startTls,
    ...(ca !== undefined && { ca, caFile: path.resolve(baseDir, parsed.caFile as string) }),
    allowUnencrypted,
    bindDn: parsed.bindDn,
    bindPassword,
    userSearch: parsed.userSearch,
    usernameAttribute: parsed.usernameAttribute ?? 'uid',
    identityAttribute: parsed.identityAttribute ?? 'entryUUID',
    groups: groupsOf(parsed.groups, problem),
    permissions: parsed.permissions,
    timeout: parsed.timeout ?? DEFAULT_LDAP_TIMEOUT,
    poolSize: parsed.poolSize ?? DEFAULT_LDAP_POOL,
    recheckMinutes: parsed.recheckMinutes ?? DEFAULT_RECHECK_MINUTES,
    label: parsed.label ?? DEFAULT_DIRECTORY_LABEL,
    ...(parsed.throttle !== undefined && { throttle: parsed.throttle }),
  }
}

/** What a start warns of: a directory asked without encryption. */
export function ldapWarnings(settings: LdapSettings | undefined): string[] {
  if (settings === undefined) return []
  return settings.urls
    .filter((each) => each.startsWith('ldap:') && !settings.startTls)
    .map(
      (each) =>
        `adminAuth.ldap: ${each} is asked without encryption (allowUnencrypted): the directory's people's passwords and the service account's travel in the clear`,
    )
}
