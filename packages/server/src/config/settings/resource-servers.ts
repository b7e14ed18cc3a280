// `adminAuth.resourceServers`: the programs (Node-RED instances) that ask flowadmin about tokens,
// each with an id, a machine secret's digest and the addresses its editors come back to.
import { FLOWADMIN_AUDIENCE, isSecretDigest } from '@flowadmin/core'
import * as v from 'valibot'
import { issueOf, LOOPBACK_HOSTS, onOff, strictObject, text } from './fields.js'
import { BCRYPT_SHAPE, isBcryptHash } from './users.js'

/**
 * A resource server's secret as the settings hold it: the digest of a machine secret from
 * `flowadmin secret` (`sha256:` and 64 lowercase hex digits), or a password hash from before
 * machine secrets (argon2 from `flowadmin hash-pw`, bcrypt from Node-RED), still accepted.
 */
const machineSecret = v.pipe(
  v.string('must be a string: the digest that `flowadmin secret` prints (sha256:…)'),
  v.check(
    (secret) => isSecretDigest(secret) || secret.startsWith('$argon2') || isBcryptHash(secret),
    (issue) => {
      const secret = issue.input as string
      if (secret.startsWith('sha256:'))
        return 'is not a whole digest: sha256: then 64 lowercase hex digits, as `flowadmin secret` prints it'
      if (secret.startsWith('$2')) return BCRYPT_SHAPE
      return 'must be the digest that `flowadmin secret` prints (sha256:…), not the secret itself'
    },
  ),
)

/** Why a resource server id is unusable, or null: it travels in HTTP Basic, before a ":". */
export function resourceServerIdProblem(id: string): string | null {
  if (!/^[\x21-\x7e]+$/.test(id)) return 'must be printable ASCII without spaces (it is sent in HTTP Basic)'
  if (id.includes(':')) return 'must not contain ":" (HTTP Basic separates id and secret with it)'
  if (id.includes('/'))
    return 'must not contain "/" (the trail names an instance <resource server>/<instance>)'
  return null
}

/**
 * Why a resource server's redirect URI is unusable, or null: an absolute http(s) URL without
 * credentials or fragment (RFC 6749 §3.1.2). It is compared exactly, as written.
 */
function redirectUriProblem(text: string): string | null {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return 'must be an absolute URL such as "https://nodered.example/auth/strategy/callback"'
  }
  // The authorization code and the person's session travel to it.
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)))
    return 'must be an https URL (http only on 127.0.0.1, ::1 or localhost): the sign-in’s code is sent to it'
  if (url.username !== '' || url.password !== '' || text.includes('#'))
    return 'must not hold credentials or a #fragment'
  return null
}

const resourceServer = strictObject({
  id: v.pipe(text('a resource server id'), issueOf(resourceServerIdProblem)),
  secret: machineSecret,
  redirectUris: v.optional(
    v.array(
      v.pipe(text('a redirect URI'), issueOf(redirectUriProblem)),
      'must be a list of redirect URIs (where its editors come back after signing in)',
    ),
  ),
  fleet: v.optional(onOff),
  sharedAudience: v.optional(onOff),
})

export const resourceServers = v.pipe(
  v.array(resourceServer, 'must be a list of resource servers ({"id", "secret"})'),
  v.check(
    (servers) => new Set(servers.map((server) => server.id)).size === servers.length,
    'resource server ids must be unique',
  ),
  v.check(
    (servers) => !servers.some((server) => server.id === FLOWADMIN_AUDIENCE),
    `a resource server may not be called ${FLOWADMIN_AUDIENCE}: that names flowadmin's own tokens`,
  ),
)
