// The directory port over ldapts: the person searched with the service account (the username
// escaped per RFC 4515), a bind as them with their password, their groups read (an attribute of
// their entry, or a search for the groups that name them). Every refusal costs the same: an
// unknown name is answered after a bind as a name that does not exist, a disabled account after
// its bind, without reading its groups, and every refusal waits for the pace of the recent ones
// (createRefusalPace). Each question is bounded in all by `timeout`; past it, the
// connections it holds are closed and the answer is "unavailable". No message carries a password.
import { randomUUID } from 'node:crypto'
import type { Directory, DirectoryAnswer, DirectoryPerson } from '@flowadmin/core'
import { type Entry, Filter, InvalidCredentialsError } from 'ldapts'
import type { LdapSettings } from '../config/settings/ldap.js'
import {
  type Connection,
  type ConnectionPool,
  createConnectionPool,
  openConnection,
} from './ldap-connections.js'

/** Active Directory's `userAccountControl` bit of a disabled account (ACCOUNTDISABLE). */
const ACCOUNT_DISABLED = 0x2
/** More entries than this named by one username is an ambiguous filter: refused. */
const SEARCH_LIMIT = 2
/** Groups read of one person at most. */
const GROUP_LIMIT = 1000

/** The user search's filter for `username`: `{username}` replaced by the name, escaped per RFC 4515. */
export const userFilter = (template: string, username: string): string =>
  template.replaceAll('{username}', Filter.escape(username))

/** The group search's filter for a person's DN: `{dn}` replaced by the DN, escaped per RFC 4515. */
export const groupFilter = (template: string, dn: string): string =>
  template.replaceAll('{dn}', Filter.escape(dn))

/** The value of a DN's first RDN: `nr-admins` of `cn=nr-admins,ou=groups,…`, its escapes undone. */
export function firstRdnValue(dn: string): string {
  const rdn = dn.split(/(?<!\\),/)[0] ?? ''
  const value = rdn.slice(rdn.indexOf('=') + 1)
  // `\XX` escapes are the bytes of UTF-8: percent-encoded with the rest, then decoded together.
  const encoded = value.replace(/\\([0-9a-fA-F]{2})|\\(.)|([^\\]+)/gs, (_match, hex, char, text) =>
    hex !== undefined ? `%${hex}` : encodeURIComponent(char ?? text),
  )
  try {
    return decodeURIComponent(encoded)
  } catch {
    return value
  }
}

/** The values of an attribute of an entry (its name matched without regard to case). */
function valuesOf(entry: Entry, attribute: string): Array<string | Buffer> {
  const key = Object.keys(entry).find((each) => each.toLowerCase() === attribute.toLowerCase())
  const value = key === undefined ? [] : entry[key]
  return Array.isArray(value) ? value : value === undefined ? [] : [value]
}

/** The values of an attribute of an entry, as text. */
const textsOf = (entry: Entry, attribute: string): string[] =>
  valuesOf(entry, attribute).map((each) => (Buffer.isBuffer(each) ? each.toString('utf8') : String(each)))

/** Why the directory could not be asked, in a sentence for the audit: never the library's bind detail. */
function failureOf(error: unknown, settings: LdapSettings): string {
  const where = settings.urls.join(', ')
  if (error instanceof InvalidCredentialsError)
    return `the directory (${where}) refused the service account (adminAuth.ldap.bindDn and its password)`
  const raw = (error as { code?: unknown }).code
  const code = typeof raw === 'string' ? raw : ''
  const message = (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? ''
  if (/CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY/i.test(code) || /certificate/i.test(message))
    return `TLS with the directory (${where}) failed: ${code === '' ? message : code}`
  if (code !== '') return `cannot reach the directory (${where}): ${code}`
  if (/timed out|timeout/i.test(message)) return `the directory (${where}) did not answer in time`
  return `the directory (${where}) answered with an error: ${message}`
}

/** Refusals whose times set the pace of the others. */
const PACE_WINDOW = 64
/** The quantile of their times every refusal waits for. */
const PACE_QUANTILE = 0.9

/**
 * The pace of refusals: an unknown name, a wrong password and a disabled account ask the directory
 * for slightly different work (no entry; an entry and a refused bind; an entry and an accepted
 * bind), so each refusal is answered no sooner than a whole number of milliseconds past the 90th
 * percentile of the last 64 refusals' times (at most `bound` ms), counted from its start. Timers
 * fire on whole milliseconds: every refusal waits for the same deadline, however long its own work
 * took, and never for less than a millisecond, so the timer's rounding falls on all alike.
 * Waiting costs no connection and no CPU.
 */
export function createRefusalPace(bound: number) {
  const recent: number[] = []
  let next = 0
  return {
    /** Records a refusal that took `took` ms, and waits out the rest of the pace. */
    async pad(took: number): Promise<void> {
      recent[next] = took
      next = (next + 1) % PACE_WINDOW
      const sorted = [...recent].sort((a, b) => a - b)
      const slow = sorted[Math.floor((sorted.length - 1) * PACE_QUANTILE)] ?? 0
      const pace = Math.min(bound, Math.ceil(slow) + 1)
      if (took < pace) await new Promise((resolve) => setTimeout(resolve, pace - took))
    },
  }
}

export interface LdapDirectory extends Directory {
  /** Closes the idle connections. */
  close(): void
}

/** The directory port for `adminAuth.ldap`; nothing is connected until the first question. */
export function createLdapDirectory(settings: LdapSettings): LdapDirectory {
  const searches = createConnectionPool(settings.poolSize, () => openConnection(settings, true))
  const binds = createConnectionPool(settings.poolSize, () => openConnection(settings, false))
  const refusals = createRefusalPace(settings.timeout)
  const identityIsDn = settings.identityAttribute.toLowerCase() === 'dn'
  const groupAttribute = 'attribute' in settings.groups ? settings.groups.attribute : null
  const attributes = [
    settings.usernameAttribute,
    'userAccountControl',
    ...(identityIsDn ? [] : [settings.identityAttribute]),
    ...(groupAttribute === null ? [] : [groupAttribute]),
  ]
  // A name no entry has, below the search base: what an unknown name's bind is made against.
  const nowhere = `${settings.usernameAttribute}=flowadmin-no-such-entry-${randomUUID()},${settings.userSearch.base}`

  /**
   * Runs `work` within the time bound, with connections leased from the pools: each given back
   * when the work ends (closed when it failed), all closed when the bound passes first.
   */
  async function bounded<T>(
    work: (lease: (pool: ConnectionPool) => Promise<Connection>) => Promise<T>,
  ): Promise<DirectoryAnswer<T>> {
    const leased = new Map<Connection, ConnectionPool>()
    let late = false
    const lease = async (pool: ConnectionPool) => {
      const client = await pool.acquire()
      if (late) {
        pool.release(client, false)
        throw new Error('past the time bound')
      }
      leased.set(client, pool)
      return client
    }
    const giveBack = (healthy: boolean) => {
      for (const [client, pool] of leased) pool.release(client, healthy)
      leased.clear()
    }
    let timer: NodeJS.Timeout | undefined
    const deadline = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), settings.timeout)
    })
    const done = work(lease).then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    )
    const outcome = await Promise.race([done, deadline])
    clearTimeout(timer)
    if (outcome === 'late') {
      late = true
      giveBack(false)
      return {
        ok: false,
        error: {
          message: `the directory (${settings.urls.join(', ')}) did not answer within ${settings.timeout} ms`,
        },
      }
    }
    giveBack(outcome.ok)
    return outcome.ok ? outcome : { ok: false, error: { message: failureOf(outcome.error, settings) } }
  }

  /** The one entry named `username` (searched with the service account), or null. */
  async function search(connection: Connection, username: string): Promise<Entry | null> {
    const { searchEntries } = await connection.client.search(settings.userSearch.base, {
      scope: 'sub',
      filter: userFilter(settings.userSearch.filter, username),
      attributes,
      explicitBufferAttributes: identityIsDn ? [] : [settings.identityAttribute],
      sizeLimit: SEARCH_LIMIT,
    })
    return searchEntries.length === 1 ? (searchEntries[0] as Entry) : null
  }

  /** The entry's groups: each group's DN and name. */
  async function groupsOf(connection: Connection, entry: Entry): Promise<string[]> {
    const groups = settings.groups
    const dns =
      'attribute' in groups
        ? textsOf(entry, groups.attribute).map((dn) => ({ dn, names: [firstRdnValue(dn)] }))
        : (
            await connection.client.search(groups.base, {
              scope: 'sub',
              filter: groupFilter(groups.filter, entry.dn),
              attributes: ['cn'],
              sizeLimit: GROUP_LIMIT,
            })
          ).searchEntries.map((group) => ({ dn: group.dn, names: textsOf(group as Entry, 'cn') }))
    return dns.flatMap(({ dn, names }) => [dn, ...names])
  }

  /** The person an entry names, their groups read unless the account is disabled. */
  async function personOf(connection: Connection, entry: Entry): Promise<DirectoryPerson> {
    const username = textsOf(entry, settings.usernameAttribute)[0]
    const value = identityIsDn ? entry.dn : valuesOf(entry, settings.identityAttribute)[0]
    if (username === undefined || value === undefined || value.length === 0)
      throw new Error(
        `the entry ${entry.dn} has no ${username === undefined ? settings.usernameAttribute : settings.identityAttribute} (adminAuth.ldap.${username === undefined ? 'usernameAttribute' : 'identityAttribute'})`,
      )
    const identity = Buffer.isBuffer(value) ? value.toString('hex') : String(value).toLowerCase()
    const control = Number.parseInt(textsOf(entry, 'userAccountControl')[0] ?? '0', 10)
    const disabled = Number.isSafeInteger(control) && (control & ACCOUNT_DISABLED) !== 0
    return { identity, username, disabled, groups: disabled ? [] : await groupsOf(connection, entry) }
  }

  /** A bind as `dn` with `password`: true when the directory accepts it. */
  async function bind(connection: Connection, dn: string, password: string): Promise<boolean> {
    try {
      await connection.client.bind(dn, password)
      return true
    } catch (error) {
      if (error instanceof InvalidCredentialsError) return false
      throw error
    }
  }

  return {
    async authenticate(username, password) {
      const started = performance.now()
      const answer = await bounded(async (lease) => {
        const service = await lease(searches)
        const entry = await search(service, username)
        // An empty password would make an unauthenticated bind, which directories accept: never sent.
        const dn = entry !== null && password !== '' ? entry.dn : nowhere
        const accepted = await bind(await lease(binds), dn, password === '' ? '-' : password)
        if (entry === null || dn === nowhere || !accepted) return null
        return personOf(service, entry)
      })
      if (answer.ok && (answer.value === null || answer.value.disabled))
        await refusals.pad(performance.now() - started)
      return answer
    },

    find: (username) =>
      bounded(async (lease) => {
        const service = await lease(searches)
        const entry = await search(service, username)
        return entry === null ? null : personOf(service, entry)
      }),

    close() {
      searches.close()
      binds.close()
    },
  }
}
