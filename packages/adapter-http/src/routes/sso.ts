import type { SsoRefusal } from '@flowadmin/core'
import { type Context, Hono } from 'hono'
import { getCookie } from 'hono/cookie'
import * as v from 'valibot'
import { readBody } from '../body.js'
import type { AppEnv, RouteDeps } from '../env.js'
import { emptyResponse, oauthBodyError, oauthError, toResponse } from '../errors.js'
import { describe, htmlPage, NO_STORE_HEADERS, oauthErrorContent, use } from '../openapi.js'
import { firstIssueMessage } from '../schemas.js'
import { messagePage } from '../sign-in-page.js'
import { noStore } from './auth.js'

// Single sign-on with the organisation's OpenID provider, in Node-RED's words: `/auth/strategy`
// sends the browser to the provider, `/auth/strategy/callback` takes it back and hands the console
// a one-time code (never a token) in the URL's fragment, which the console trades at
// `POST /auth/token` (grant_type=authorization_code). The sign-in is bound to the browser by an
// HttpOnly cookie: the callback and the exchange are refused from any other browser.

/** The cookie that binds a sign-in to the browser that started it. */
export const SSO_COOKIE = 'flowadmin_sso'
/** Seconds the binding cookie lives: as long as a sign-in may take. */
export const COOKIE_SECONDS = 600
/** The fragment parameter that carries the one-time code to the console. */
export const SSO_CODE_FRAGMENT = 'sso_code'

const LogoutRequestSchema = v.object(
  {
    logout_token: v.pipe(
      v.string('Invalid parameter: logout_token must be a string'),
      v.nonEmpty('Missing required parameter: logout_token'),
    ),
  },
  'Invalid request: the body must be a form',
)

export const STATUS_OF: Record<SsoRefusal['reason'], 400 | 403 | 429 | 503> = {
  invalid: 400,
  refused: 403,
  no_username: 403,
  name_taken: 403,
  no_permissions: 403,
  too_many: 429,
  unavailable: 503,
  busy: 503,
}

export const TITLE_OF: Record<SsoRefusal['reason'], string> = {
  invalid: 'Sign-in failed',
  refused: 'Sign-in refused',
  no_username: 'Sign-in refused',
  name_taken: 'Sign-in refused',
  no_permissions: 'No access',
  too_many: 'Too many sign-ins',
  unavailable: 'Identity provider unavailable',
  busy: 'Too many sign-ins',
}

/**
 * The error a refused sign-in is told to the resource server that asked for it, at its redirect
 * URI (RFC 6749 §4.1.2.1): the provider cannot be reached now, or flowadmin denies it.
 */
export const OAUTH_ERROR_OF: Record<SsoRefusal['reason'], 'temporarily_unavailable' | 'access_denied'> = {
  unavailable: 'temporarily_unavailable',
  too_many: 'temporarily_unavailable',
  busy: 'temporarily_unavailable',
  invalid: 'access_denied',
  refused: 'access_denied',
  no_username: 'access_denied',
  name_taken: 'access_denied',
  no_permissions: 'access_denied',
}

/** A short page for the person in the browser: what happened and the way back. No script. */
const page = (status: number, title: string, message: string, back: string): Response =>
  messagePage(status, title, message, { href: back, label: 'Back to the console' })

/** A short HTML page for the person in the browser. */
const HTML = htmlPage(v.string())

/**
 * Where a sign-in may return to: a path of this service below its root, nothing that a browser
 * could read as another origin (`//host`, `/\host`, a scheme).
 */
export function returnPathProblem(path: string, basePath: string): string | null {
  if (
    !path.startsWith(`${basePath}/`) ||
    /^\/[/\\]/.test(path) ||
    // Printable ASCII only (what a Location header may carry), no backslash, and short: a pending
    // sign-in keeps it.
    !/^[\x21-\x7e]{1,2048}$/.test(path) ||
    path.includes('\\') ||
    path.includes('#')
  ) {
    return `return_to must be a path of this console, starting with ${basePath}/`
  }
  return null
}

/** A PKCE S256 challenge: base64url of a SHA-256, 43 characters (RFC 7636 §4.2). */
export const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/
/** The longest `state` a client may have echoed back. */
export const MAX_STATE = 1024

/** The query of an authorization request, as the OpenAPI document shows it. */
export const AUTHORIZE_EXAMPLE = {
  response_type: 'code',
  client_id: 'fleet',
  redirect_uri: 'https://nodered.example/auth/strategy/callback',
  code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
  code_challenge_method: 'S256',
  state: 'af0ifjsldkj',
}

/** A query parameter given once, or undefined (absent, or repeated: RFC 6749 §3.1). */
export function single(c: Context, name: string): string | undefined {
  const values = c.req.queries(name)
  return values?.length === 1 ? values[0] : undefined
}

/** The client's redirect URI with `params` added to its query (RFC 6749 §4.1.2). */
export function redirectTo(
  redirectUri: string,
  params: Record<string, string | null>,
  status: 302 | 303 = 302,
): Response {
  const url = new URL(redirectUri)
  for (const [name, value] of Object.entries(params)) if (value !== null) url.searchParams.set(name, value)
  return new Response(null, {
    status,
    headers: {
      Location: url.href,
      'Cache-Control': 'no-store',
      'Referrer-Policy': 'no-referrer',
      'X-Content-Type-Options': 'nosniff',
    },
  })
}

/**
 * The parts of an authorization request that, when wrong, are told to the client at its redirect
 * URI (RFC 6749 §4.1.2.1): the response type, PKCE S256 (required), the state's length.
 */
export function authorizationProblem(c: Context): { error: string; description: string } | null {
  if (single(c, 'response_type') !== 'code')
    return { error: 'unsupported_response_type', description: 'response_type must be code' }
  if (
    single(c, 'code_challenge_method') !== 'S256' ||
    !S256_CHALLENGE.test(single(c, 'code_challenge') ?? '')
  )
    return {
      error: 'invalid_request',
      description: 'PKCE is required: code_challenge with code_challenge_method S256',
    }
  const state = c.req.queries('state')
  if (state !== undefined && (state.length !== 1 || (state[0] as string).length > MAX_STATE))
    return {
      error: 'invalid_request',
      description: `state must be given once, at most ${MAX_STATE} characters`,
    }
  return null
}

/** The sign-in cookie: HttpOnly, SameSite=Lax (it must come back from the provider's redirect), Secure on https. */
export function bindingCookie(value: string, maxAge: number, basePath: string, secure: boolean): string {
  return `${SSO_COOKIE}=${value}; Path=${basePath}/auth; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`
}

/** The sign-in cookie of this request, or null. */
export const bindingOf = (c: Context): string | null => getCookie(c, SSO_COOKIE) ?? null

/** The redirect URI: the settings', else the origin the browser used below this service's root. */
export const redirectUriOf = (c: Context, deps: RouteDeps): string =>
  deps.ssoRedirectUri ?? `${new URL(c.req.url).origin}${deps.basePath}/auth/strategy/callback`

/**
 * Whether the sign-in cookie is Secure: when the browser comes back from the provider over https,
 * as the redirect URI says (behind a proxy that ends TLS, the request itself may be http).
 */
export const secureBinding = (c: Context, deps: RouteDeps): boolean =>
  redirectUriOf(c, deps).startsWith('https:')

/** A Set-Cookie that removes the sign-in cookie (after the exchange), as it was set. */
export const clearBinding = (c: Context, deps: RouteDeps): string =>
  bindingCookie('', 0, deps.basePath, secureBinding(c, deps))

/**
 * A refused sign-in: back to the resource server that asked for it, with the error and its state,
 * when there is one (its redirect URI was checked); else a page for the person.
 */
export const ssoRefusal = (error: SsoRefusal, home: string, authorization = error.authorization): Response =>
  authorization === undefined
    ? page(STATUS_OF[error.reason], TITLE_OF[error.reason], error.message, home)
    : redirectTo(authorization.redirectUri, {
        error: OAUTH_ERROR_OF[error.reason],
        error_description: error.message,
        state: authorization.state,
      })

/** To the provider, the browser bound to its pending sign-in by a cookie. */
export const toProvider = (
  c: Context,
  deps: RouteDeps,
  started: { url: string; binding: string },
): Response =>
  new Response(null, {
    status: 302,
    headers: {
      Location: started.url,
      'Set-Cookie': bindingCookie(started.binding, COOKIE_SECONDS, deps.basePath, secureBinding(c, deps)),
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
    },
  })

/** `/auth/strategy`, its callback and back-channel logout, when `adminAuth.oidc` is set. */
export function ssoRoutes(deps: RouteDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  const sso = deps.core.sso
  if (sso === null) return routes
  const home = `${deps.basePath}/`
  const refusal = (error: SsoRefusal, authorization = error.authorization) =>
    ssoRefusal(error, home, authorization)

  routes.get(
    '/auth/strategy',
    describe({
      operationId: 'startSignIn',
      summary: 'Start a sign-in with the identity provider',
      description:
        'Sends the browser to the provider (authorization code flow with PKCE S256, state and nonce) and sets an HttpOnly cookie that binds the sign-in to this browser.',
      tags: ['auth'],
      security: [],
      parameters: [
        {
          name: 'return_to',
          in: 'query',
          required: false,
          description: 'Where the console lands afterwards: a path of this service. Default: the console.',
          schema: { type: 'string' },
          examples: { elsewhere: { summary: 'Another site (400)', value: 'https://evil.example/' } },
        },
      ],
      responses: {
        302: { description: 'To the provider.' },
        400: { description: '`return_to` is not a path of this service (an HTML page).', content: HTML },
        429: {
          description:
            'Too many sign-ins from this client address are under way (an HTML page, `Retry-After`); nobody else’s is dropped.',
          content: HTML,
        },
        503: {
          description:
            'The provider cannot be reached, or too many sign-ins are under way in all (an HTML page, `Retry-After`).',
          content: HTML,
        },
      },
    }),
    async (c) => {
      const returnTo = c.req.query('return_to') ?? home
      const problem = returnPathProblem(returnTo, deps.basePath)
      if (problem !== null) return page(400, 'Sign-in failed', problem, home)
      const started = await sso.begin(redirectUriOf(c, deps), returnTo, deps.clientAddress(c))
      if (!started.ok) return refusal(started.error)
      return toProvider(c, deps, started.value)
    },
  )

  routes.get(
    '/auth/strategy/callback',
    describe({
      operationId: 'completeSignIn',
      summary: 'The identity provider’s answer',
      description:
        'Checks the answer (state, the code exchanged with its PKCE verifier, the ID token: signature, iss, aud, exp, nonce), maps the person’s groups to permissions, and sends the browser to the console with a one-time code in the fragment (`#sso_code=…`, single use, 30 s, this browser only).',
      tags: ['auth'],
      security: [],
      responses: {
        302: {
          description:
            'To the console, with the one-time code; or, for a sign-in a resource server asked for (`/auth/authorize`), to its redirect URI with `code` and `state`, or, refused, with `error` (`access_denied`, `temporarily_unavailable`), `error_description` and `state`.',
        },
        400: {
          description: 'The answer failed a check, or this browser did not start the sign-in (an HTML page).',
          content: HTML,
        },
        403: {
          description:
            'The provider refused the sign-in, named no one, named the person like a configured user or like another person of the provider who signed in first, or the person’s groups give no permission here (an HTML page that says which).',
          content: HTML,
        },
        429: {
          description:
            'Too many one-time codes of this client address wait to be traded (an HTML page, `Retry-After`).',
          content: HTML,
        },
        503: {
          description:
            'The provider cannot be reached, or too many one-time codes wait in all (an HTML page, `Retry-After`).',
          content: HTML,
        },
      },
    }),
    async (c) => {
      const query = new URL(c.req.url).search
      const completed = await sso.complete(
        bindingOf(c),
        `${redirectUriOf(c, deps)}${query}`,
        deps.clientAddress(c),
      )
      if (!completed.ok) return refusal(completed.error)
      const { code, returnTo, authorization } = completed.value
      if (authorization !== null)
        return redirectTo(authorization.redirectUri, { code, state: authorization.state })
      return new Response(null, {
        status: 302,
        headers: {
          Location: `${returnTo}#${SSO_CODE_FRAGMENT}=${code}`,
          'Cache-Control': 'no-store',
          'Referrer-Policy': 'no-referrer',
          'X-Content-Type-Options': 'nosniff',
        },
      })
    },
  )

  routes.post(
    '/auth/strategy/backchannel-logout',
    describe({
      operationId: 'backchannelLogout',
      summary: 'The identity provider ended a session (Back-Channel Logout 1.0)',
      description:
        'A `logout_token` signed by the provider (iss, aud, iat, the back-channel logout event, sub or sid): every token of that person ends.',
      tags: ['auth'],
      security: [],
      responses: {
        200: { description: 'Done. Empty body.', headers: NO_STORE_HEADERS },
        400: {
          description: 'A missing or invalid logout token.',
          headers: NO_STORE_HEADERS,
          content: oauthErrorContent(['invalid_request']),
        },
        500: use('Unexpected'),
        503: {
          description: 'The provider’s keys cannot be fetched now.',
          headers: NO_STORE_HEADERS,
          content: oauthErrorContent(['temporarily_unavailable']),
        },
      },
    }),
    noStore,
    async (c) => {
      const body = await readBody(c.req.raw, deps.maxBodyBytes, ['form'], c.env)
      if (!body.ok) return toResponse(oauthBodyError(body.error))
      const fields = v.safeParse(LogoutRequestSchema, body.value)
      if (!fields.success)
        return toResponse(oauthError(400, 'invalid_request', firstIssueMessage(fields.issues, 'parameter')))
      const ended = await sso.logout(fields.output.logout_token, deps.clientAddress(c))
      if (ended.ok) return emptyResponse(200)
      return ended.error.reason === 'unavailable'
        ? toResponse(oauthError(503, 'temporarily_unavailable', ended.error.message))
        : toResponse(oauthError(400, 'invalid_request', ended.error.message))
    },
  )

  return routes
}
