// `adminAuth.oidc`: single sign-on with the organisation's OpenID provider.
import type { GroupRights } from '@flowadmin/core'
import * as v from 'valibot'
import { groupRights } from './access.js'
import { type FieldProblem, issueOf, LOOPBACK_HOSTS, onOff, strictObject, text, whole } from './fields.js'

/** `adminAuth.oidc`, with the client secret resolved (from the file or the environment). */
export interface OidcSettings {
  issuer: string
  clientId: string
  clientSecret: string
  label: string
  /** Default `preferred_username`. */
  usernameClaim?: string | undefined
  /** Default `openid profile email`. */
  scope?: string | undefined
  /** Default: the origin the browser used, then `<httpAdminRoot>/auth/strategy/callback`. */
  redirectUri?: string | undefined
  /** Default 28800 (eight hours). */
  maxSessionSeconds?: number | undefined
  apiTokensOutliveSessions?: boolean | undefined
  permissions: { claim: string; map: Record<string, GroupRights> }
}

/** Where the client secret comes from when the settings file does not hold it. */
export const OIDC_SECRET_ENV = 'FLOWADMIN_OIDC_CLIENT_SECRET'
export const DEFAULT_OIDC_LABEL = 'Sign in with single sign-on'

/** Why a URL of the identity provider's settings is unusable, or null: https, or http on loopback. */
function providerUrlProblem(text: string): string | null {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return 'must be a URL such as "https://id.example.com/realms/ops"'
  }
  if (url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))) {
    return url.username === '' && url.password === '' && url.hash === ''
      ? null
      : 'must not hold credentials or a #fragment'
  }
  return 'must be an https URL (http only on 127.0.0.1, ::1 or localhost)'
}

export const oidc = strictObject({
  issuer: v.pipe(text('the provider’s issuer URL'), issueOf(providerUrlProblem)),
  clientId: text('the client id registered at the provider'),
  clientSecret: v.optional(text(`the client secret, or set ${OIDC_SECRET_ENV}`)),
  label: v.optional(text('the sign-in button’s label')),
  usernameClaim: v.optional(text('a claim name')),
  scope: v.optional(
    v.pipe(
      text('scopes separated by spaces'),
      v.check((scope) => scope.split(' ').includes('openid'), 'must include openid'),
    ),
  ),
  redirectUri: v.optional(v.pipe(text('a URL'), issueOf(providerUrlProblem))),
  maxSessionSeconds: v.optional(whole(60, 31_536_000)),
  apiTokensOutliveSessions: v.optional(onOff),
  permissions: strictObject({
    claim: text('the claim that lists the person’s groups, e.g. "groups"'),
    map: v.pipe(
      v.record(v.string(), groupRights, 'must map group names to permissions and grants'),
      v.check((map) => Object.keys(map).length > 0, 'must map at least one group'),
    ),
  }),
})

/** `adminAuth.oidc` as the server uses it: the client secret from the file, else the environment. */
export function oidcOf(parsed: v.InferOutput<typeof oidc>, problem: FieldProblem): OidcSettings {
  const clientSecret = parsed.clientSecret ?? process.env[OIDC_SECRET_ENV]
  if (clientSecret === undefined || clientSecret === '') {
    throw problem(
      '.oidc.clientSecret',
      `is required: set it here or in the environment as ${OIDC_SECRET_ENV}`,
    )
  }
  return { ...parsed, clientSecret, label: parsed.label ?? DEFAULT_OIDC_LABEL }
}
