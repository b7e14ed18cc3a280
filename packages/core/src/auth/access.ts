import { err, ok, type Result } from '../errors.js'
import type { Clock, EventSink } from '../ports/index.js'
import { FLOWADMIN_AUDIENCE } from '../tokens/audience.js'
import { type ProviderLabels, providerOf } from '../tokens/owner.js'
import type { Tokens } from '../tokens/tokens.js'
import { hasPermission, toPermissionList } from './permissions.js'
import { type AccessError, type AudienceOptions, actorOf, type Principal } from './principal.js'

export interface AccessDeps {
  /** false when `adminAuth` is not configured: every request then has every right. */
  authEnabled: boolean
  /** Permissions of requests that carry no token (`adminAuth.default`); absent: refused. */
  anonymous: { permissions: string | readonly string[] } | undefined
  tokens: Tokens
  /** The labels of the identity provider and the directory, where configured. */
  providers: ProviderLabels
  events: EventSink
  clock: Clock
}

/** Who makes a request and what they may do: the bearer token's way in, and its way out. */
export function createAccess({ authEnabled, anonymous, tokens, providers, events, clock }: AccessDeps) {
  const anonymousPermissions = !authEnabled
    ? ['*']
    : anonymous
      ? toPermissionList(anonymous.permissions)
      : null

  /**
   * The principal behind a bearer token (`null` when none was sent). Given the client's
   * address, the token's last use is recorded (at most once a minute). Only a token for
   * flowadmin is accepted, unless `anyAudience` (see AudienceOptions).
   */
  async function authenticate(
    token: string | null,
    address: string | null = null,
    { anyAudience = false }: AudienceOptions = {},
  ): Promise<Result<Principal, AccessError>> {
    if (!authEnabled) return ok({ kind: 'anonymous', permissions: ['*'] })
    if (token === null) {
      return anonymousPermissions === null
        ? err({ code: 'unauthenticated', reason: 'missing' })
        : ok({ kind: 'anonymous', permissions: anonymousPermissions })
    }
    const live = await tokens.authenticate(token, address, anyAudience ? null : FLOWADMIN_AUDIENCE)
    if (live === null) return err({ code: 'unauthenticated', reason: 'invalid' })
    const provider = providerOf(live.record, providers)
    return ok({
      kind: 'user',
      username: live.record.username,
      clientId: live.record.clientId,
      permissions: live.permissions,
      scope: live.record.scope,
      tokenId: live.record.id,
      tokenKind: live.record.kind,
      audience: live.record.audience ?? FLOWADMIN_AUDIENCE,
      signedInAt: live.record.createdAt,
      signIn: live.record.signIn,
      ...(provider !== null && { provider }),
    })
  }

  return {
    authenticate,

    /**
     * Authenticates and checks a permission, or each of several (all needed); a refusal names the
     * first one missing and is recorded as `permission.denied`.
     */
    async authorize(
      token: string | null,
      permission: string | readonly string[],
      address: string,
      options: AudienceOptions = {},
    ): Promise<Result<Principal, AccessError>> {
      const principal = await authenticate(token, address, options)
      if (!principal.ok) return principal
      const needed = typeof permission === 'string' ? [permission] : permission
      const missing = needed.find((one) => !hasPermission(principal.value.permissions, one))
      if (missing === undefined) return principal
      events.emit({
        type: 'permission.denied',
        at: clock.now(),
        permission: missing,
        ...actorOf(principal.value, address),
      })
      return err({ code: 'forbidden', permission: missing })
    },

    /**
     * Revokes a token the caller may revoke; anything else is a silent no-op. A caller whose token
     * is not for flowadmin (a resource server's) may end that token and nothing else.
     */
    async revoke(principal: Principal, token: string, address: string): Promise<void> {
      const caller = {
        username: principal.kind === 'user' ? principal.username : null,
        permissions: principal.permissions,
        onlyToken:
          principal.kind === 'user' && principal.audience !== FLOWADMIN_AUDIENCE
            ? principal.tokenId
            : undefined,
      }
      const outcome = await tokens.revoke(token, caller)
      if (outcome.revoked) {
        events.emit({
          type: 'token.revoked',
          at: clock.now(),
          owner: outcome.record.username,
          id: outcome.record.id,
          ...actorOf(principal, address),
        })
      }
    },
  }
}
