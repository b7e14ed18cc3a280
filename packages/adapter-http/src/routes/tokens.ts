import { SIGN_IN_METHODS, type TokenView } from '@flowadmin/core'
import { Hono } from 'hono'
import * as v from 'valibot'
import { requirePermission, requirePerson } from '../auth.js'
import type { AppEnv, RouteDeps } from '../env.js'
import { emptyResponse, oauthError, signedInRefusal, toResponse } from '../errors.js'
import { readFields } from '../fields.js'
import { noStore } from '../no-store.js'
import {
  describe,
  describeTemplates,
  json,
  NO_STORE,
  noStoreTooLarge,
  oauthErrorContent,
  signedInAnswers,
} from '../openapi.js'
import { CreateTokenRequestSchema, NullableTime, Permissions, Time } from '../schemas.js'
import { describeUserAgent } from '../user-agent.js'

/** A public token id as the core makes them; anything else names no token. */
const TOKEN_ID = /^[A-Za-z0-9_-]{1,64}$/

const iso = (time: number | null) => (time === null ? null : new Date(time).toISOString())

/** A token as the inventory shows it ({@link inventoryEntry}). */
const TokenInfo = v.pipe(
  v.strictObject({
    id: v.pipe(
      v.string(),
      v.description('Public id: names the token for `DELETE /auth/tokens/{id}`; not a secret.'),
    ),
    user: v.string(),
    kind: v.pipe(
      v.picklist(['session', 'api']),
      v.description('`session`: from a login; `api`: a named API token.'),
    ),
    name: v.pipe(v.nullable(v.string()), v.description('The name of an API token; null for a session.')),
    client_id: v.string(),
    audience: v.pipe(
      v.string(),
      v.description(
        'Whom it is for: `flowadmin` (this API), or the id of the one resource server it works at.',
      ),
    ),
    scope: v.pipe(
      Permissions,
      v.description('What it was granted; it acts with this ∩ its user’s permissions now.'),
    ),
    created_at: Time,
    expires_at: NullableTime('null: never expires.'),
    last_used_at: NullableTime('Recorded at most once a minute; null: never used.'),
    last_address: v.nullable(v.string()),
    agent: v.pipe(
      v.nullable(v.string()),
      v.description(
        'The browser or tool that asked for it, from its User-Agent, in a few words ("Firefox 133 on Linux", "curl 8.5.0"); null when it named none.',
      ),
    ),
    current: v.pipe(v.boolean(), v.description('True for the token of this request.')),
    sign_in: v.pipe(
      v.nullable(v.picklist(SIGN_IN_METHODS)),
      v.description(
        'How the person signed in for this session: `password` (the password alone), `password_totp` (password and an authenticator code), `password_recovery_code` (password and a recovery code), `passkey`, or `provider` (single sign-on; see `provider`). null for an API token and for a session from before flowadmin recorded it.',
      ),
    ),
    provider: v.optional(
      v.pipe(
        v.string(),
        v.description(
          'The identity provider or the directory its owner signed in with (the label of `adminAuth.oidc` or `adminAuth.ldap`); absent for a token of a user of the settings.',
        ),
      ),
    ),
  }),
  v.metadata({ ref: 'TokenInfo' }),
)

/** `POST /auth/tokens` 201: the token, shown this once. */
const CreatedToken = v.strictObject({
  id: v.string(),
  name: v.string(),
  token: v.pipe(v.string(), v.regex(/^fa_/), v.description('The bearer token, shown this once.')),
  scope: Permissions,
  audience: v.string(),
  expires_at: NullableTime('null: never expires.'),
})

const TOKEN_ID_PARAMETER = {
  name: 'id',
  in: 'path' as const,
  required: true,
  description: 'The `id` from `GET /auth/tokens`.',
  schema: { type: 'string' as const, pattern: TOKEN_ID.source },
  examples: { unknown: { summary: 'An id no token has (404)', value: 'no-such-id' } },
}

const userQuery = (required: boolean, description: string) => ({
  name: 'user',
  in: 'query' as const,
  required,
  description,
  schema: { type: 'string' as const, minLength: 1 },
  examples: {
    everyone: { summary: 'Every user (needs `*`)', value: '*' },
    reader: { summary: 'One user', value: 'reader' },
  },
})

/** A token's entry in the inventory, as the API and the CLI show it: never the token or its hash. */
export function inventoryEntry(view: TokenView) {
  return {
    id: view.id,
    user: view.user,
    kind: view.kind,
    name: view.name,
    client_id: view.clientId,
    audience: view.audience,
    scope: view.scope,
    created_at: iso(view.createdAt),
    expires_at: iso(view.expiresAt),
    last_used_at: iso(view.lastUsedAt),
    last_address: view.lastAddress,
    agent: view.agent,
    current: view.current,
    sign_in: view.signIn,
    ...(view.provider !== null && { provider: view.provider }),
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

  routes.get(
    '/auth/tokens',
    describe({
      operationId: 'listTokens',
      summary: 'Sessions and API tokens: the caller’s own, one user’s, or everyone’s',
      description:
        'Any authenticated caller sees their own unexpired tokens; `?user=<name>` (another user) or ' +
        '`?user=*` (everyone) needs `*`. Never shows a token or its hash.',
      tags: ['auth'],
      parameters: [userQuery(false, 'A username, or `*` for every user. Absent: the caller.')],
      responses: {
        200: {
          description: 'The tokens, oldest first.',
          ...NO_STORE,
          content: json(v.strictObject({ tokens: v.array(TokenInfo) })),
        },
        ...signedInAnswers(),
      },
    }),
    noStore,
    signedIn,
    async (c) => {
      const listed = await core.tokens.list(c.get('principal'), c.req.query('user') ?? null, c.get('address'))
      if (!listed.ok) return signedInRefusal(listed.error)
      return c.json({ tokens: listed.value.map(inventoryEntry) })
    },
  )

  routes.post(
    '/auth/tokens',
    describe({
      operationId: 'createApiToken',
      summary: 'Create a named API token for the caller',
      description:
        'Needs a user’s token. The scope must lie within the caller’s rights now (default: those ' +
        'rights); the lifetime defaults to `adminAuth.apiTokens.expiryTime` (90 days) and may not exceed ' +
        '`maxExpiryTime`; `expires_in: null` (never) only when `allowNoExpiry` is set. The token, ' +
        '`fa_…`, is in this answer only.',
      tags: ['auth'],
      requestBody: {
        required: true,
        content: json(CreateTokenRequestSchema, {
          ci: {
            summary: 'A read-only token for an hour',
            value: { name: 'ci', scope: 'read', expires_in: 3600 },
          },
          unnamed: { summary: 'No name (400)', value: { scope: 'read' } },
        }),
      },
      responses: {
        201: {
          description: 'The new token, shown this once.',
          ...NO_STORE,
          content: json(CreatedToken),
        },
        400: {
          description:
            'Not a JSON object, `name` missing, empty or too long, `expires_in` not allowed, an `audience` that is neither `flowadmin` nor a configured resource server, or a scope beyond the caller’s rights.',
          ...NO_STORE,
          content: oauthErrorContent(['invalid_request', 'invalid_scope']),
        },
        413: noStoreTooLarge('oauth'),
        ...signedInAnswers(),
      },
    }),
    noStore,
    requirePerson(deps),
    async (c) => {
      const person = c.get('person')
      const fields = await readFields(
        c,
        deps.maxBodyBytes,
        ['json'],
        CreateTokenRequestSchema,
        'oauth',
        'field',
      )
      if (!fields.ok) return fields.error
      const { name, scope, expires_in, audience } = fields.value
      const created = await core.tokens.create(
        person,
        {
          name,
          scope,
          expiresIn: expires_in,
          audience,
          agent: describeUserAgent(c.req.header('user-agent')),
        },
        c.get('address'),
      )
      if (!created.ok) return signedInRefusal(created.error)
      const { view, token } = created.value
      return c.json(
        {
          id: view.id,
          name: view.name,
          token,
          scope: view.scope,
          audience: view.audience,
          expires_at: iso(view.expiresAt),
        },
        201,
      )
    },
  )

  routes.delete(
    '/auth/tokens',
    describe({
      operationId: 'revokeUserTokens',
      summary: 'End every token of a user (sign out everywhere)',
      description: 'One’s own (`?user=<own name>`), anyone’s with `*`, or everyone’s (`?user=*`) with `*`.',
      tags: ['auth'],
      parameters: [userQuery(true, 'Whose tokens end.')],
      responses: {
        200: {
          description: 'How many tokens ended.',
          content: json(v.strictObject({ revoked: v.pipe(v.number(), v.integer(), v.minValue(0)) })),
        },
        400: {
          description: '`user` missing or empty.',
          ...NO_STORE,
          content: oauthErrorContent(['invalid_request']),
        },
        ...signedInAnswers(),
      },
    }),
    noStore,
    signedIn,
    async (c) => {
      const user = c.req.query('user')
      if (user === undefined || user === '') {
        return toResponse(oauthError(400, 'invalid_request', 'Missing required parameter: user'))
      }
      const ended = await core.tokens.revokeUser(c.get('principal'), user, c.get('address'))
      if (!ended.ok) return signedInRefusal(ended.error)
      return c.json({ revoked: ended.value })
    },
  )

  routes.delete(
    '/auth/tokens/*',
    describeTemplates({
      '/auth/tokens/{id}': {
        operationId: 'revokeTokenById',
        summary: 'End one session or API token by its id',
        description: 'One’s own, or any with `*`. Another user’s token without `*` is as unknown: 404.',
        tags: ['auth'],
        parameters: [TOKEN_ID_PARAMETER],
        responses: {
          204: { description: 'Ended. Empty body.' },
          404: { description: 'No such token that the caller may end. Empty body.' },
          ...signedInAnswers(),
        },
      },
    }),
    noStore,
    signedIn,
    async (c) => {
      const id = c.req.path.startsWith(prefix) ? c.req.path.slice(prefix.length) : ''
      if (!TOKEN_ID.test(id)) return emptyResponse(404)
      const ended = await core.tokens.revoke(c.get('principal'), id, c.get('address'))
      if (!ended.ok) return signedInRefusal(ended.error)
      return emptyResponse(204)
    },
  )

  return routes
}
