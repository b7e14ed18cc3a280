import type { IssuedToken } from '@flowadmin/core'
import { type Context, Hono } from 'hono'
import * as v from 'valibot'
import { requirePermission } from '../auth.js'
import { basicCredentials } from '../basic-credentials.js'
import { bindingOf, clearBinding } from '../binding.js'
import type { AppEnv, RouteDeps } from '../env.js'
import { emptyResponse, errorAnswerOf, oauthError, toResponse } from '../errors.js'
import { readFields } from '../fields.js'
import { noStore } from '../no-store.js'
import {
  describe,
  formOrJson,
  json,
  NO_STORE,
  NO_STORE_HEADERS,
  noStoreTooLarge,
  oauthErrorContent,
  RETRY_AFTER,
  unauthorized,
  use,
} from '../openapi.js'
import { AdminError, OAuthError, RevokeRequestSchema, TokenRequestSchema } from '../schemas.js'
import { describeUserAgent } from '../user-agent.js'

/** The identity provider's sign-in button, as Node-RED announces a strategy's. */
const StrategyButton = v.strictObject({
  type: v.literal('button'),
  label: v.string(),
  url: v.pipe(v.literal('/auth/strategy'), v.description('Below the API’s root.')),
})

/**
 * `GET /auth/login`: `{}` when authentication is off, else the credentials scheme (with the sign-in
 * button beside it as `sso` when single sign-on is configured too), or Node-RED's strategy scheme
 * when only single sign-on is.
 */
const LoginScheme = v.pipe(
  v.union([
    v.strictObject({}),
    v.strictObject({
      type: v.literal('credentials'),
      prompts: v.pipe(
        v.array(
          v.strictObject({
            id: v.picklist(['username', 'password']),
            type: v.picklist(['text', 'password']),
            label: v.string(),
          }),
        ),
        v.description('The inputs a client collects, username then password.'),
      ),
      sso: v.optional(StrategyButton),
    }),
    v.strictObject({ type: v.literal('strategy'), prompts: v.array(StrategyButton) }),
  ]),
  v.metadata({ ref: 'LoginScheme' }),
)

/** `POST /auth/token` 200. */
const TokenResponse = v.strictObject({
  access_token: v.string(),
  expires_in: v.pipe(v.number(), v.integer(), v.minValue(1), v.description('Seconds the token is valid.')),
  token_type: v.literal('Bearer'),
})

/** The token endpoint's 200 (RFC 6749 §5.1), whatever the grant: made through `c`, so it is never stored. */
const tokenAnswer = (c: Context, issued: Pick<IssuedToken, 'accessToken' | 'expiresIn'>): Response =>
  c.json({ access_token: issued.accessToken, expires_in: issued.expiresIn, token_type: 'Bearer' })

/**
 * The one-time code of a single sign-on for a session: from the browser whose cookie started the
 * sign-in, once, within 30 s. The cookie is removed whatever the outcome.
 */
async function exchangeCode(
  c: Context,
  deps: RouteDeps,
  code: string | undefined,
  clientId: string | undefined,
): Promise<Response> {
  const exchange = deps.core.signIn.exchange
  if (exchange === null) return toResponse(oauthError(400, 'unsupported_grant_type', 'No sign-in here'))
  if (code === undefined || code === '')
    return toResponse(oauthError(400, 'invalid_request', 'Missing required parameter: code'))
  if (clientId === undefined || clientId === '')
    return toResponse(oauthError(400, 'invalid_request', 'Missing required parameter: client_id'))
  const agent = describeUserAgent(c.req.header('user-agent'))
  const result = await exchange(bindingOf(c), code, clientId, deps.clientAddress(c), agent)
  c.header('Set-Cookie', clearBinding(c, deps))
  if (!result.ok) {
    const answer = oauthError(400, 'invalid_grant', result.error.message)
    return c.json(answer.body, 400)
  }
  return tokenAnswer(c, result.value)
}

/**
 * A resource server's authorization code (a Node-RED editor's sign-in through flowadmin): the
 * client authenticates with HTTP Basic and proves the code with its redirect URI and PKCE verifier.
 */
async function redeemCode(
  c: Context,
  deps: RouteDeps,
  fields: {
    client_id?: string | undefined
    code?: string | undefined
    redirect_uri?: string | undefined
    code_verifier?: string | undefined
  },
): Promise<Response> {
  const missing = (['code', 'redirect_uri', 'code_verifier'] as const).find(
    (name) => fields[name] === undefined || fields[name] === '',
  )
  if (missing !== undefined)
    return toResponse(oauthError(400, 'invalid_request', `Missing required parameter: ${missing}`))
  const agent = describeUserAgent(c.req.header('user-agent'))
  const result = await deps.core.redeemCode(
    basicCredentials(c.req.header('authorization')),
    {
      clientId: fields.client_id,
      code: fields.code as string,
      redirectUri: fields.redirect_uri as string,
      codeVerifier: fields.code_verifier as string,
    },
    deps.clientAddress(c),
    agent,
  )
  if (!result.ok) {
    const { error } = result
    if (error.code === 'invalid_grant') {
      const answer = oauthError(400, 'invalid_grant', error.message)
      return c.json(answer.body, 400)
    }
    return toResponse(errorAnswerOf(error))
  }
  return tokenAnswer(c, result.value)
}

/**
 * `GET /auth/login` always; `POST /auth/token` and `POST /auth/revoke` only when auth is on
 * (otherwise they do not exist: 404).
 */
export function authRoutes(deps: RouteDeps): Hono<AppEnv> {
  const { core } = deps
  const routes = new Hono<AppEnv>()

  routes.get(
    '/auth/login',
    describe({
      operationId: 'getLoginScheme',
      summary: 'The active login scheme',
      tags: ['auth'],
      security: [],
      // Consults no port: no 500.
      responses: { 200: { description: 'The login scheme.', content: json(LoginScheme) } },
    }),
    (c) => c.json(core.loginScheme()),
  )

  if (!core.authEnabled) return routes

  routes.post(
    '/auth/token',
    describe({
      operationId: 'issueToken',
      summary: 'Exchange credentials for an access token',
      description:
        'Every credential failure (unknown user, wrong password, unknown client, a scope beyond the user’s permissions) is the same empty 401. ' +
        'A resource server (`adminAuth.resourceServers`) checking a password for its users authenticates itself with HTTP Basic; its id is then the client.',
      tags: ['auth'],
      security: [],
      requestBody: {
        required: true,
        content: formOrJson(TokenRequestSchema, {
          password: {
            summary: 'The password grant',
            value: {
              client_id: 'service-admin',
              grant_type: 'password',
              scope: '*',
              username: 'admin',
              password: 'pw',
            },
          },
          unsupported: {
            summary: 'Another grant type (400)',
            value: { client_id: 'service-admin', grant_type: 'client_credentials' },
          },
        }),
      },
      responses: {
        200: { description: 'A new token.', ...NO_STORE, content: json(TokenResponse) },
        400: {
          description:
            'A malformed request: another content type, a malformed field, a missing field, a grant type other than `password`, an unknown scope word.',
          ...NO_STORE,
          content: oauthErrorContent([
            'invalid_request',
            'unsupported_grant_type',
            'invalid_scope',
            'invalid_grant',
          ]),
        },
        401: {
          description:
            'The credentials were refused. Empty body. (A resource server authenticating with HTTP Basic whose ' +
            'id or secret is refused gets `{"error":"invalid_client"}` with `WWW-Authenticate: Basic`.)',
          ...NO_STORE,
        },
        403: {
          description:
            '`mfa_required`: the password was right, but the person must give a second factor (they have one, or `adminAuth.mfa.require` names them), which this grant cannot ask for. Nothing was issued: people sign in on the sign-in page (`GET /auth/signin`, or an editor’s button through the helper’s `sso` option); scripts and `node-red-admin` use an API token.',
          ...NO_STORE,
          content: oauthErrorContent(['mfa_required']),
        },
        413: noStoreTooLarge('oauth'),
        429: {
          description:
            'Too many failed logins for this username from this address, or from this address; the ' +
            'password was not checked.',
          headers: { ...NO_STORE_HEADERS, 'Retry-After': RETRY_AFTER },
          content: oauthErrorContent(['temporarily_unavailable']),
        },
        500: use('Unexpected'),
        503: {
          description:
            'Too many logins are waiting for their password to be checked, or too many attempts for this ' +
            'username and address are in flight (`temporarily_unavailable`). Answered at once; the password ' +
            'was not checked and nothing was counted against the client. Or, for a person of the directory ' +
            '(`adminAuth.ldap`), the directory cannot be reached within its time bound (`temporarily_unavailable`, ' +
            '“The directory cannot be reached now…”; flowadmin’s own users still sign in). Or the store cannot ' +
            'be reached now (`storage_unavailable`, a `{code, message}` body).',
          headers: { ...NO_STORE_HEADERS, 'Retry-After': RETRY_AFTER },
          content: json(
            v.union([OAuthError(['temporarily_unavailable']), AdminError(['storage_unavailable'])]),
          ),
        },
      },
    }),
    noStore,
    async (c) => {
      const fields = await readFields(c, deps.maxBodyBytes, ['form', 'json'], TokenRequestSchema, 'oauth')
      if (!fields.ok) return fields.error

      const { client_id, grant_type, scope, username, password, code } = fields.value
      // A resource server authenticates itself (HTTP Basic): checking a password for its own
      // users, or trading the code of a person who signed in through flowadmin.
      const authorization = c.req.header('authorization')
      if (grant_type === 'authorization_code' && core.authEnabled) {
        return /^basic\b/i.test(authorization ?? '')
          ? redeemCode(c, deps, fields.value)
          : exchangeCode(c, deps, code, client_id)
      }
      const request = { clientId: client_id, grantType: grant_type, scope, username, password }
      const agent = describeUserAgent(c.req.header('user-agent'))
      const result = /^basic\b/i.test(authorization ?? '')
        ? await core.loginAsClient(basicCredentials(authorization), request, deps.clientAddress(c), agent)
        : await core.login(request, deps.clientAddress(c), agent)
      if (!result.ok) return toResponse(errorAnswerOf(result.error))
      return tokenAnswer(c, result.value)
    },
  )

  // RFC 7009: 200 with no body whether or not anything was revoked, so it reveals nothing.
  routes.post(
    '/auth/revoke',
    describe({
      operationId: 'revokeToken',
      summary: 'Revoke an access token',
      description:
        'Any authenticated caller; revoking another user’s token needs `*`, otherwise nothing happens. ' +
        'A token of any audience may end itself (the bearer and `token` the same): a resource server’s ' +
        'token, which flowadmin’s other routes refuse, can end that token and nothing else. ' +
        'The answer is the same whether or not a token was revoked (RFC 7009).',
      tags: ['auth'],
      requestBody: {
        required: true,
        content: formOrJson(RevokeRequestSchema, {
          revoke: { summary: 'Revoke a token', value: { token: 'a-token-to-end' } },
          empty: { summary: 'No token (400)', value: { token: '' } },
        }),
      },
      responses: {
        200: { description: 'Done, or nothing to do. Empty body.', ...NO_STORE },
        400: {
          description: 'Another content type, or `token` missing, empty or not a string.',
          ...NO_STORE,
          content: oauthErrorContent(['invalid_request']),
        },
        401: { ...unauthorized(), headers: { ...unauthorized().headers, ...NO_STORE_HEADERS } },
        413: noStoreTooLarge('oauth'),
        500: use('Unexpected'),
        503: use('StorageUnavailable'),
      },
    }),
    noStore,
    requirePermission(deps, '', { anyAudience: true }),
    async (c) => {
      const fields = await readFields(c, deps.maxBodyBytes, ['form', 'json'], RevokeRequestSchema, 'oauth')
      if (!fields.ok) return fields.error

      await core.revoke(c.get('principal'), fields.value.token, c.get('address'))
      return emptyResponse(200)
    },
  )

  return routes
}
