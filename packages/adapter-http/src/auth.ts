import type { AudienceOptions } from '@flowadmin/core'
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

/**
 * Authenticates the caller and checks `permission` before anything else runs (the body is not
 * read, the module not looked up). Sets `principal` and `address` for the handler. Only tokens
 * for flowadmin are accepted, unless `options` says any audience (see AudienceOptions).
 */
export function requirePermission(deps: RouteDeps, permission: string, options: AudienceOptions = {}) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const token = bearerTokenOf(c.req.header('Authorization'))
    const address = deps.clientAddress(c)
    const authorized = await deps.core.authorize(token, permission, address, options)
    if (!authorized.ok) return toResponse(errorAnswerOf(authorized.error, { tokenSent: token !== null }))
    c.set('principal', authorized.value)
    c.set('address', address)
    await next()
  })
}
