// What the fuzzer expects of one request, from the documented rules alone
// (packages/adapter-http/README.md): which route it reaches, and whether it is a valid toggle or
// revoke, the only requests allowed to change state.
import { DEFAULT_MAX_BODY_BYTES } from '@flowadmin/adapter-http'
import { MODULES } from './target-server.js'

/** The request as the server receives it. */
export interface SeenRequest {
  method: string
  /** The request-target of the request line. */
  target: string
  /** Header lines in order, values with surrounding whitespace removed (Host included). */
  headers: Array<[string, string]>
  /** The body the server reads, after framing (a short Content-Length cuts it). */
  body: Buffer
  /** Not a complete, well-formed HTTP/1.1 request: the server may refuse it before the app. */
  broken: boolean
}

export type Route =
  | { kind: 'login' | 'token' | 'revoke' | 'settings' | 'nodes' | 'install' | 'none' }
  /** An instance's report of audit events (POST /audit/events). */
  | { kind: 'report' }
  /** The sign-in page and its form steps: HTML pages, or a redirect where the sign-in ends. */
  | { kind: 'signin' }
  /** JSON routes: the passkey button's calls, a person's second factor, their passkeys. */
  | { kind: 'signin-passkey' | 'mfa' | 'passkeys' }
  /** Fleet mode: an instance's own routes (HTTP Basic), and the people's (a bearer token). */
  | { kind: 'fleet-instance' | 'fleet-people' }
  /** The console's page (GET and HEAD of `/`): HTML, not the API. */
  | { kind: 'console' }
  | { kind: 'node'; module: string; set: string | null }
  /** Below /nodes/ but not a module or node set name. */
  | { kind: 'node-unparsed' }

/** Who a token belongs to while it is valid. */
export interface Holder {
  username: string
  /** The token's scope is `*`; otherwise `read`. */
  all: boolean
}

const UNRESERVED = /^[A-Za-z0-9\-._~]$/
const MODULE_PATH = /^((?:@[^/]+\/)?[^/]+)$/
const SET_PATH = /^((?:@[^/]+\/)?[^/]+)\/([^/]+)$/

/** The path of a request-target, normalised as a URL (dot segments removed); null: none. */
function pathOf(target: string): string | null {
  try {
    if (/^https?:\/\//i.test(target)) return new URL(target).pathname
    return target.startsWith('/') ? new URL(`http://host${target}`).pathname : null
  } catch {
    return null
  }
}

/** Escapes of unreserved characters decoded (RFC 3986 §6.2.2.2); other escapes kept. */
const normalise = (segment: string) =>
  segment.replace(/%([0-9A-Fa-f]{2})/g, (escaped, hex: string) => {
    const char = String.fromCharCode(Number.parseInt(hex, 16))
    return UNRESERVED.test(char) ? char : escaped
  })

/** The route a request reaches. */
export function routeOf(method: string, target: string): Route {
  const path = pathOf(target)
  if (path === null) return { kind: 'none' }
  const segments = path.split('/')
  const read = method === 'GET' || method === 'HEAD'
  switch (segments.map(normalise).join('/')) {
    case '/':
      return { kind: read ? 'console' : 'none' }
    case '/auth/login':
      return { kind: read ? 'login' : 'none' }
    case '/auth/token':
      return { kind: method === 'POST' ? 'token' : 'none' }
    case '/auth/revoke':
      return { kind: method === 'POST' ? 'revoke' : 'none' }
    case '/settings':
      return { kind: read ? 'settings' : 'none' }
    case '/nodes':
      return { kind: read ? 'nodes' : method === 'POST' ? 'install' : 'none' }
    case '/audit/events':
      return { kind: method === 'POST' ? 'report' : 'none' }
    case '/auth/signin':
      return { kind: read || method === 'POST' ? 'signin' : 'none' }
    case '/auth/mfa':
      return { kind: read || method === 'DELETE' ? 'mfa' : 'none' }
    case '/auth/mfa/totp':
    case '/auth/mfa/totp/confirm':
      return { kind: method === 'POST' ? 'mfa' : 'none' }
    case '/auth/passkeys':
      // The removal's route, `/auth/passkeys/*`, takes the bare path too (an id of nothing).
      return { kind: read || method === 'POST' || method === 'DELETE' ? 'passkeys' : 'none' }
    case '/auth/passkeys/options':
      return { kind: method === 'POST' || method === 'DELETE' ? 'passkeys' : 'none' }
  }
  const normalised = segments.map(normalise).join('/')
  // Every POST below /auth/signin/ is checked for its site before the router (403 from another).
  if (normalised.startsWith('/auth/signin/') && method === 'POST')
    return { kind: normalised.startsWith('/auth/signin/passkey') ? 'signin-passkey' : 'signin' }
  if (normalised.startsWith('/auth/passkeys/') && method === 'DELETE') return { kind: 'passkeys' }
  if (segments.length < 3 || normalise(segments[1] as string) !== 'nodes') return { kind: 'none' }
  if (!read && method !== 'PUT' && method !== 'DELETE') return { kind: 'none' }
  // The rest is decoded once, then matched as `name`, `@scope/name`, optionally `/set`.
  let rest: string
  try {
    rest = decodeURIComponent(segments.slice(2).join('/'))
  } catch {
    return { kind: 'node-unparsed' }
  }
  const module = MODULE_PATH.exec(rest)
  if (module) return { kind: 'node', module: module[1] as string, set: null }
  const set = SET_PATH.exec(rest)
  if (set) return { kind: 'node', module: set[1] as string, set: set[2] as string }
  return { kind: 'node-unparsed' }
}

/** The joined value of every header line named `name` (RFC 9110 §5.3), or null. */
export function headerValue(request: SeenRequest, name: string): string | null {
  const values = request.headers.filter(([key]) => key.toLowerCase() === name).map(([, value]) => value)
  return values.length === 0 ? null : values.join(', ')
}

const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i

/** The holder of the request's bearer token when it is well-formed and valid, else null. */
export function holderOf(request: SeenRequest, holders: (token: string) => Holder | null): Holder | null {
  const header = headerValue(request, 'authorization')
  const token = header === null ? undefined : BEARER.exec(header)?.[1]
  return token === undefined ? null : holders(token)
}

function mediaType(request: SeenRequest): string | null {
  const header = headerValue(request, 'content-type')
  return header === null ? null : (header.split(';')[0] ?? '').trim().toLowerCase()
}

/** The body's fields when it is a JSON object or a form without repeated names; else null. */
export function fieldsOf(request: SeenRequest, formats: ReadonlyArray<'json' | 'form'>): object | null {
  const type = mediaType(request)
  const format =
    type === 'application/json' ? 'json' : type === 'application/x-www-form-urlencoded' ? 'form' : null
  if (format === null || !formats.includes(format) || request.body.length > DEFAULT_MAX_BODY_BYTES)
    return null
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(request.body)
  } catch {
    return null
  }
  if (format === 'form') {
    const params = new URLSearchParams(text)
    const names = [...params.keys()]
    return new Set(names).size === names.length ? Object.fromEntries(params) : null
  }
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : null
  } catch {
    return null
  }
}

/** A valid toggle: the node sets it sets, and whether the flows' use of a type refuses it. */
export interface Toggle {
  setIds: string[]
  enabled: boolean
  refusedInUse: boolean
}

/** The toggle a PUT makes when it is valid (a write token, a known name, a good body), else null. */
export function toggleOf(request: SeenRequest, holders: (token: string) => Holder | null): Toggle | null {
  if (request.broken || request.method !== 'PUT') return null
  const route = routeOf(request.method, request.target)
  if (route.kind !== 'node') return null
  const module = MODULES.find((candidate) => candidate.name === route.module)
  const sets = module?.sets.filter((set) => route.set === null || set.name === route.set) ?? []
  if (!module || sets.length === 0) return null
  if (!holderOf(request, holders)?.all) return null
  const fields = fieldsOf(request, ['json']) as { enabled?: unknown } | null
  if (typeof fields?.enabled !== 'boolean') return null
  return {
    setIds: sets.map((set) => `${module.name}/${set.name}`),
    enabled: fields.enabled,
    refusedInUse: !fields.enabled && sets.some((set) => set.inUse),
  }
}

/** For a valid revoke request: the token it names; null when the request is not valid. */
export function revokedBy(
  request: SeenRequest,
  holders: (token: string) => Holder | null,
): { token: string; holder: Holder } | null {
  if (request.broken || routeOf(request.method, request.target).kind !== 'revoke') return null
  const holder = holderOf(request, holders)
  const fields = fieldsOf(request, ['json', 'form']) as { token?: unknown } | null
  if (holder === null || typeof fields?.token !== 'string' || fields.token === '') return null
  return { token: fields.token, holder }
}
