import type { AuthorizationRequest } from '@flowadmin/core'
import type { Context } from 'hono'

// Where a browser sign-in ends, whether the person signs in at the identity provider or on
// flowadmin's sign-in page: the console (a path of this service, the one-time code in the URL's
// fragment), or the resource server whose authorization request (RFC 6749 §4.1, PKCE S256) it
// carries (the code at its redirect URI).

/**
 * Where a sign-in ends: the console (a path of this service), or the resource server whose
 * authorization request the sign-in carries.
 */
export type Destination =
  | { returnTo: string; authorization: null }
  | { returnTo: null; authorization: AuthorizationRequest }

/** The fragment parameter that carries the one-time code to the console. */
const SSO_CODE_FRAGMENT = 'sso_code'
/** A PKCE S256 challenge: base64url of a SHA-256, 43 characters (RFC 7636 §4.2). */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/
/** The longest `state` a client may have echoed back. */
const MAX_STATE = 1024

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

/** The `return_to` query parameter, as the document shows it, with these examples. */
export const returnToParameter = (examples: Record<string, { summary: string; value: string }>) => ({
  name: 'return_to',
  in: 'query' as const,
  required: false,
  description: 'Where the console lands afterwards: a path of this service. Default: the console.',
  schema: { type: 'string' as const },
  examples,
})

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

/** The destination as hidden fields of the sign-in page, sent back with each of its forms. */
export const fieldsOfDestination = (destination: Destination): Record<string, string> =>
  destination.authorization === null
    ? { return_to: destination.returnTo }
    : {
        client_id: destination.authorization.clientId,
        redirect_uri: destination.authorization.redirectUri,
        code_challenge: destination.authorization.codeChallenge,
        ...(destination.authorization.state !== null && { state: destination.authorization.state }),
      }

/**
 * The destination a form of the sign-in page sent back, checked again as when the sign-in began
 * (a registered redirect URI, exactly; a PKCE S256 challenge; a path of this service); null when
 * it does not hold.
 */
export function destinationOf(
  fields: Record<string, unknown>,
  registered: (clientId: string, redirectUri: string) => boolean,
  basePath: string,
): Destination | null {
  const field = (name: string) => (typeof fields[name] === 'string' ? (fields[name] as string) : undefined)
  const clientId = field('client_id')
  if (clientId !== undefined) {
    const redirectUri = field('redirect_uri') ?? ''
    const codeChallenge = field('code_challenge') ?? ''
    const state = field('state') ?? null
    if (
      !registered(clientId, redirectUri) ||
      !S256_CHALLENGE.test(codeChallenge) ||
      (state !== null && state.length > MAX_STATE)
    )
      return null
    return { returnTo: null, authorization: { clientId, redirectUri, codeChallenge, state } }
  }
  const returnTo = field('return_to') ?? `${basePath}/`
  return returnPathProblem(returnTo, basePath) === null ? { returnTo, authorization: null } : null
}

/**
 * Where a sign-in's one-time code goes: the console's URL, in its fragment (`#sso_code=…`), or
 * the resource server's redirect URI with `code` and `state`.
 */
export const codeLocation = (destination: Destination, code: string): string =>
  destination.authorization === null
    ? `${destination.returnTo}#${SSO_CODE_FRAGMENT}=${code}`
    : withParams(destination.authorization.redirectUri, { code, state: destination.authorization.state })

/** The URI with `params` added to its query, those that are not null. */
const withParams = (uri: string, params: Record<string, string | null>): string => {
  const url = new URL(uri)
  for (const [name, value] of Object.entries(params)) if (value !== null) url.searchParams.set(name, value)
  return url.href
}

/** The browser sent on to `location`: never stored, and the address not told to the next site. */
export const redirect = (location: string, status: 302 | 303): Response =>
  new Response(null, {
    status,
    headers: {
      Location: location,
      'Cache-Control': 'no-store',
      'Referrer-Policy': 'no-referrer',
      'X-Content-Type-Options': 'nosniff',
    },
  })

/** The client's redirect URI with `params` added to its query (RFC 6749 §4.1.2). */
export const redirectTo = (redirectUri: string, params: Record<string, string | null>): Response =>
  redirect(withParams(redirectUri, params), 302)
