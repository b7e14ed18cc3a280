// Who holds which role where: every grant of the settings (the users', and the identity
// provider's and the directory's group maps) and every API token's that carries one, each row
// naming its holder, the role (or the permissions given as such), the scope and where it is kept.
import type { GroupRights } from '../auth/sso-groups.js'
import { EVERYWHERE, type Grant, grantWord, parseRightsWord } from './grants.js'
import type { AccessRights } from './rights.js'

/** Who holds a grant: a user of the settings, a group of a map, or an API token. */
export type HolderKind = 'user' | 'identity-provider-group' | 'directory-group' | 'api-token'

/** One row: a role (or permissions given as such) on a scope, and who holds it. */
export interface Holding {
  kind: HolderKind
  /** The username, the group's name, or the API token's name. */
  holder: string
  /** An API token's owner; null for the others. */
  owner: string | null
  /** The role; null when permissions are given as such. */
  role: string | null
  /** The role's permissions now ([] for a role the settings no longer have), or those given. */
  permissions: string[]
  /** `everywhere`, `flowadmin` or a group. */
  on: string
  /** `settings` (the settings file, read again on a reload) or `token` (made over the API). */
  from: 'settings' | 'token'
}

/** Where the grants are: each as the core keeps it. */
export interface HoldingSources {
  users: Iterable<{ username: string; permissions: readonly string[] }>
  /** `adminAuth.oidc.permissions.map`; null without an identity provider. */
  identityProvider: Readonly<Record<string, GroupRights>> | null
  /** `adminAuth.ldap.permissions.map`; null without a directory. */
  directory: Readonly<Record<string, GroupRights>> | null
  /** The API tokens: their name, owner and scope words. */
  apiTokens: Iterable<{ name: string | null; username: string; scope: readonly string[] }>
}

type Holder = Pick<Holding, 'kind' | 'holder' | 'owner' | 'from'>

/**
 * The rows of one holder's words: a row per role word, and one per scope for the permissions given
 * there as such (in the order they first come). `grantsOnly`: a token's permissions everywhere are
 * a ceiling of its owner's rights, not a grant, and are left out.
 */
function rowsOf(
  rights: AccessRights,
  holder: Holder,
  words: readonly string[],
  grantsOnly: boolean,
): Holding[] {
  const rows: Holding[] = []
  const plain = new Map<string, Holding>()
  for (const text of words) {
    const word = parseRightsWord(text)
    if (word === null) continue
    const on = word.scope ?? EVERYWHERE
    if (word.kind === 'role') {
      const permissions = rights.roles().get(word.role)?.permissions ?? []
      rows.push({ ...holder, role: word.role, permissions: [...permissions], on })
      continue
    }
    if (grantsOnly && word.scope === null) continue
    const row = plain.get(on)
    if (row === undefined) {
      const made: Holding = { ...holder, role: null, permissions: [word.permission], on }
      plain.set(on, made)
      rows.push(made)
    } else if (!row.permissions.includes(word.permission)) row.permissions.push(word.permission)
  }
  return rows
}

/** A map's value as words: a permission, or a list of permissions and grants. */
const wordsOfGroup = (rights: GroupRights): string[] =>
  typeof rights === 'string'
    ? [rights]
    : rights.map((each: string | Grant) => (typeof each === 'string' ? each : grantWord(each)))

/**
 * Every grant there is, by holder: the users in the settings' order, then the identity provider's
 * groups, the directory's and the API tokens, each by name.
 */
export function holdingsOf(rights: AccessRights, sources: HoldingSources): Holding[] {
  const rows: Holding[] = []
  for (const user of sources.users)
    rows.push(
      ...rowsOf(
        rights,
        { kind: 'user', holder: user.username, owner: null, from: 'settings' },
        user.permissions,
        false,
      ),
    )
  const maps: Array<[HolderKind, Readonly<Record<string, GroupRights>> | null]> = [
    ['identity-provider-group', sources.identityProvider],
    ['directory-group', sources.directory],
  ]
  for (const [kind, map] of maps)
    for (const group of Object.keys(map ?? {}).sort())
      rows.push(
        ...rowsOf(
          rights,
          { kind, holder: group, owner: null, from: 'settings' },
          wordsOfGroup(map?.[group] ?? []),
          false,
        ),
      )
  const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
  const tokens = [...sources.apiTokens].sort(
    (a, b) => byText(a.name ?? '', b.name ?? '') || byText(a.username, b.username),
  )
  for (const token of tokens)
    rows.push(
      ...rowsOf(
        rights,
        { kind: 'api-token', holder: token.name ?? '', owner: token.username, from: 'token' },
        token.scope,
        true,
      ),
    )
  return rows
}
