import { Hono } from 'hono'
import { createMiddleware } from 'hono/factory'
import * as v from 'valibot'
import { requirePermission } from '../auth.js'
import { readBody } from '../body.js'
import type { AppEnv, RouteDeps } from '../env.js'
import { emptyResponse, errorAnswerOf, oauthBodyError, oauthError, toResponse } from '../errors.js'
import { firstIssueMessage, RevokeRequestSchema, TokenRequestSchema } from '../schemas.js'

/** Token responses are credentials: never cached (RFC 6749 §5.1), whatever their status. */
export const noStore = createMiddleware(async (c, next) => {
  await next()
  c.header('Cache-Control', 'no-store')
  c.header('Pragma', 'no-cache')
})

/**
 * `GET /auth/login` always; `POST /auth/token` and `POST /auth/revoke` only when auth is on
 * (otherwise they do not exist: 404).
 */
export function authRoutes(deps: RouteDeps): Hono<AppEnv> {
  const { core } = deps
  const routes = new Hono<AppEnv>()

  routes.get('/auth/login', (c) => c.json(core.loginScheme()))

  if (!core.authEnabled) return routes

  routes.post('/auth/token', noStore, async (c) => {
    const body = await readBody(c.req.raw, deps.maxBodyBytes, ['form', 'json'], c.env)
    if (!body.ok) return toResponse(oauthBodyError(body.error))
    const fields = v.safeParse(TokenRequestSchema, body.value)
    if (!fields.success)
      return toResponse(oauthError(400, 'invalid_request', firstIssueMessage(fields.issues, 'parameter')))

    const { client_id, grant_type, scope, username, password } = fields.output
    const result = await core.login(
      { clientId: client_id, grantType: grant_type, scope, username, password },
      deps.clientAddress(c),
    )
    if (!result.ok) return toResponse(errorAnswerOf(result.error))
    return c.json({
      access_token: result.value.accessToken,
      expires_in: result.value.expiresIn,
      token_type: 'Bearer',
    })
  })

  // RFC 7009: 200 with no body whether or not anything was revoked, so it reveals nothing.
  routes.post('/auth/revoke', noStore, requirePermission(deps, ''), async (c) => {
    const body = await readBody(c.req.raw, deps.maxBodyBytes, ['form', 'json'], c.env)
    if (!body.ok) return toResponse(oauthBodyError(body.error))
    const fields = v.safeParse(RevokeRequestSchema, body.value)
    if (!fields.success)
      return toResponse(oauthError(400, 'invalid_request', firstIssueMessage(fields.issues, 'parameter')))

    await core.revoke(c.get('principal'), fields.output.token, c.get('address'))
    return emptyResponse(200)
  })

  return routes
}
