import { hasPermission } from '../auth/permissions.js'
import type { Clock, EventSink, TokenRecord, TokenStore } from '../ports/index.js'

/** Longer bearer values are not tokens of ours: refused without hashing. */
export const MAX_TOKEN_LENGTH = 512

/** How many tokens of one user ended. */
export interface UserCount {
  username: string
  count: number
}

export type RevokeOutcome = { revoked: true; record: TokenRecord } | { revoked: false }

/** Who asks to see or end tokens. */
export interface TokenCaller {
  username: string | null
  permissions: readonly string[]
  /**
   * The token the caller uses, when its audience is not flowadmin (a resource server's token):
   * such a caller may end that token and nothing else.
   */
  onlyToken?: string | undefined
}

const mayManage = (record: TokenRecord, caller: TokenCaller) =>
  caller.onlyToken !== undefined
    ? record.id === caller.onlyToken
    : record.username === caller.username || hasPermission(caller.permissions, '*')

export interface RevocationDeps {
  store: TokenStore
  /** The SHA-256 of a token: what the store keys its record by. */
  hashOf: (token: string) => Promise<string>
  events: EventSink
  clock: Clock
}

/** How tokens end: revoked by whoever may, all of some users at once, or invalidated on use. */
export function createRevocation({ store, hashOf, events, clock }: RevocationDeps) {
  /** Deletes these records; how many were there. */
  async function deleteRecords(records: readonly TokenRecord[]): Promise<number> {
    let count = 0
    for (const record of records) if (await store.delete(record.id)) count++
    return count
  }

  /** Deletes the tokens of a user that `kept` does not select; how many. */
  async function deleteAllBut(username: string, kept: (record: TokenRecord) => boolean): Promise<number> {
    const records = await store.list(username)
    const doomed = records.filter((record) => !kept(record))
    if (doomed.length === records.length) return store.deleteByUser(username)
    return deleteRecords(doomed)
  }

  return {
    deleteRecords,

    /**
     * Revokes `token` when the caller owns it (same user) or holds `*`. Anything else, an unknown
     * token included, is a silent no-op, so the answer reveals nothing about other tokens.
     */
    async revoke(token: string, caller: TokenCaller): Promise<RevokeOutcome> {
      if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) return { revoked: false }
      const record = await store.findByHash(await hashOf(token))
      if (record === null || !mayManage(record, caller)) return { revoked: false }
      return (await store.delete(record.id)) ? { revoked: true, record } : { revoked: false }
    },

    /** Revokes the token with this id when the caller may; another's is as unknown (no-op). */
    async revokeById(id: string, caller: TokenCaller): Promise<RevokeOutcome> {
      const record = await store.findById(id)
      if (record === null || !mayManage(record, caller)) return { revoked: false }
      return (await store.delete(record.id)) ? { revoked: true, record } : { revoked: false }
    },

    /**
     * Deletes every token of the users `which` selects, but those `keep` selects; one entry per
     * user that had any. Tokens of people signed in with the identity provider or the directory
     * are kept so: they are not in the settings' users, and their provider, not the settings, says
     * what they are worth.
     */
    async revokeUsers(
      which: (username: string) => boolean,
      keep: ((record: TokenRecord) => boolean) | null = null,
    ): Promise<UserCount[]> {
      const ended: UserCount[] = []
      for (const username of await store.usernames()) {
        if (!which(username)) continue
        const count = keep !== null ? await deleteAllBut(username, keep) : await store.deleteByUser(username)
        if (count > 0) ended.push({ username, count })
      }
      return ended
    },

    /**
     * Deletes a record whose user is gone or whose credential changed, and records why; false when
     * it was gone already.
     */
    async invalidate(
      record: TokenRecord,
      reason: 'user_removed' | 'credential_changed' | 'name_taken',
      address: string | null,
    ): Promise<boolean> {
      if (!(await store.delete(record.id))) return false
      events.emit({
        type: 'token.invalidated',
        at: clock.now(),
        id: record.id,
        owner: record.username,
        reason,
        username: record.username,
        clientId: record.clientId,
        address,
      })
      return true
    },
  }
}
