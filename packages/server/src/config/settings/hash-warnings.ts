// What the settings hold that works but should be replaced: the warnings a start logs about it.
import { DEFAULT_THROTTLE, isSecretDigest } from '@flowadmin/core'
import type { Settings } from './schema.js'
import { isBcryptHash } from './users.js'

/** `id` as one shell word: as it is when plain, else in single quotes. */
const shellWord = (id: string) => (/^[\w.@%+=,-]+$/.test(id) ? id : `'${id.replace(/'/g, "'\\''")}'`)

/** A number of seconds as people say it: minutes when whole. */
const duration = (seconds: number) => (seconds % 60 === 0 ? `${seconds / 60} minutes` : `${seconds} seconds`)

/**
 * One line for each user whose hash is bcrypt, as Node-RED's settings.js holds it (verified, but
 * argon2id is what flowadmin hashes with), and for each resource server whose secret is a password
 * hash rather than a machine secret's digest: verified, but until its first right call after a
 * start or reload it is throttled like a password, so wrong secrets from the instances' address
 * lock them out. That line names the command that makes a machine secret and the setting to put
 * its digest in.
 */
export function hashWarnings(settings: Settings): string[] {
  const auth = settings.adminAuth
  if (auth === null) return []
  const { windowSeconds, maxFailuresPerUser } = { ...DEFAULT_THROTTLE, ...auth.throttle }
  return [
    ...auth.users
      .filter((user) => isBcryptHash(user.password))
      .map(
        (user) =>
          `user ${user.username}: the password is a bcrypt hash (from Node-RED); it is accepted, but replace it with an argon2id hash from \`flowadmin hash-pw\``,
      ),
    ...(auth.resourceServers ?? []).flatMap((server, index) => {
      if (isSecretDigest(server.secret)) return []
      const setting = `adminAuth.resourceServers[${index}].secret`
      return [
        `resource server ${server.id}: ${setting} is a password hash, so after a start or reload ${maxFailuresPerUser} wrong secrets from the instances' address refuse the right one too, for ${duration(windowSeconds)}. ` +
          `Replace it with a machine secret: run \`flowadmin secret --id ${shellWord(server.id)}\`, give the secret on its first line to the instances (their clientSecret), and set ${setting} to the digest on its second line ("secret": "sha256:…"), then reload`,
      ]
    }),
  ]
}
