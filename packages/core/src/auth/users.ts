import type { PasswordVerifier } from '../ports/index.js'
import { toPermissionList } from './permissions.js'

/** A configured user. `passwordHash` is whatever the verifier understands (argon2id in the server). */
export interface User {
  username: string
  passwordHash: string
  permissions: string[]
}

/** A configured user as settings give it. */
export interface UserOptions {
  username: string
  password: string
  permissions: string | readonly string[]
}

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
        permissions: toPermissionList(user.permissions),
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
