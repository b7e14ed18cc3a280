// What the settings hold that works but should be replaced: the warnings a start logs about it.
import { isSecretDigest } from '@flowadmin/core'
import type { Settings } from './schema.js'
import { isBcryptHash } from './users.js'

/**
 * One line for each user whose hash is bcrypt, as Node-RED's settings.js holds it (verified, but
 * argon2id is what flowadmin hashes with), and for each resource server whose secret is a password
 * hash rather than a machine secret's digest (verified, but each start or reload costs one
 * verification, and a password-like secret could be guessed).
 */
export function hashWarnings(settings: Settings): string[] {
  const auth = settings.adminAuth
  if (auth === null) return []
  return [
    ...auth.users
      .filter((user) => isBcryptHash(user.password))
      .map(
        (user) =>
          `user ${user.username}: the password is a bcrypt hash (from Node-RED); it is accepted, but replace it with an argon2id hash from \`flowadmin hash-pw\``,
      ),
    ...(auth.resourceServers ?? [])
      .filter((server) => !isSecretDigest(server.secret))
      .map(
        (server) =>
          `resource server ${server.id}: the secret is a password hash; it is accepted, but replace it with a machine secret: \`flowadmin secret\` prints one and its digest for the settings`,
      ),
  ]
}
