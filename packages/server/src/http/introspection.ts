// POST /auth/introspect answered on Node's request itself, in front of the app.
import type { IncomingMessage, ServerResponse } from 'node:http'
import {
  answerIntrospection,
  basicCredentials,
  type IntrospectionReply,
  introspectionFailure,
  type ResponseSample,
  readNodeBody,
} from '@flowadmin/adapter-http'
import type { ClientCredentials, Core } from '@flowadmin/core'

const FORM = 'application/x-www-form-urlencoded'
const ROUTE = '/auth/introspect'

export interface IntrospectionPathOptions {
  core: Core
  /** `httpAdminRoot`: '' or a path such as '/admin', without a trailing slash. */
  basePath: string
  /** `apiMaxLength`: a larger body is the app's to refuse. */
  maxBodyBytes: number
  /** The client's address, as the app works it out (trusted proxies). */
  clientAddress(request: IncomingMessage): string
  /** Called after each answer, as the app's `onResponse`. */
  onResponse?: ((sample: ResponseSample) => void) | undefined
  /** Called with what answering threw (the 500 and 503 paths), as the app's own reporting. */
  onThrown(error: unknown, request: IncomingMessage): void
}

/**
 * Resource servers introspect a token for every request their users make; through the app, the
 * web Request, Response and Headers objects made for each call cost more than the introspection
 * itself. This answers the calls that are plainly well formed (HTTP Basic credentials, a form body
 * with a Content-Length within the limit, no CORS `Origin`) on Node's request and response. Its
 * answers come from the same function as the route's (`answerIntrospection`), so they are the
 * route's answers; every other call, with whatever is odd about it, goes to the app untouched.
 */
export function introspectionPath(options: IntrospectionPathOptions) {
  const { core, maxBodyBytes, clientAddress, onResponse, onThrown } = options
  const path = `${options.basePath}${ROUTE}`

  /** The client's credentials when this request is one to answer here, else null. */
  function credentialsOf(request: IncomingMessage): ClientCredentials | null {
    if (!core.authEnabled || request.method !== 'POST' || request.url !== path) return null
    const { headers } = request
    if (headers.origin !== undefined || headers['transfer-encoding'] !== undefined) return null
    if (headers['content-type']?.toLowerCase() !== FORM) return null
    const length = Number(headers['content-length'])
    if (!Number.isSafeInteger(length) || length > maxBodyBytes) return null
    return basicCredentials(headers.authorization)
  }

  async function answer(
    request: IncomingMessage,
    response: ServerResponse,
    client: ClientCredentials,
  ): Promise<void> {
    const started = performance.now()
    let reply: IntrospectionReply
    try {
      const body = await readNodeBody(request, maxBodyBytes, ['form'])
      reply = await answerIntrospection(core, client, body, () => clientAddress(request))
    } catch (error) {
      try {
        onThrown(error, request)
      } catch {
        // A failing logger must not change the answer.
      }
      reply = introspectionFailure(error)
    }
    // The client may have gone (Node answers a body past requestTimeout with 408 itself).
    if (response.writableEnded || response.destroyed) return
    try {
      response.writeHead(reply.status, { ...reply.headers, 'content-length': Buffer.byteLength(reply.body) })
      response.end(reply.body)
    } catch {
      response.destroy()
      return
    }
    try {
      onResponse?.({
        method: 'POST',
        route: ROUTE,
        status: reply.status,
        seconds: (performance.now() - started) / 1000,
      })
    } catch {
      // Metrics must never change an answer.
    }
  }

  return {
    /** Answers `request` and returns true when it is one for here; returns false, touching nothing, otherwise. */
    handle(request: IncomingMessage, response: ServerResponse): boolean {
      const client = credentialsOf(request)
      if (client === null) return false
      void answer(request, response, client)
      return true
    },
  }
}

export type IntrospectionPath = ReturnType<typeof introspectionPath>
