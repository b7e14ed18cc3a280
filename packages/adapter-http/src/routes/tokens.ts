import type { TokenView } from '@flowadmin/core'
import { Hono } from 'hono'
import * as v from 'valibot'
import { requirePermission } from '../auth.js'
import { readBody } from '../body.js'
import type { AppEnv, RouteDeps } from '../env.js'
import { emptyResponse, errorAnswerOf, oauthBodyError, oauthError, toResponse } from '../errors.js'
import { CreateTokenRequestSchema, firstIssueMessage } from '../schemas.js'
import { noStore } from './auth.js'

/** A public token id as the core makes them; anything else names no token. */
const TOKEN_ID = /^[A-Za-z0-9_-]{1,64}$/

const iso = (time: number | null) => (time === null ? null : new Date(time).toISOString())

/** A token as the inventory shows it over HTTP: never the token or its hash. */
export function tokenJson(view: TokenView) {
  return {
    id: view.id,
    user: view.user,
    kind: view.kind,
    name: view.name,
    client_id: view.clientId,
    scope: view.scope,
    created_at: iso(view.createdAt),
    expires_at: iso(view.expiresAt),
    last_used_at: iso(view.lastUsedAt),
    last_address: view.lastAddress,
    current: view.current,
  }
}

/**
 * The session inventory and named API tokens: `GET /auth/tokens`, `POST /auth/tokens`,
 * `DELETE /auth/tokens?user=U`, `DELETE /auth/tokens/:id`. Only when auth is on.
 */
export function tokensRoutes(deps: RouteDeps): Hono<AppEnv> {
  const { core } = deps
  const routes = new Hono<AppEnv>()
  if (!core.authEnabled) return routes
  const signedIn = requirePermission(deps, '')
  const prefix = `${deps.basePath}/auth/tokens/`

  routes.get('/auth/tokens', noStore, signedIn, async (c) => {
    const listed = await core.tokens.list(c.get('principal'), c.req.query('user') ?? null, c.get('address'))
    if (!listed.ok) return toResponse(errorAnswerOf(listed.error, { tokenSent: true }))
    return c.json({ tokens: listed.value.map(tokenJson) })
  })

  routes.post('/auth/tokens', noStore, signedIn, async (c) => {
    const principal = c.get('principal')
    if (principal.kind !== 'user')
      return toResponse(errorAnswerOf({ code: 'unauthenticated', reason: 'missing' }))
    const body = await readBody(c.req.raw, deps.maxBodyBytes, ['json'], c.env)
    if (!body.ok) return toResponse(oauthBodyError(body.error))
    const fields = v.safeParse(CreateTokenRequestSchema, body.value)
    if (!fields.success)
      return toResponse(oauthError(400, 'invalid_request', firstIssueMessage(fields.issues, 'field')))
    const { name, scope, expires_in } = fields.output
    const created = await core.tokens.create(
      principal,
      { name, scope, expiresIn: expires_in },
      c.get('address'),
    )
    if (!created.ok) return toResponse(errorAnswerOf(created.error, { tokenSent: true }))
    const { view, token } = created.value
    return c.json(
      { id: view.id, name: view.name, token, scope: view.scope, expires_at: iso(view.expiresAt) },
      201,
    )
  })

  routes.delete('/auth/tokens', noStore, signedIn, async (c) => {
    const user = c.req.query('user')
    if (user === undefined || user === '') {
      return toResponse(oauthError(400, 'invalid_request', 'Missing required parameter: user'))
    }
    const ended = await core.tokens.revokeUser(c.get('principal'), user, c.get('address'))
    if (!ended.ok) return toResponse(errorAnswerOf(ended.error, { tokenSent: true }))
    return c.json({ revoked: ended.value })
  })

  routes.delete('/auth/tokens/*', noStore, signedIn, async (c) => {
    const id = c.req.path.startsWith(prefix) ? c.req.path.slice(prefix.length) : ''
    if (!TOKEN_ID.test(id)) return emptyResponse(404)
    const ended = await core.tokens.revoke(c.get('principal'), id, c.get('address'))
    if (!ended.ok) return toResponse(errorAnswerOf(ended.error, { tokenSent: true }))
    return emptyResponse(204)
  })

  return routes
}
