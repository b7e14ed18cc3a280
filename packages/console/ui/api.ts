// The public admin API, as the console uses it: nothing here that a script could not do.
import type { inventoryEntry } from '@flowadmin/adapter-http'
import { hasPermission, type ModuleView, type NodeSetView } from '@flowadmin/core'
import type {
  PublicKeyCredentialCreationOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/browser'

export type NodeSet = NodeSetView
export type NodeModule = ModuleView

/** The API's root: the page lives at `<root>/`, this script at `<root>/console/`. */
const ROOT = new URL('../', import.meta.url)
const TOKEN_KEY = 'flowadmin.token'

export interface Prompt {
  id: string
  type: string
  label: string
}

export interface User {
  username?: string
  anonymous?: boolean
  permissions: string[]
}

/** Raised for a 401 with a token: it expired, was revoked, or no longer carries the right. */
export class SessionEnded extends Error {}

/** An answer the console shows as it is: the server's message, and when to retry if it said. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | undefined,
    readonly body: Record<string, unknown>,
  ) {
    super(message)
  }
}

export const token = {
  get: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (value: string) => sessionStorage.setItem(TOKEN_KEY, value),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
}

/** Seconds from a Retry-After header, or null. */
export function retryAfter(response: Response): number | null {
  const value = Number(response.headers.get('Retry-After'))
  return Number.isFinite(value) && value > 0 ? Math.ceil(value) : null
}

async function bodyOf(response: Response): Promise<Record<string, unknown>> {
  const text = await response.text()
  try {
    const parsed: unknown = JSON.parse(text)
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {}
  } catch {
    return {}
  }
}

const STATUS_TEXT: Record<number, string> = {
  403: 'Not allowed',
  404: 'Not found',
  413: 'The request is too large',
  500: 'The server failed; its log says why',
}

async function call(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers)
  const current = token.get()
  if (current !== null) headers.set('Authorization', `Bearer ${current}`)
  let response: Response
  try {
    response = await fetch(new URL(path, ROOT), { ...init, headers, cache: 'no-store' })
  } catch {
    throw new ApiError(
      'The server cannot be reached. Check that it is running, then try again.',
      0,
      undefined,
      {},
    )
  }
  if (response.status === 401 && current !== null) {
    if (/insufficient_scope/.test(response.headers.get('WWW-Authenticate') ?? '')) {
      throw new ApiError('Your account is not allowed to do this.', 401, 'insufficient_scope', {})
    }
    token.clear()
    throw new SessionEnded('Your session has ended (it expired or was revoked). Please log in again.')
  }
  return response
}

/** The JSON body of a successful answer; an ApiError with the server's message otherwise. */
export async function json<T>(path: string, init?: RequestInit): Promise<T> {
  const response = await call(path, init)
  const body = await bodyOf(response)
  if (response.ok) return body as T
  throw failure(response, body)
}

function failure(response: Response, body: Record<string, unknown>): ApiError {
  const message =
    (typeof body.message === 'string' && body.message) ||
    (typeof body.error_description === 'string' && body.error_description) ||
    STATUS_TEXT[response.status] ||
    `The server answered ${response.status}`
  const code =
    typeof body.code === 'string' ? body.code : typeof body.error === 'string' ? body.error : undefined
  const wait = retryAfter(response)
  return new ApiError(
    wait !== null && response.status === 503 ? `The server is busy; retry in ${wait} s.` : message,
    response.status,
    code,
    body,
  )
}

/** The body of a successful answer as a file (an export, a download); an ApiError otherwise. */
export async function blobOf(path: string, init?: RequestInit): Promise<Blob> {
  const response = await call(path, init)
  if (!response.ok) throw failure(response, await bodyOf(response))
  return response.blob()
}

/** Resolves when the answer is a success; an ApiError with the server's message otherwise. */
export async function succeed(path: string, init: RequestInit): Promise<void> {
  const response = await call(path, init)
  if (!response.ok) throw failure(response, await bodyOf(response))
}

export const jsonBody = (value: unknown): RequestInit => ({
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify(value),
})

/** The identity provider's sign-in button, as GET /auth/login announces it. */
export interface SignInButton {
  type: 'button'
  label: string
  url: string
}

/** `{}` when the server has no login; its prompts otherwise, and the sign-in button when it has one. */
export interface LoginScheme {
  type?: string
  prompts?: Array<Prompt | SignInButton>
  sso?: SignInButton
}

export async function loginScheme(): Promise<LoginScheme> {
  return json('auth/login')
}

/** What the sign-in page says first, by name: why the person is there. */
export type Notice =
  | 'logged_out'
  | 'session_ended'
  | 'ended_here'
  | 'signed_out_everywhere'
  | 'sign_in_failed'

/** flowadmin's sign-in page, which sends the person back to this page with a one-time code. */
export function signInPage(notice: Notice | null): string {
  const url = new URL('auth/signin', ROOT)
  url.searchParams.set('return_to', location.pathname)
  if (notice !== null) url.searchParams.set('notice', notice)
  return url.href
}

/**
 * The one-time code a sign-in with the identity provider left in this page's address (its
 * fragment, never sent to a server), taken out of the address at once.
 */
export function takeSignInCode(): string | null {
  const code = /^#sso_code=([\w-]+)$/.exec(location.hash)?.[1]
  if (code === undefined) return null
  history.replaceState(null, '', `${location.pathname}${location.search}`)
  return code
}

/**
 * Trades the one-time code for a token (the authorization code grant): the browser's sign-in
 * cookie goes with it, so only the browser that started the sign-in can.
 */
export async function exchangeSignInCode(code: string): Promise<LoginResult> {
  const form = new URLSearchParams({ grant_type: 'authorization_code', code, client_id: 'service-editor' })
  const response = await call('auth/token', { method: 'POST', body: form })
  const body = await bodyOf(response)
  if (response.ok && typeof body.access_token === 'string') {
    token.set(body.access_token)
    return { ok: true }
  }
  return { ok: false, message: `The sign-in did not complete: ${failure(response, body).message}` }
}

export type LoginResult = { ok: true } | { ok: false; message: string }

/** Revokes this tab's token and forgets it, whatever the server says. */
export async function logOut(): Promise<void> {
  const current = token.get()
  if (current === null) return
  try {
    await call('auth/revoke', { method: 'POST', body: new URLSearchParams({ token: current }) })
  } catch {
    // Forgotten below either way: a token the server no longer knows is already logged out.
  } finally {
    token.clear()
  }
}

/**
 * Who this tab's token is, and the server's version: from `GET /settings`, or, for a person whose
 * grants give no `settings.read` on flowadmin (a contractor with a role on one group of instances),
 * from their own access (`GET /auth/access`), without the version.
 */
export async function whoAmI(): Promise<{ version: string | null; user: User }> {
  try {
    return await json<{ version: string; user: User }>('settings')
  } catch (error) {
    if (!(error instanceof ApiError && error.code === 'insufficient_scope')) throw error
    const own = await json<{ username: string; scopes: Record<string, string[]> }>('auth/access')
    return { version: null, user: { username: own.username, permissions: own.scopes.flowadmin ?? [] } }
  }
}

export const listNodeSets = (): Promise<NodeSet[]> => json('nodes')

const modulePath = (module: string) => `nodes/${module.split('/').map(encodeURIComponent).join('/')}`

/** The module as the server stored it, its node sets in the console's order (see {@link inOrder}). */
export const setModule = async (module: string, enabled: boolean): Promise<NodeModule> =>
  inOrder(await json<NodeModule>(modulePath(module), { method: 'PUT', ...jsonBody({ enabled }) }))

export const setNodeSet = (module: string, set: string, enabled: boolean): Promise<NodeSet> =>
  json(`${modulePath(module)}/${encodeURIComponent(set)}`, { method: 'PUT', ...jsonBody({ enabled }) })

/** Installs a module from the registry (`version`: a semver range; the newest without it). */
export const installModule = (module: string, version: string | undefined): Promise<NodeModule> =>
  json('nodes', { method: 'POST', ...jsonBody(version === undefined ? { module } : { module, version }) })

/** Uninstalls a module and forgets its stored state. */
export const removeModule = (module: string): Promise<void> =>
  succeed(modulePath(module), { method: 'DELETE' })

/** What this server offers beyond the basics: its own OpenAPI document lists its routes. */
export interface Offers {
  install: boolean
  remove: boolean
  tokens: boolean
  resourceServers: boolean
  audit: boolean
  /** Fleet mode: the Node-RED instances and their drift. */
  fleet: boolean
  /** People's second factor (`/auth/mfa`): only when auth is on. */
  mfa: boolean
  /** A person's own access (`/auth/access`): only when auth is on. */
  access: boolean
  /** The groups of instances (`/fleet/groups`): fleet mode with auth on. */
  groups: boolean
  /** Snapshots of flows and their rollouts to groups (`/fleet/rollouts`): fleet mode. */
  flows: boolean
}

export async function offers(): Promise<Offers> {
  try {
    const { paths = {} } = await json<{ paths?: Record<string, Record<string, unknown>> }>('openapi.json')
    return {
      install: paths['/nodes']?.post !== undefined,
      remove: paths['/nodes/{module}']?.delete !== undefined,
      tokens: paths['/auth/tokens']?.get !== undefined,
      resourceServers: paths['/auth/resource-servers']?.get !== undefined,
      audit: paths['/audit']?.get !== undefined,
      fleet: paths['/fleet/instances']?.get !== undefined,
      mfa: paths['/auth/mfa']?.get !== undefined,
      access: paths['/auth/access']?.get !== undefined,
      groups: paths['/fleet/groups']?.get !== undefined,
      flows: paths['/fleet/rollouts']?.get !== undefined,
    }
  } catch {
    return {
      install: false,
      remove: false,
      tokens: false,
      resourceServers: false,
      audit: false,
      fleet: false,
      mfa: false,
      access: false,
      groups: false,
      flows: false,
    }
  }
}

/** A session or API token as the inventory lists it: never the token itself. */
export type TokenEntry = ReturnType<typeof inventoryEntry>

export interface CreatedToken {
  id: string
  name: string
  token: string
  scope: string[]
  audience: string
  expires_at: string | null
}

/** The caller's own sessions and API tokens. */
export const listTokens = async (): Promise<TokenEntry[]> =>
  (await json<{ tokens: TokenEntry[] }>('auth/tokens')).tokens

/** The audience of tokens for this API; any other is a resource server's id. */
export const FLOWADMIN_AUDIENCE = 'flowadmin'

/**
 * Mints a named API token for `audience` (this API, or one resource server); its secret is in
 * this answer only.
 */
export const createToken = (
  name: string,
  scope: string,
  expiresIn: number,
  audience: string = FLOWADMIN_AUDIENCE,
): Promise<CreatedToken> =>
  json('auth/tokens', { method: 'POST', ...jsonBody({ name, scope, expires_in: expiresIn, audience }) })

/** Ends one session or API token. */
export const endToken = (id: string): Promise<void> =>
  succeed(`auth/tokens/${encodeURIComponent(id)}`, { method: 'DELETE' })

/** Ends every session and API token of `user`: "sign out everywhere". */
export const endAllTokens = (user: string): Promise<void> =>
  succeed(`auth/tokens?${new URLSearchParams({ user })}`, { method: 'DELETE' })

/** The caller's second factor: TOTP's state and the unused recovery codes. */
export interface FactorStatus {
  totp: 'none' | 'pending' | 'enrolled'
  recovery_codes: number
  /** When the app was set up; null while there is none. */
  enrolled_at: string | null
  /** Set up during a sign-in, with the password alone (the policy asked for it there). */
  enrolled_at_sign_in: boolean
}

/** A new TOTP secret, shown once: as text, as its `otpauth://` URI, and as a QR code (a data: URL). */
export interface TotpEnrolment {
  secret: string
  uri: string
  qr: string
}

export const factorStatus = (): Promise<FactorStatus> => json('auth/mfa')

/** Begins a TOTP enrolment (replacing one not yet confirmed). */
export const startTotp = (): Promise<TotpEnrolment> => json('auth/mfa/totp', { method: 'POST' })

/** Confirms the enrolment with one code; the ten recovery codes, in this answer only. */
export const confirmTotp = async (code: string): Promise<string[]> =>
  (
    await json<{ recovery_codes: string[] }>('auth/mfa/totp/confirm', {
      method: 'POST',
      ...jsonBody({ code }),
    })
  ).recovery_codes

/** Removes every second factor of `user` and ends their sessions (needs `*`); false: they had none. */
export async function removeFactors(user: string): Promise<boolean> {
  const response = await call(`auth/mfa?${new URLSearchParams({ user })}`, { method: 'DELETE' })
  if (response.status === 404) return false
  if (!response.ok) throw failure(response, await bodyOf(response))
  return true
}

/** The people who have a session or API token now (needs `*`): whom an administrator may pick. */
export const listPeople = async (): Promise<string[]> => {
  const { tokens } = await json<{ tokens: Array<{ user?: string }> }>(
    `auth/tokens?${new URLSearchParams({ user: '*' })}`,
  )
  return [...new Set(tokens.flatMap((entry) => (typeof entry.user === 'string' ? [entry.user] : [])))].sort()
}

/** A passkey of the caller, as `GET /auth/passkeys` lists it. */
export interface Passkey {
  id: string
  name: string
  created_at: string
  last_used_at: string | null
  backed_up: boolean
}

export const listPasskeys = async (): Promise<Passkey[]> =>
  (await json<{ passkeys: Passkey[] }>('auth/passkeys')).passkeys

/** The options for the browser's passkey creation, as @simplewebauthn/server made them. */
export const passkeyOptions = async (): Promise<PublicKeyCredentialCreationOptionsJSON> =>
  (
    await json<{ options: PublicKeyCredentialCreationOptionsJSON }>('auth/passkeys/options', {
      method: 'POST',
    })
  ).options

/** Saves the passkey the browser created, under `name`. */
export const addPasskey = async (name: string, response: RegistrationResponseJSON): Promise<Passkey> =>
  (await json<{ passkey: Passkey }>('auth/passkeys', { method: 'POST', ...jsonBody({ name, response }) }))
    .passkey

export const removePasskey = (id: string): Promise<void> =>
  succeed(`auth/passkeys/${encodeURIComponent(id)}`, { method: 'DELETE' })

/**
 * A module with its node sets by id, the order of `GET /nodes`. The module's own answers
 * (`PUT /nodes/:module`) list them in its package.json order instead: without this, switching a
 * module off would shuffle its sets on the page, and a reload would shuffle them back.
 */
function inOrder(module: NodeModule): NodeModule {
  const nodes = [...module.nodes].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  return { ...module, nodes }
}

/** Groups node sets by module, modules by name. */
export function modulesOf(sets: NodeSet[]): NodeModule[] {
  const modules = new Map<string, NodeModule>()
  for (const set of sets) {
    const module = modules.get(set.module) ?? { name: set.module, version: set.version, nodes: [] }
    module.nodes.push(set)
    modules.set(set.module, module)
  }
  return [...modules.values()].map(inOrder).sort((a, b) => a.name.localeCompare(b.name))
}

/** True when these permissions let the user switch modules. */
export const canWriteNodes = (permissions: string[]): boolean => hasPermission(permissions, 'nodes.write')

/** True when these permissions are everything (`*`), which instance-wide views need. */
export const isAdmin = (permissions: string[]): boolean => hasPermission(permissions, '*')

/** True when these permissions let the user read flowadmin's node modules (`nodes.read`). */
export const canReadNodes = (permissions: string[]): boolean => hasPermission(permissions, 'nodes.read')

/** True when these permissions let the user read flowadmin's own lists (`read`). */
export const canRead = (permissions: string[]): boolean => hasPermission(permissions, 'read')

/** True when these permissions let the user read flows (`flows.read`; `read` covers it). */
export const canReadFlows = (permissions: string[]): boolean => hasPermission(permissions, 'flows.read')

/** True when these permissions let the user upload and roll out flows (`flows.write`). */
export const canWriteFlows = (permissions: string[]): boolean => hasPermission(permissions, 'flows.write')

/** True when these permissions let the user read the trail. */
export const canReadAudit = (permissions: string[]): boolean => hasPermission(permissions, 'audit.read')

/** An event of the trail as `GET /audit` shows it. */
export interface AuditEvent {
  time: string
  instance: string
  actor: string | null
  event: string
  outcome: 'success' | 'failure'
  address: string | null
  address_reported: boolean
  details: Record<string, unknown>
}

/** The trail's filters, as the query of `GET /audit` takes them; empty ones are left out. */
export type AuditFilters = Partial<
  Record<'instance' | 'actor' | 'event' | 'outcome' | 'since' | 'until', string>
>

const auditQuery = (filters: AuditFilters, more: Record<string, string> = {}) =>
  new URLSearchParams(
    Object.entries({ ...filters, ...more }).filter(
      (entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== '',
    ),
  )

/** A page of the trail, newest first, and the cursor of the next (null: none). */
export const searchAudit = (
  filters: AuditFilters,
  cursor: string | null,
): Promise<{ events: AuditEvent[]; next: string | null }> =>
  json(`audit?${auditQuery(filters, cursor === null ? { limit: '50' } : { limit: '50', cursor })}`)

/** Every match, as the server streams it in `format` (CSV or NDJSON). */
export const exportAudit = (
  filters: AuditFilters,
  format: 'text/csv' | 'application/x-ndjson',
): Promise<Blob> => blobOf(`audit?${auditQuery(filters)}`, { headers: { Accept: format } })
