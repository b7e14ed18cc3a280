import { type Grant, grantWord } from '../access/grants.js'
import type { PasswordVerifier } from '../ports/index.js'
import { toPermissionList } from './permissions.js'

/** A configured user. `passwordHash` is whatever the verifier understands (argon2id in the server). */
export interface User {
  username: string
  passwordHash: string
  /**
   * Their rights as words (see access/grants.ts): their permissions, which hold everywhere, and a
   * word for each of their grants.
   */
  permissions: string[]
}

/** A configured user as settings give it: permissions (everywhere), grants, or both. */
export interface UserOptions {
  username: string
  password: string
  permissions?: string | readonly string[] | undefined
  /** Roles on scopes (everywhere, flowadmin, a group). */
  grants?: readonly Grant[] | undefined
}

/** A configured user's rights as words: their permissions, then their grants'. */
export const rightsOfUser = (user: Pick<UserOptions, 'permissions' | 'grants'>): string[] => [
  ...toPermissionList(user.permissions),
  ...(user.grants ?? []).map(grantWord),
]

/**
 * The configured users: one map for the life of the core, refilled in place, so every part that
 * holds it sees a reload. The verifier is told the users' hashes at the start and at each change.
 */
export function createUsers(verifier: PasswordVerifier, list: readonly UserOptions[]) {
  const users = new Map<string, User>()
  const fill = (list: readonly UserOptions[]) => {
    verifier.useHashes?.(list.map((user) => user.password))
    users.clear()
    for (const user of list) {
      users.set(user.username, {
        username: user.username,
        passwordHash: user.password,
        permissions: rightsOfUser(user),
      })
    }
  }
  fill(list)
  const current: ReadonlyMap<string, User> = users

  return {
    users: current,
    /**
     * Makes `list` the users, once `purge` has ended the tokens of the users it leaves out (given
     * the names kept). The store work comes first: when it fails, the users stay as they were.
     * A list that removes nobody needs no purge.
     */
    async replace<T>(
      list: readonly UserOptions[],
      purge: (kept: ReadonlySet<string>) => Promise<T[]>,
    ): Promise<T[]> {
      const kept = new Set(list.map((user) => user.username))
      const removesSomeone = [...users.keys()].some((username) => !kept.has(username))
      const purged = removesSomeone ? await purge(kept) : []
      fill(list)
      return purged
    },
  }
}
