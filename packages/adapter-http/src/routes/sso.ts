import type { SsoRefusal } from '@flowadmin/core'
import { Hono } from 'hono'
import * as v from 'valibot'
import { bindingOf, clearStart, redirectUriOf, startOf } from '../binding.js'
import type { AppEnv, RouteDeps } from '../env.js'
import { emptyResponse, oauthError, toResponse } from '../errors.js'
import { readFields } from '../fields.js'
import { noStore } from '../no-store.js'
import { describe, HTML_PAGE, NO_STORE_HEADERS, oauthErrorContent, use } from '../openapi.js'
import { codeLocation, redirect, returnPathProblem, returnToParameter } from '../sign-in-destination.js'
import { consolePage, ssoRefusal, toProvider } from '../sso-answers.js'

// Single sign-on with the organisation's OpenID provider, in Node-RED's words: `/auth/strategy`
// sends the browser to the provider, `/auth/strategy/callback` takes it back and hands the console
// a one-time code (never a token) in the URL's fragment, which the console trades at
// `POST /auth/token` (grant_type=authorization_code). The sign-in is bound to the browser by an
// HttpOnly cookie, and carried by it in another until the provider sends it back (nothing is
// stored before): the callback and the exchange are refused from any other browser.

const LogoutRequestSchema = v.object(
  {
    logout_token: v.pipe(
      v.string('Invalid parameter: logout_token must be a string'),
      v.nonEmpty('Missing required parameter: logout_token'),
    ),
  },
  'Invalid request: the body must be a form',
)

/** `/auth/strategy`, its callback and back-channel logout, when `adminAuth.oidc` is set. */
export function ssoRoutes(deps: RouteDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  const sso = deps.core.sso
  if (sso === null) return routes
  const home = `${deps.basePath}/`
  const refusal = (error: SsoRefusal) => ssoRefusal(error, home)

  routes.get(
    '/auth/strategy',
    describe({
      operationId: 'startSignIn',
      summary: 'Start a sign-in with the identity provider',
      description:
        'Sends the browser to the provider (authorization code flow with PKCE S256, state and nonce) and sets two HttpOnly cookies: one binds the sign-in to this browser, the other carries the sign-in itself (where it ends, authenticated by flowadmin, bound to the first cookie and the client’s address, an IPv6 /64, good for 10 minutes) until the provider sends the browser back. Nothing is stored before that, so no number of sign-ins never finished stops anyone’s.',
      tags: ['auth'],
      security: [],
      parameters: [
        returnToParameter({ elsewhere: { summary: 'Another site (400)', value: 'https://evil.example/' } }),
      ],
      responses: {
        302: { description: 'To the provider.' },
        400: { description: '`return_to` is not a path of this service (an HTML page).', content: HTML_PAGE },
        503: { description: 'The provider cannot be reached (an HTML page).', content: HTML_PAGE },
      },
    }),
    async (c) => {
      const returnTo = c.req.query('return_to') ?? home
      const problem = returnPathProblem(returnTo, deps.basePath)
      if (problem !== null) return consolePage(400, 'Sign-in failed', problem, home)
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
        'Checks the sign-in the browser carries (started by this server for this browser and address, within 10 minutes) and the provider’s answer (state, the code exchanged with its PKCE verifier, the ID token: signature, iss, aud, exp, nonce); the sign-in is then spent (it completes once, at any instance), the person’s groups map to permissions, and the browser goes to the console with a one-time code in the fragment (`#sso_code=…`, single use, 30 s, this browser only). The cookie that carried the sign-in is removed.',
      tags: ['auth'],
      security: [],
      responses: {
        302: {
          description:
            'To the console, with the one-time code; or, for a sign-in a resource server asked for (`/auth/authorize`), to its redirect URI with `code` and `state`, or, refused, with `error` (`access_denied`, `temporarily_unavailable`), `error_description` and `state`.',
        },
        400: {
          description:
            'The answer failed a check, or this browser did not start the sign-in, from this address, within 10 minutes, or it was used already (an HTML page).',
          content: HTML_PAGE,
        },
        403: {
          description:
            'The provider refused the sign-in, named no one, named the person like a configured user or like another person of the provider who signed in first, or the person’s groups give no permission here (an HTML page that says which).',
          content: HTML_PAGE,
        },
        429: {
          description:
            'Too many one-time codes of this client address wait to be traded (an HTML page, `Retry-After`).',
          content: HTML_PAGE,
        },
        503: {
          description:
            'The provider cannot be reached, or too many one-time codes wait in all (an HTML page, `Retry-After`).',
          content: HTML_PAGE,
        },
      },
    }),
    async (c) => {
      const query = new URL(c.req.url).search
      const completed = await sso.complete(
        bindingOf(c),
        startOf(c),
        `${redirectUriOf(c, deps)}${query}`,
        deps.clientAddress(c),
      )
      let response: Response
      if (completed.ok) {
        const { code, returnTo, authorization } = completed.value
        const destination =
          authorization === null ? { returnTo, authorization } : { returnTo: null, authorization }
        response = redirect(codeLocation(destination, code), 302)
      } else response = refusal(completed.error)
      // The sign-in the browser carried is spent or refused either way: its cookie goes.
      response.headers.append('Set-Cookie', clearStart(c, deps))
      return response
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
      const fields = await readFields(c, deps.maxBodyBytes, ['form'], LogoutRequestSchema, 'oauth')
      if (!fields.ok) return fields.error
      const ended = await sso.logout(fields.value.logout_token, deps.clientAddress(c))
      if (ended.ok) return emptyResponse(200)
      return ended.error.reason === 'unavailable'
        ? toResponse(oauthError(503, 'temporarily_unavailable', ended.error.message))
        : toResponse(oauthError(400, 'invalid_request', ended.error.message))
    },
  )

  return routes
}
