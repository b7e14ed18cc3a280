import type { MiddlewareHandler } from 'hono'
import { cors as honoCors } from 'hono/cors'

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
const PREFLIGHT_MAX_AGE = 600

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
 * CORS for the listed origins only, by hono/cors. A request whose `Origin` is listed gets
 * `Access-Control-Allow-Origin: <that origin>`; a preflight (`OPTIONS` with
 * `Access-Control-Request-Method`) from it is answered 204 with the allowed methods and headers.
 * Any other origin gets no CORS header, and its preflight is routed like any request (404).
 * Every response carries `Vary: Origin`, since it depends on the origin. No credentials mode:
 * the API authenticates with bearer tokens, not cookies.
 *
 * hono/cors answers every OPTIONS as a preflight and names the exposed headers to every origin,
 * so this wrapper hands it only what is CORS for a listed origin: the preflights (to one
 * instance) and the other requests but plain OPTIONS (to another). Its preflight answer also
 * varies on `Access-Control-Request-Headers` and has no `Content-Length`; the allowed headers
 * are a fixed list, so the answer is put back to `Vary: Origin` and given `Content-Length: 0`.
 */
export function cors(options: CorsOptions): MiddlewareHandler {
  for (const origin of options.origins) {
    const problem = originProblem(origin)
    if (problem !== null) throw new RangeError(`cors.origins: ${problem}`)
  }
  const allowed = new Set(options.origins)
  const origin = [...allowed]
  const preflight = honoCors({
    origin,
    // hono/cors joins the lists with ',': one item each keeps the wording of the constants.
    allowMethods: [CORS_ALLOW_METHODS],
    allowHeaders: [CORS_ALLOW_HEADERS],
    maxAge: PREFLIGHT_MAX_AGE,
  })
  const request = honoCors({ origin, exposeHeaders: [CORS_EXPOSE_HEADERS] })

  return async (c, next) => {
    const from = c.req.header('Origin')
    if (from !== undefined && allowed.has(from)) {
      if (c.req.method !== 'OPTIONS') return request(c, next)
      if (c.req.header('Access-Control-Request-Method')) {
        const answer = (await preflight(c, next)) as Response
        // Hono copies the context's headers onto a returned answer: both are put right.
        for (const headers of [c.res.headers, answer.headers]) headers.set('Vary', 'Origin')
        answer.headers.set('Content-Length', '0')
        return answer
      }
    }
    // Not CORS (another origin, none, or a plain OPTIONS): routed as usual.
    await next()
    c.header('Vary', 'Origin', { append: true })
    if (from !== undefined && allowed.has(from)) {
      c.header('Access-Control-Allow-Origin', from)
      c.header('Access-Control-Expose-Headers', CORS_EXPOSE_HEADERS)
    }
  }
}
