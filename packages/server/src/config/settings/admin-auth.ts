// `adminAuth`: who may sign in and how (passwords, single sign-on, the directory, second factors, passkeys), the
// programs that ask about tokens, and the bounds of sessions, tokens and the login queue.

import type { Grant, RoleOptions } from '@flowadmin/core'
import { DEFAULT_API_TOKENS } from '@flowadmin/core'
import * as v from 'valibot'
import { SettingsError } from '../../errors.js'
import { roles } from './access.js'
import { type FieldProblem, onOff, permissions, strictObject, text, whole } from './fields.js'
import { type LdapSettings, ldap, ldapOf } from './ldap.js'
import { type MfaSettings, mfa, mfaOf } from './mfa.js'
import { type OidcSettings, oidc, oidcOf } from './oidc.js'
import { resourceServers } from './resource-servers.js'
import { users } from './users.js'
import { type WebAuthnSettings, webauthn, webauthnOf } from './webauthn.js'

export interface AdminAuthSettings {
  /** `credentials` (passwords) or `strategy` (Node-RED's word for a sign-in elsewhere). */
  type: 'credentials' | 'strategy'
  /** Empty when everyone signs in with the identity provider. */
  users: Array<{
    username: string
    password: string
    permissions?: string | string[] | undefined
    grants?: Grant[] | undefined
  }>
  /** Roles beside the built-in ones (or replacing one of them): each role's permissions and lifetime. */
  roles?: Record<string, RoleOptions> | undefined
  /** Single sign-on with the organisation's OpenID provider. */
  oidc?: OidcSettings | undefined
  /** The people of the organisation's directory (LDAP, Active Directory). */
  ldap?: LdapSettings | undefined
  default?: { permissions: string | string[] } | undefined
  sessionExpiryTime?: number | undefined
  clients?: string[] | undefined
  throttle?:
    | {
        windowSeconds?: number | undefined
        maxFailuresPerUser?: number | undefined
        maxFailuresPerAddress?: number | undefined
        inFlightAllowance?: number | undefined
        knownClientDays?: number | undefined
      }
    | undefined
  /** Lifetimes of named API tokens, in seconds. */
  apiTokens?:
    | {
        expiryTime?: number | undefined
        maxExpiryTime?: number | undefined
        allowNoExpiry?: boolean | undefined
      }
    | undefined
  /** Bounds of the queue in front of password verification; by default derived from its measured rate. */
  loginQueue?: { maxWaiting?: number | undefined; maxWaitingKnown?: number | undefined } | undefined
  /** Programs (Node-RED instances) that ask about tokens: an id and a secret's hash each. */
  resourceServers?:
    | Array<{
        id: string
        secret: string
        redirectUris?: string[] | undefined
        fleet?: boolean | undefined
        sharedAudience?: boolean | undefined
      }>
    | undefined
  /** People's second factors, with the key resolved (from the file or the environment); absent: none. */
  mfa?: MfaSettings | undefined
  /** Passkeys: the relying party (its id, name and origins); absent: no passkeys. */
  webauthn?: WebAuthnSettings | undefined
}

/** A hundred years: the longest an API token may be allowed to live. */
const MAX_API_TOKEN_SECONDS = 100 * 365 * 86_400

export const adminAuth = strictObject({
  type: v.optional(
    v.picklist(['credentials', 'strategy'], 'must be "credentials" (passwords) or "strategy" (oidc)'),
  ),
  users: v.optional(users),
  roles: v.optional(roles),
  oidc: v.optional(oidc),
  ldap: v.optional(ldap),
  default: v.optional(strictObject({ permissions })),
  sessionExpiryTime: v.optional(whole(1, 2_147_483_647)),
  clients: v.optional(v.array(text('a client id'), 'must be a list of client ids')),
  throttle: v.optional(
    strictObject({
      windowSeconds: v.optional(whole(1, 31_536_000)),
      maxFailuresPerUser: v.optional(whole(1, 1_000_000)),
      maxFailuresPerAddress: v.optional(whole(1, 1_000_000)),
      inFlightAllowance: v.optional(whole(1, 1_000)),
      knownClientDays: v.optional(whole(0, 3_650)),
    }),
  ),
  resourceServers: v.optional(resourceServers),
  mfa: v.optional(mfa),
  webauthn: v.optional(webauthn),
  loginQueue: v.optional(
    strictObject({
      maxWaiting: v.optional(whole(0, 100_000)),
      maxWaitingKnown: v.optional(whole(0, 100_000)),
    }),
  ),
  apiTokens: v.optional(
    v.pipe(
      strictObject({
        expiryTime: v.optional(whole(1, MAX_API_TOKEN_SECONDS)),
        maxExpiryTime: v.optional(whole(1, MAX_API_TOKEN_SECONDS)),
        allowNoExpiry: v.optional(onOff),
      }),
      v.check(
        ({ expiryTime, maxExpiryTime }) =>
          (expiryTime ?? DEFAULT_API_TOKENS.expiryTime) <=
          (maxExpiryTime ?? DEFAULT_API_TOKENS.maxExpiryTime),
        'expiryTime must not be longer than maxExpiryTime',
      ),
    ),
  ),
})

/**
 * `adminAuth` as the server uses it: users always a list, the type named, the secrets taken from
 * the environment when the file has none. Refuses a scheme with no way to sign in.
 */
export function adminAuthOf(
  parsed: v.InferOutput<typeof adminAuth>,
  source: string,
  baseDir: string,
): AdminAuthSettings {
  const { oidc: sso, ldap: directory, users, type, mfa, webauthn, ...rest } = parsed
  const problem: FieldProblem = (field, message) =>
    new SettingsError(`${source}: adminAuth${field}: ${message}`)
  if (users === undefined && sso === undefined && directory === undefined) {
    throw problem(
      '',
      'list users (adminAuth.users), configure single sign-on (adminAuth.oidc) or a directory (adminAuth.ldap), or several',
    )
  }
  if (type === 'credentials' && users === undefined && directory === undefined) {
    throw problem(
      '.users',
      'is required when type is "credentials" (or adminAuth.ldap); for single sign-on alone, omit type or set it to "strategy"',
    )
  }
  if (type === 'strategy' && sso === undefined) throw problem('.oidc', 'is required when type is "strategy"')
  const oidcSettings = sso === undefined ? undefined : oidcOf(sso, problem)
  const ldapSettings = directory === undefined ? undefined : ldapOf(directory, baseDir, problem)
  const mfaSettings = mfaOf(mfa, problem)
  const webauthnSettings = webauthn === undefined ? undefined : webauthnOf(webauthn, problem)
  return {
    ...rest,
    ...(mfaSettings !== undefined && { mfa: mfaSettings }),
    ...(webauthnSettings !== undefined && { webauthn: webauthnSettings }),
    type: type ?? (users === undefined && directory === undefined ? 'strategy' : 'credentials'),
    users: users ?? [],
    ...(oidcSettings !== undefined && { oidc: oidcSettings }),
    ...(ldapSettings !== undefined && { ldap: ldapSettings }),
  }
}
