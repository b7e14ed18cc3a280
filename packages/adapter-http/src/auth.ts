import {
  type AudienceOptions,
  err,
  ok,
  type Principal,
  type Result,
  type UserPrincipal,
} from '@flowadmin/core'
import type { Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import type { AppEnv, RouteDeps } from './env.js'
import { errorAnswerOf, toResponse } from './errors.js'

// RFC 6750 b64token: the characters a bearer token may have.
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i

/**
 * The token of an `Authorization` header: null when there is no header, '' when the header is
 * not a well-formed Bearer credential (another scheme, nothing after `Bearer`), which the core
 * treats as an invalid token.
 */
export function bearerTokenOf(header: string | undefined): string | null {
  if (header === undefined) return null
  return BEARER.exec(header)?.[1] ?? ''
}

/** Authenticates the caller and checks `permission`: who it is and from where, or the answer refusing it. */
async function admit(
  c: Context,
  deps: RouteDeps,
  permission: string | readonly string[],
  options: AudienceOptions,
): Promise<Result<{ principal: Principal; address: string }, Response>> {
  const token = bearerTokenOf(c.req.header('Authorization'))
  const address = deps.clientAddress(c)
  const authorized = await deps.core.authorize(token, permission, address, options)
  if (!authorized.ok) return err(toResponse(errorAnswerOf(authorized.error, { tokenSent: token !== null })))
  return ok({ principal: authorized.value, address })
}

/**
 * Authenticates the caller and checks `permission` (or each of several, all needed) before
 * anything else runs (the body is not read, the module not looked up). Sets `principal` and
 * `address` for the handler. Only tokens for flowadmin are accepted, unless `options` says any
 * audience (see AudienceOptions).
 */
export function requirePermission(
  deps: RouteDeps,
  permission: string | readonly string[],
  options: AudienceOptions = {},
) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const admitted = await admit(c, deps, permission, options)
    if (!admitted.ok) return admitted.error
    c.set('principal', admitted.value.principal)
    c.set('address', admitted.value.address)
    await next()
  })
}

/** The variables of a route for a person: `person`, the principal as a user's. */
export type PersonEnv = AppEnv & { Variables: { person: UserPrincipal } }

/**
 * A person signed in with a token of theirs: any caller the credentials let in, but one let in by
 * default permissions alone (no token) is refused as unauthenticated (401, a bare challenge). Sets
 * `person` besides `principal` and `address`. What only the person's own session may do, the core
 * checks.
 */
export function requirePerson(deps: RouteDeps) {
  return createMiddleware<PersonEnv>(async (c, next) => {
    const admitted = await admit(c, deps, '', {})
    if (!admitted.ok) return admitted.error
    const { principal, address } = admitted.value
    c.set('principal', principal)
    c.set('address', address)
    if (principal.kind !== 'user')
      return toResponse(errorAnswerOf({ code: 'unauthenticated', reason: 'missing' }))
    c.set('person', principal)
    await next()
  })
}

/**
 * Any caller the credentials let in for whom `holds` is true, else refused as a missing
 * `permission` is (401 `insufficient_scope`; the core's check records `permission.denied`).
 */
function requireWhere(
  deps: RouteDeps,
  permission: string,
  holds: (principal: Principal, address: string, c: Context<AppEnv>) => boolean,
) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const admitted = await admit(c, deps, '', {})
    if (!admitted.ok) return admitted.error
    const { principal, address } = admitted.value
    if (!holds(principal, address, c))
      return toResponse(
        errorAnswerOf(
          { code: 'forbidden', permission },
          { tokenSent: bearerTokenOf(c.req.header('Authorization')) !== null },
        ),
      )
    c.set('principal', principal)
    c.set('address', address)
    await next()
  })
}

/**
 * A caller who may `permission` at the place the request names (`placeOf`: every instance of a
 * group, or one instance): the core's check there (see Core.permitsAt).
 */
export const requirePermissionAt = (
  deps: RouteDeps,
  permission: string,
  placeOf: (c: Context<AppEnv>) => { kind: 'group'; group: string } | { kind: 'instance'; instance: string },
) =>
  requireWhere(deps, permission, (principal, address, c) =>
    deps.core.permitsAt(principal, permission, placeOf(c), address),
  )

/**
 * A caller who may `permission` somewhere: on flowadmin, or at some instance through a grant (see
 * Core.permitsSomewhere).
 */
export const requirePermissionSomewhere = (deps: RouteDeps, permission: string) =>
  requireWhere(deps, permission, (principal, address) =>
    deps.core.permitsSomewhere(principal, permission, address),
  )
