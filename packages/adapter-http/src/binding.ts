import type { Context } from 'hono'
import { getCookie } from 'hono/cookie'
import type { RouteDeps } from './env.js'

// The cookie that binds a browser sign-in (at the identity provider, or on flowadmin's sign-in
// page) to the browser that started it, and the one that carries a sign-in at the identity
// provider until it comes back (nothing of it is stored): HttpOnly, SameSite=Lax (they must come
// back from the provider's redirect), Secure when the browser comes back over https, below
// `<root>/auth`.

/** The cookies' names. */
const SSO_COOKIE = 'flowadmin_sso'
const START_COOKIE = 'flowadmin_sso_start'
/** Seconds the binding cookie lives: as long as a sign-in may take. */
const COOKIE_SECONDS = 600
/** A cookie value the sign-in page could have set: 32 random bytes, base64url. */
const PAGE_BINDING = /^[A-Za-z0-9_-]{43}$/

const bindingCookie = (
  value: string,
  maxAge: number,
  basePath: string,
  secure: boolean,
  name = SSO_COOKIE,
): string =>
  `${name}=${value}; Path=${basePath}/auth; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`

/** Text as base64url of its UTF-8 (what a cookie's value may hold), and back (null when it is not that). */
const toCookieText = (text: string): string =>
  btoa(String.fromCharCode(...new TextEncoder().encode(text)))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '')
const fromCookieText = (value: string): string | null => {
  try {
    const binary = atob(value.replace(/-/g, '+').replace(/_/g, '/'))
    return new TextDecoder('utf-8', { fatal: true }).decode(
      Uint8Array.from(binary, (char) => char.charCodeAt(0)),
    )
  } catch {
    return null
  }
}

/** The sign-in cookie of this request, or null. */
export const bindingOf = (c: Context): string | null => getCookie(c, SSO_COOKIE) ?? null

/** The sign-in cookie of this request when the sign-in page could have set it (what its tickets are keyed by), or null. */
export const pageBindingOf = (c: Context): string | null => {
  const binding = bindingOf(c)
  return binding !== null && PAGE_BINDING.test(binding) ? binding : null
}

/** The sign-in at the identity provider this browser carries (see Sso.begin), or null. */
export const startOf = (c: Context): string | null => {
  const value = getCookie(c, START_COOKIE)
  return value === undefined ? null : fromCookieText(value)
}

/** 32 random bytes, base64url: the value of a new sign-in cookie of the sign-in page. */
export function newBinding(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32))
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '')
}

/** The redirect URI: the settings', else the origin the browser used below this service's root. */
export const redirectUriOf = (c: Context, deps: RouteDeps): string =>
  deps.ssoRedirectUri ?? `${new URL(c.req.url).origin}${deps.basePath}/auth/strategy/callback`

/**
 * Whether the sign-in cookie is Secure: when the browser comes back from the provider over https,
 * as the redirect URI says (behind a proxy that ends TLS, the request itself may be http).
 */
const secureBinding = (c: Context, deps: RouteDeps): boolean => redirectUriOf(c, deps).startsWith('https:')

/** A Set-Cookie that binds a sign-in to this browser with `value`. */
export const setBinding = (c: Context, deps: RouteDeps, value: string): string =>
  bindingCookie(value, COOKIE_SECONDS, deps.basePath, secureBinding(c, deps))

/** A Set-Cookie that removes the sign-in cookie (after the exchange), as it was set. */
export const clearBinding = (c: Context, deps: RouteDeps): string =>
  bindingCookie('', 0, deps.basePath, secureBinding(c, deps))

/** A Set-Cookie that has this browser carry `carried`, its sign-in at the identity provider. */
export const setStart = (c: Context, deps: RouteDeps, carried: string): string =>
  bindingCookie(toCookieText(carried), COOKIE_SECONDS, deps.basePath, secureBinding(c, deps), START_COOKIE)

/** A Set-Cookie that removes the carried sign-in (once it came back), as it was set. */
export const clearStart = (c: Context, deps: RouteDeps): string =>
  bindingCookie('', 0, deps.basePath, secureBinding(c, deps), START_COOKIE)
