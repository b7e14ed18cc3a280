import type { Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import { madeApart } from './errors.js'

// Answers that carry credentials, or a step of a sign-in, are never cached, whatever their status:
// the headers that say so, set where they cost least.

/** Token responses are credentials: never cached (RFC 6749 §5.1), whatever their status. */
export const noStore = createMiddleware(async (c, next) => {
  // Set before the handler answers, so an answer made through the context (`c.json`) carries them
  // as it is made. Its headers are never read back: that builds a Headers object for every answer
  // and makes @hono/node-server rebuild it as a full Response.
  c.header('Cache-Control', 'no-store')
  c.header('Pragma', 'no-cache')
  await next()
  noStoreApart(c)
})

/**
 * noStore for a route whose own answers carry these headers as they are made: only an answer made
 * apart from the context (errors.ts, as the app's answer to a thrown error) gets them added.
 */
export const noStoreMadeApart = createMiddleware(async (c, next) => {
  await next()
  noStoreApart(c)
})

/** Adds the no-store headers to an answer made apart from the context, which has a Headers object already. */
function noStoreApart(c: Context) {
  const answer = c.res
  if (madeApart(answer)) {
    answer.headers.set('Cache-Control', 'no-store')
    answer.headers.set('Pragma', 'no-cache')
  }
}

/**
 * The headers of a JSON answer that is never stored, as a plain record: an answer made with them
 * is written as it is, without a Headers object (resource servers introspect for every request).
 */
const NO_STORE_JSON: Readonly<Record<string, string>> = {
  'Content-Type': 'application/json',
  'Cache-Control': 'no-store',
  Pragma: 'no-cache',
  'X-Content-Type-Options': 'nosniff',
}

/** NO_STORE_JSON but its type: what any answer made apart from the context that is never stored carries. */
export const NO_STORE_APART: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(NO_STORE_JSON).filter(([name]) => name !== 'Content-Type'),
)

/** A JSON answer that is never stored, made apart from the context with a plain record of headers. */
export const noStoreJson = (status: number, body: unknown): Response =>
  new Response(JSON.stringify(body), { status, headers: NO_STORE_JSON })
