import type { AuthorizationRequest } from '@flowadmin/core'
import { Hono } from 'hono'
import { redirectUriOf } from '../../binding.js'
import type { AppEnv } from '../../env.js'
import { describe, HTML_PAGE } from '../../openapi.js'
import {
  AUTHORIZE_EXAMPLE,
  authorizationProblem,
  redirectTo,
  returnPathProblem,
  returnToParameter,
  single,
} from '../../sign-in-destination.js'
import { NOTICES, noticeOf } from '../../sign-in-page/password-page.js'
import { consolePage, ssoRefusal, toProvider } from '../../sso-answers.js'
import type { SignInFlow } from './flow.js'

/**
 * Where a sign-in on the page begins: `GET /auth/signin` for the console, `GET /auth/authorize`
 * for a resource server (to the identity provider instead when flowadmin has no users of its own).
 */
export function signInStartRoutes(flow: SignInFlow): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  const { core, deps, home, sso, begin } = flow

  routes.get(
    '/auth/signin',
    describe({
      operationId: 'signInPage',
      summary: 'flowadmin’s sign-in page',
      description:
        'Shows the first step of a sign-in for the console with flowadmin’s own users (username and password; the identity provider’s button beside it when one is configured). Then the page asks for the second factor the person has, or for an enrolment when `adminAuth.mfa.require` says they must have one, and sends the browser to `return_to` with a one-time code in the fragment (`#sso_code=…`), which the console trades at `POST /auth/token` (`authorization_code`). Sets an HttpOnly cookie that binds the sign-in to this browser. Without users of its own, the page shows the identity provider’s button alone.',
      tags: ['auth'],
      security: [],
      parameters: [
        returnToParameter({
          console: { summary: 'The console', value: '/' },
          elsewhere: { summary: 'Another site (400)', value: 'https://evil.example/' },
        }),
        {
          name: 'notice',
          in: 'query',
          required: false,
          description: `What the page says above the form, by name: ${Object.keys(NOTICES)
            .map((name) => `\`${name}\``)
            .join(
              ', ',
            )} (the console sends the person here after a log-out or a lost session). Any other value: nothing.`,
          schema: { type: 'string' },
          examples: { console: { summary: 'After a log-out', value: 'logged_out' } },
        },
      ],
      responses: {
        200: { description: 'The page (HTML).', content: HTML_PAGE },
        400: { description: '`return_to` is not a path of this service (an HTML page).', content: HTML_PAGE },
      },
    }),
    async (c) => {
      const returnTo = c.req.query('return_to') ?? home
      const problem = returnPathProblem(returnTo, deps.basePath)
      if (problem !== null) return consolePage(400, 'Sign-in failed', problem, home)
      const notice = noticeOf(c.req.query('notice'))
      return begin(c, { returnTo, authorization: null }, notice)
    },
  )

  routes.get(
    '/auth/authorize',
    describe({
      operationId: 'authorize',
      summary: 'A resource server signs a person in through flowadmin',
      description:
        'OAuth 2.0 authorization endpoint (RFC 6749 §4.1, PKCE S256 required) for resource servers (a Node-RED editor through `@flowadmin/node-red`): ' +
        '`client_id` must be a resource server and `redirect_uri` exactly one of its `redirectUris`, else an HTML page and nothing is sent anywhere. ' +
        'Past that check, every error goes back to `redirect_uri` with `error`, `error_description` and `state` (RFC 6749 §4.1.2.1). ' +
        'The person then signs in on flowadmin’s sign-in page (password, then their second factor; or a passkey), or, when flowadmin has no users of its own, with the identity provider; the browser is then sent to `redirect_uri?code=…&state=…`. The code is traded at `POST /auth/token` (`authorization_code`, HTTP Basic, `redirect_uri`, `code_verifier`).',
      tags: ['auth'],
      security: [],
      parameters: Object.entries(AUTHORIZE_EXAMPLE).map(([name, value]) => ({
        name,
        in: 'query' as const,
        required: name !== 'state',
        schema: { type: 'string' as const },
        examples: { signIn: { summary: 'A Node-RED editor’s sign-in', value } },
      })),
      responses: {
        200: {
          description: 'flowadmin’s sign-in page (HTML), the sign-in bound to this browser by a cookie.',
          content: HTML_PAGE,
        },
        302: {
          description:
            'To the identity provider (no users of flowadmin’s own); or to the redirect URI with `error` (`unsupported_response_type`, `invalid_request`, or `temporarily_unavailable` when the provider cannot be reached), `error_description` and `state`.',
        },
        400: {
          description: 'An unknown client, or a redirect URI not registered for it (an HTML page).',
          content: HTML_PAGE,
        },
      },
    }),
    async (c) => {
      const clientId = single(c, 'client_id') ?? ''
      const redirectUri = single(c, 'redirect_uri') ?? ''
      if (!core.redirectRegistered(clientId, redirectUri)) {
        const shown = (text: string) => JSON.stringify(text.slice(0, 200))
        return consolePage(
          400,
          'Sign-in refused',
          `The redirect URI ${shown(redirectUri)} is not registered for the client ${shown(clientId)}, so nothing is sent to it. An administrator registers it in adminAuth.resourceServers[].redirectUris (exactly).`,
          home,
        )
      }
      const problem = authorizationProblem(c)
      const state = single(c, 'state') ?? null
      if (problem !== null)
        return redirectTo(redirectUri, {
          error: problem.error,
          error_description: problem.description,
          state,
        })
      const authorization: AuthorizationRequest = {
        clientId,
        redirectUri,
        codeChallenge: single(c, 'code_challenge') as string,
        state,
      }
      if (core.signIn.hasUsers() || sso === null) return begin(c, { returnTo: null, authorization })
      const started = await sso.begin(redirectUriOf(c, deps), home, deps.clientAddress(c), authorization)
      if (!started.ok) return ssoRefusal(started.error, home, authorization)
      return toProvider(c, deps, started.value)
    },
  )

  return routes
}
