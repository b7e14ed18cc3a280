// The trail's part of access: a reload that changed roles, groups or grants is one event naming
// what changed; a live token refused at an instance because its person holds no grant there is an
// event too, once per token and asking client in a while, so an editor or a script that asks again
// and again (every request of theirs is a question) writes one line, not one per request.
import { rightsOfUser, type UserOptions } from '../auth/users.js'
import type { Clock, EventSink } from '../ports/index.js'
import type { GroupRules } from './groups.js'
import type { RoleOptions } from './roles.js'

/** The settings that make rights: the roles, the groups' rules and the users' grants. */
export interface AccessSettings {
  roles?: Readonly<Record<string, RoleOptions>> | undefined
  groups?: GroupRules | undefined
  users: ReadonlyArray<Pick<UserOptions, 'username' | 'permissions' | 'grants'>>
}

/** One user's rights words that a reload added and removed (`role:deployer@line-1`, `read`). */
export interface GrantChange {
  username: string
  added: string[]
  removed: string[]
}

/** What a reload changed: the names of roles and groups added, removed or changed, and grants. */
export interface AccessChanges {
  roles: string[]
  groups: string[]
  grants: GrantChange[]
}

/** The names whose values differ between two records (added, removed or changed), sorted. */
function changedNames(before: Readonly<Record<string, unknown>>, after: Readonly<Record<string, unknown>>) {
  const names = new Set([...Object.keys(before), ...Object.keys(after)])
  return [...names].filter((name) => JSON.stringify(before[name]) !== JSON.stringify(after[name])).sort()
}

/** What differs between two readings of the settings; nothing when they give the same rights. */
export function accessChanges(before: AccessSettings, after: AccessSettings): AccessChanges {
  const wordsOf = (settings: AccessSettings) =>
    new Map(settings.users.map((user) => [user.username, rightsOfUser(user)]))
  const was = wordsOf(before)
  const now = wordsOf(after)
  const grants: GrantChange[] = []
  for (const username of [...new Set([...was.keys(), ...now.keys()])].sort()) {
    const old = was.get(username) ?? []
    const next = now.get(username) ?? []
    const added = next.filter((word) => !old.includes(word))
    const removed = old.filter((word) => !next.includes(word))
    if (added.length > 0 || removed.length > 0) grants.push({ username, added, removed })
  }
  return {
    roles: changedNames(before.roles ?? {}, after.roles ?? {}),
    groups: changedNames(before.groups ?? {}, after.groups ?? {}),
    grants,
  }
}

/** How long a refusal of one token at one asking client is not written again, in ms. */
export const REFUSAL_QUIET_MS = 10 * 60_000
/** Most (token, client) pairs remembered; past it the longest unwritten are forgotten first. */
export const MAX_REMEMBERED = 10_000

/** Who was refused where: the token's id and person, and the client that asked about it. */
export interface ScopeRefusal {
  tokenId: string
  username: string
  /** The asking client: an enrolled instance's (`fleet/press-1`) or a resource server's id. */
  clientId: string
  resourceServer: string
  /** The asking instance's id; null when a resource server asked with its shared secret. */
  instance: string | null
  address: string | null
}

export function createAccessAudit({ events, clock }: { events: EventSink; clock: Clock }) {
  /** When each (token, client) refusal was last written, the longest ago first. */
  const written = new Map<string, number>()
  return {
    /** Writes `access.reloaded` when the reload changed any role, group or grant; says whether. */
    reloaded(before: AccessSettings, after: AccessSettings): boolean {
      const changes = accessChanges(before, after)
      if (changes.roles.length === 0 && changes.groups.length === 0 && changes.grants.length === 0)
        return false
      events.emit({
        type: 'access.reloaded',
        at: clock.now(),
        ...changes,
        username: null,
        clientId: null,
        address: null,
      })
      return true
    },

    /**
     * Writes `access.refused` for a live token that gives its person nothing where the client
     * asked, unless the same token was written refused to the same client in the last
     * REFUSAL_QUIET_MS; says whether it wrote.
     */
    refused(refusal: ScopeRefusal): boolean {
      const now = clock.now()
      const key = `${refusal.tokenId} ${refusal.clientId}`
      const last = written.get(key)
      if (last !== undefined && now - last < REFUSAL_QUIET_MS) return false
      written.delete(key)
      if (written.size >= MAX_REMEMBERED) {
        const oldest = written.keys().next()
        if (!oldest.done) written.delete(oldest.value)
      }
      written.set(key, now)
      const { username, clientId, resourceServer, instance, address } = refusal
      events.emit({ type: 'access.refused', at: now, resourceServer, instance, username, clientId, address })
      return true
    },
  }
}

export type AccessAudit = ReturnType<typeof createAccessAudit>
