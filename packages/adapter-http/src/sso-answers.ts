import type { AuthorizationRequest, SsoRefusal } from '@flowadmin/core'
import type { Context } from 'hono'
import { setBinding, setStart } from './binding.js'
import type { RouteDeps } from './env.js'
import { redirectTo } from './sign-in-destination.js'
import { messagePage } from './sign-in-page/layout.js'

// What a sign-in at the identity provider answers, from its own routes and from the sign-in
// page's provider button alike: the hop to the provider, and a refusal.

const STATUS_OF: Record<SsoRefusal['reason'], 400 | 403 | 429 | 503> = {
  invalid: 400,
  refused: 403,
  no_username: 403,
  name_taken: 403,
  no_permissions: 403,
  too_many: 429,
  unavailable: 503,
  busy: 503,
}

const TITLE_OF: Record<SsoRefusal['reason'], string> = {
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
const OAUTH_ERROR_OF: Record<SsoRefusal['reason'], 'temporarily_unavailable' | 'access_denied'> = {
  unavailable: 'temporarily_unavailable',
  too_many: 'temporarily_unavailable',
  busy: 'temporarily_unavailable',
  invalid: 'access_denied',
  refused: 'access_denied',
  no_username: 'access_denied',
  name_taken: 'access_denied',
  no_permissions: 'access_denied',
}

/** A short page for the person in the browser: what happened and the way back to the console. No script. */
export const consolePage = (status: number, title: string, message: string, home: string): Response =>
  messagePage(status, title, message, { href: home, label: 'Back to the console' })

/**
 * A refused sign-in: back to the resource server that asked for it, with the error and its state,
 * when there is one (its redirect URI was checked); else a page for the person.
 */
export const ssoRefusal = (
  error: SsoRefusal,
  home: string,
  authorization: AuthorizationRequest | undefined = error.authorization,
): Response =>
  authorization === undefined
    ? consolePage(STATUS_OF[error.reason], TITLE_OF[error.reason], error.message, home)
    : redirectTo(authorization.redirectUri, {
        error: OAUTH_ERROR_OF[error.reason],
        error_description: error.message,
        state: authorization.state,
      })

/** To the provider, the browser bound to its sign-in by a cookie and carrying it in another. */
export const toProvider = (
  c: Context,
  deps: RouteDeps,
  started: { url: string; binding: string; carried: string },
): Response => {
  const headers = new Headers({
    Location: started.url,
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  })
  headers.append('Set-Cookie', setBinding(c, deps, started.binding))
  headers.append('Set-Cookie', setStart(c, deps, started.carried))
  return new Response(null, { status: 302, headers })
}
