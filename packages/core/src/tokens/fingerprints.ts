import type { User } from '../auth/users.js'
import type { Digest } from '../ports/index.js'

/** What the credential fingerprint is a keyed hash of: fixed, so only the key (the password hash) varies. */
const FINGERPRINT_LABEL = 'flowadmin token credential v1'

/**
 * The credential fingerprints of configured users, by password hash: a token records its user's,
 * and is worth nothing once the user's password changes. One keyed hash per credential, not one
 * per request, and known ones answered without waiting. Only the configured users' are kept.
 */
export function createFingerprints(digest: Digest, users: ReadonlyMap<string, User>) {
  const byHash = new Map<string, string>()

  async function of(user: User): Promise<string> {
    const known = byHash.get(user.passwordHash)
    if (known !== undefined) return known
    const fingerprint = await digest.hmacSha256(user.passwordHash, FINGERPRINT_LABEL)
    byHash.set(user.passwordHash, fingerprint)
    prune()
    return fingerprint
  }

  /**
   * Forgets the fingerprints of passwords no configured user has any more, once there are more
   * fingerprints than users: a reload that changes passwords or removes users leaves the map no
   * larger than the users configured, however many reloads there were.
   */
  function prune(): void {
    if (byHash.size <= users.size) return
    const current = new Set<string>()
    for (const user of users.values()) current.add(user.passwordHash)
    for (const hash of byHash.keys()) if (!current.has(hash)) byHash.delete(hash)
  }

  return {
    /** The fingerprint of `user`'s credential, computed once. */
    of,
    /** The fingerprint of `user`'s credential when known, without waiting; undefined when not. */
    known(user: User): string | undefined {
      if (byHash.size > users.size) prune()
      return byHash.get(user.passwordHash)
    },
    /** How many it holds. */
    size: () => byHash.size,
  }
}
