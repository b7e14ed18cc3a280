import type { MiddlewareHandler } from 'hono'
import { emptyResponse } from './errors.js'

/** Cross-origin access for browser clients served from other origins. */
export interface CorsOptions {
  /**
   * The exact origins (`scheme://host[:port]`, as browsers send them) allowed to call the API.
   * No wildcard: each origin is named.
   */
  origins: readonly string[]
}

/** What a preflight allows: every method and request header the API uses, nothing more. */
export const CORS_ALLOW_METHODS = 'GET, HEAD, POST, PUT, DELETE'
export const CORS_ALLOW_HEADERS = 'Authorization, Content-Type'
/** Response headers a page may read besides the CORS-safelisted ones. */
export const CORS_EXPOSE_HEADERS = 'Retry-After, WWW-Authenticate'
/** Seconds a browser may cache a preflight answer. */
const PREFLIGHT_MAX_AGE = '600'

/**
 * Why `origin` is not an origin a browser would send, or null when it is one: `http:` or
 * `https:`, lower-case host, no default port, no path and no trailing slash.
 */
export function originProblem(origin: string): string | null {
  let url: URL
  try {
    url = new URL(origin)
  } catch {
    return `"${origin}" is not an origin (e.g. "https://editor.example")`
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `"${origin}" is not an http:// or https:// origin`
  }
  if (url.origin !== origin) {
    return `"${origin}" is not an origin as browsers send it; write "${url.origin}"`
  }
  return null
}

/**
 * CORS for the listed origins only. A request whose `Origin` is listed gets
 * `Access-Control-Allow-Origin: <that origin>`; a preflight (`OPTIONS` with
 * `Access-Control-Request-Method`) from it is answered 204 with the allowed methods and headers.
 * Any other origin gets no CORS header, and its preflight is routed like any request (404).
 * Every response carries `Vary: Origin`, since it depends on the origin. No credentials mode:
 * the API authenticates with bearer tokens, not cookies.
 */
export function cors(options: CorsOptions): MiddlewareHandler {
  for (const origin of options.origins) {
    const problem = originProblem(origin)
    if (problem !== null) throw new RangeError(`cors.origins: ${problem}`)
  }
  const allowed = new Set(options.origins)

  return async (c, next) => {
    const origin = c.req.header('Origin')
    const granted = origin !== undefined && allowed.has(origin) ? origin : null
    if (granted !== null && c.req.method === 'OPTIONS' && c.req.header('Access-Control-Request-Method')) {
      return emptyResponse(204, {
        'Access-Control-Allow-Origin': granted,
        'Access-Control-Allow-Methods': CORS_ALLOW_METHODS,
        'Access-Control-Allow-Headers': CORS_ALLOW_HEADERS,
        'Access-Control-Max-Age': PREFLIGHT_MAX_AGE,
        Vary: 'Origin',
      })
    }
    await next()
    c.header('Vary', 'Origin', { append: true })
    if (granted !== null) {
      c.header('Access-Control-Allow-Origin', granted)
      c.header('Access-Control-Expose-Headers', CORS_EXPOSE_HEADERS)
    }
  }
}
