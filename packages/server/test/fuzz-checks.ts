// The rules every response must keep, whatever was sent: no 5xx, the documented body shape for
// its route and status, and nothing of the server's insides (stack frames, file paths).

import type { Route, SeenRequest } from './fuzz-oracle.js'
import { headerOf, type RawOutcome, type RawResponse } from './fuzz-raw-http.js'

/** Statuses Node's HTTP parser answers itself, before the app, always with an empty body. */
const TRANSPORT_STATUSES = new Set([400, 408, 413, 414, 417, 431])

/** What must never appear in a body, unless the request itself carried it (an echoed field). */
const LEAKS: ReadonlyArray<[string, RegExp]> = [
  ['a stack frame', /\bat\s+\S+\s+\(?[^\s()]+:\d+:\d+\)?/],
  ['an error name', /\b\w*Error:/],
  ['a file path', /\/work\b|\/tmp\b|node_modules|\.js:|\.ts:/],
  ['HTML', /<html|<pre|<!doctype/i],
]

type Json = Record<string, unknown>

function parseJson(response: RawResponse): { value: unknown } | null {
  try {
    return { value: JSON.parse(response.body.toString('utf8')) }
  } catch {
    return null
  }
}

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const keysAre = (value: Json, keys: string[]) =>
  Object.keys(value).sort().join(',') === [...keys].sort().join(',')

/** Routes a person's own session calls, answered with JSON (or empty: 204, 401, most 404s). */
const PERSON_ROUTES = new Set(['signin-passkey', 'mfa', 'passkeys'])

/** The shape of an answer of the sign-in page: a page of HTML, or a redirect where it ends. */
function signInPageProblem(response: RawResponse): string | null {
  const { status } = response
  if (status === 302 || status === 303)
    return headerOf(response, 'location') && response.body.length === 0
      ? null
      : `${status} without a Location`
  const html = headerOf(response, 'content-type') === 'text/html; charset=utf-8'
  return html && [200, 400, 401, 403, 429].includes(status) ? null : `the sign-in page answered ${status}`
}

/** The shape of an answer of a person's routes (see PERSON_ROUTES) other than 200, 204, 401. */
function personProblem(route: Route, status: number, body: unknown, response: RawResponse): string | null {
  if (status === 201) return route.kind === 'passkeys' && isObject(body) ? null : `201 of ${route.kind}`
  if (status === 429 && route.kind === 'mfa') {
    // A second factor's code throttled like a password: RFC 6749's error.
    return isObject(body) &&
      keysAre(body, ['error', 'error_description']) &&
      headerOf(response, 'retry-after')
      ? null
      : '429 of a code is not {error, error_description} with Retry-After'
  }
  if (![400, 403, 404, 409, 413, 429].includes(status))
    return `undocumented status ${status} for ${route.kind}`
  if (!isObject(body) || !keysAre(body, ['code', 'message'])) return `${status} is not {code, message}`
  return typeof body.code === 'string' && typeof body.message === 'string'
    ? null
    : 'code or message is not text'
}

/**
 * The shape of an answer of fleet mode's routes: the instances' (a desired state, 304, 204, a
 * refusal as for reports, `{code, message}`) and the people's (a list, 204, empty 401 and 404).
 */
function fleetProblem(request: SeenRequest, route: Route, response: RawResponse): string | null {
  const { status } = response
  const empty = response.body.length === 0
  if (status === 304 || status === 204 || status === 404)
    return empty ? null : `${status} of ${route.kind} with a body`
  // A HEAD is answered as its GET would be, without the body.
  if (request.method === 'HEAD')
    return [200, 400, 401, 409, 429].includes(status) ? null : `HEAD answered ${status}`
  const instance = route.kind === 'fleet-instance'
  if (instance && (status === 401 || status === 429)) return reportRefusalProblem(response)
  if (!instance && status === 401) return empty ? null : '401 with a body'
  const parsed = parseJson(response)
  if (parsed === null) return `${status} of ${route.kind} whose body is not JSON`
  const body = parsed.value
  if (status === 200) {
    if (!instance) return Array.isArray(body) ? null : 'GET /fleet/instances 200 is not an array'
    return isObject(body) && typeof body.version === 'string' && Array.isArray(body.modules)
      ? null
      : 'a poll 200 is not a desired state'
  }
  if ([400, 409, 413, 415].includes(status)) {
    const keys = isObject(body) ? Object.keys(body).sort().join(',') : ''
    return ['code,message', 'code,instance,message'].includes(keys)
      ? null
      : `${status} of ${route.kind} is not {code, message}`
  }
  return `undocumented status ${status} for ${route.kind}`
}

/** The body shape of an app response, or a problem. */
function shapeProblem(request: SeenRequest, route: Route, response: RawResponse): string | null {
  const { status } = response
  const empty = response.body.length === 0
  if (route.kind === 'fleet-instance' || route.kind === 'fleet-people')
    return fleetProblem(request, route, response)
  if (route.kind === 'report' && (status === 401 || status === 429)) return reportRefusalProblem(response)
  // Only a passkey not found says so in a body (`passkey_not_found`).
  if (status === 404 && !empty && route.kind === 'passkeys' && request.method === 'DELETE') {
    const parsed = parseJson(response)
    return parsed !== null && isObject(parsed.value) && parsed.value.code === 'passkey_not_found'
      ? null
      : '404 with a body other than passkey_not_found'
  }
  if (status === 401 || status === 404) return empty ? null : `${status} with a body`
  if (status === 204) {
    const removal = route.kind === 'node' || route.kind === 'mfa' || route.kind === 'passkeys'
    return request.method === 'DELETE' && removal && empty ? null : `204 for ${route.kind}`
  }
  if (request.method === 'HEAD') return status === 200 ? null : `HEAD answered ${status}`
  if (route.kind === 'signin') return signInPageProblem(response)
  if (route.kind === 'console') {
    const html = headerOf(response, 'content-type') === 'text/html; charset=utf-8'
    const csp = /script-src 'self'/.test(headerOf(response, 'content-security-policy') ?? '')
    return status === 200 && html && csp
      ? null
      : `the console's page answered ${status} without HTML under its CSP`
  }
  if (status === 200 && route.kind === 'revoke') return empty ? null : 'revoke 200 with a body'
  const parsed = parseJson(response)
  if (parsed === null) return `${status} whose body is not JSON`
  if (headerOf(response, 'content-type')?.split(';')[0] !== 'application/json') {
    return `JSON without Content-Type: application/json`
  }
  const body = parsed.value
  const oauth = route.kind === 'token' || route.kind === 'revoke'
  const admin =
    route.kind === 'report' ||
    route.kind === 'settings' ||
    route.kind === 'nodes' ||
    route.kind === 'install' ||
    route.kind.startsWith('node')
  if (status === 200) {
    if (route.kind === 'token') {
      return isObject(body) &&
        keysAre(body, ['access_token', 'expires_in', 'token_type']) &&
        typeof body.access_token === 'string' &&
        Number.isInteger(body.expires_in) &&
        body.token_type === 'Bearer'
        ? null
        : 'token 200 is not {access_token, expires_in, token_type}'
    }
    if (route.kind === 'nodes') return Array.isArray(body) ? null : 'GET /nodes 200 is not an array'
    if (route.kind === 'report')
      return isObject(body) && keysAre(body, ['accepted']) && Number.isInteger(body.accepted)
        ? null
        : 'report 200 is not {accepted}'
    if (route.kind === 'none' || route.kind === 'node-unparsed') return '200 for a path that names nothing'
    return isObject(body) ? null : `200 of ${route.kind} is not an object`
  }
  if (PERSON_ROUTES.has(route.kind)) return personProblem(route, status, body, response)
  if (oauth && (status === 400 || status === 413 || status === 429)) {
    if (!isObject(body) || !keysAre(body, ['error', 'error_description'])) {
      return `${status} of ${route.kind} is not {error, error_description}`
    }
    if (typeof body.error !== 'string' || typeof body.error_description !== 'string') {
      return 'error or error_description is not a string'
    }
    if (status === 429 && !/^\d+$/.test(headerOf(response, 'retry-after') ?? ''))
      return '429 without Retry-After'
    return null
  }
  if (admin && (status === 400 || status === 413)) {
    if (!isObject(body) || typeof body.code !== 'string' || typeof body.message !== 'string') {
      return `${status} is not {code, message}`
    }
    const keys = body.code === 'type_in_use' ? ['code', 'message', 'types'] : ['code', 'message']
    return keysAre(body, keys) ? null : `${status} has other fields than ${keys.join(', ')}`
  }
  return `undocumented status ${status} for ${route.kind}`
}

/**
 * The refusal of a report: 401 `invalid_client` with a Basic challenge; 429 for too many wrong
 * secrets (`temporarily_unavailable`) or past the reporter's pace (`too_many_events`), each with
 * Retry-After.
 */
function reportRefusalProblem(response: RawResponse): string | null {
  const parsed = parseJson(response)
  const body = parsed === null ? null : parsed.value
  if (!isObject(body)) return `report ${response.status} whose body is not a JSON object`
  if (response.status === 401) {
    return body.error === 'invalid_client' &&
      headerOf(response, 'www-authenticate') === 'Basic realm="flowadmin"'
      ? null
      : 'report 401 is not invalid_client with a Basic challenge'
  }
  if (!/^\d+$/.test(headerOf(response, 'retry-after') ?? '')) return 'report 429 without Retry-After'
  const throttled = keysAre(body, ['error', 'error_description']) && body.error === 'temporarily_unavailable'
  const paced = keysAre(body, ['code', 'message']) && body.code === 'too_many_events'
  return throttled || paced ? null : 'report 429 is neither temporarily_unavailable nor too_many_events'
}

/**
 * Problems with one outcome. `sent`: the request's bytes, so that a field the server echoes
 * (a grant type, a repeated parameter's name) is not taken for a leak.
 */
export function responseProblems(
  request: SeenRequest,
  route: Route,
  outcome: RawOutcome,
  sent: Buffer,
): string[] {
  if (outcome.kind !== 'response') {
    // A request whose body never completes, or CONNECT (no tunnel here), may get no answer.
    const allowed = request.broken || request.method === 'CONNECT'
    return allowed
      ? []
      : [`no response (${outcome.kind}): ${outcome.received.toString('latin1').slice(0, 200)}`]
  }
  const { response } = outcome
  const problems: string[] = []
  if (response.status >= 500) problems.push(`a ${response.status}`)
  const text = response.body.toString('utf8')
  const sentText = sent.toString('utf8')
  // The console's and the sign-in page are HTML by design; they name no path and no error.
  const html = route.kind === 'console' || route.kind === 'signin'
  const leaks = html ? LEAKS.filter(([what]) => what !== 'HTML') : LEAKS
  for (const [what, pattern] of leaks) {
    const found = pattern.exec(text)?.[0]
    if (found !== undefined && !sentText.includes(found)) problems.push(`${what} in the body: ${found}`)
  }
  const fromApp = headerOf(response, 'x-content-type-options') === 'nosniff'
  if (!fromApp) {
    // Refused by the HTTP parser or the Node adapter before the app saw it.
    if (!TRANSPORT_STATUSES.has(response.status)) problems.push(`${response.status} without nosniff`)
    if (response.body.length > 0) problems.push(`a body on a ${response.status} before the app`)
  } else {
    const problem = shapeProblem(request, route, response)
    if (problem !== null) problems.push(problem)
  }
  return problems
}
