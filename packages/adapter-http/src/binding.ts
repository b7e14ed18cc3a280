import type { Context } from 'hono'
import { getCookie } from 'hono/cookie'
import type { RouteDeps } from './env.js'

// The cookie that binds a browser sign-in (at the identity provider, or on flowadmin's sign-in
// page) to the browser that started it: HttpOnly, SameSite=Lax (it must come back from the
// provider's redirect), Secure when the browser comes back over https, below `<root>/auth`.

/** The cookie's name. */
const SSO_COOKIE = 'flowadmin_sso'
/** Seconds the binding cookie lives: as long as a sign-in may take. */
const COOKIE_SECONDS = 600
/** A cookie value the sign-in page could have set: 32 random bytes, base64url. */
const PAGE_BINDING = /^[A-Za-z0-9_-]{43}$/

const bindingCookie = (value: string, maxAge: number, basePath: string, secure: boolean): string =>
  `${SSO_COOKIE}=${value}; Path=${basePath}/auth; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`

/** The sign-in cookie of this request, or null. */
export const bindingOf = (c: Context): string | null => getCookie(c, SSO_COOKIE) ?? null

/** The sign-in cookie of this request when the sign-in page could have set it (what its tickets are keyed by), or null. */
export const pageBindingOf = (c: Context): string | null => {
  const binding = bindingOf(c)
  return binding !== null && PAGE_BINDING.test(binding) ? binding : null
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
