import { type DomainError, type DomainErrorCode, type ErrorOf, isStoreUnavailable } from '@flowadmin/core'
import type { BodyProblem } from './body.js'

// The one place where outcomes become HTTP: domain errors, edge validation failures and the
// unexpected 500. Routes never pick a status for an error themselves.

/** Realm of every `WWW-Authenticate` challenge. */
export const REALM = 'flowadmin'

/**
 * The HTTP answer to a refusal or failure, before it becomes a Response; `body: null` means an
 * empty body. A plain value on purpose, not an Error: nothing throws it and it has no stack to
 * keep; it is data that `toResponse` turns into a Response.
 */
export interface ErrorAnswer {
  status: 400 | 401 | 403 | 404 | 409 | 413 | 429 | 500 | 503 | 504
  headers?: Record<string, string>
  body: Record<string, unknown> | null
}

/** What the mapping needs to know besides the error: whether a bearer token was presented. */
export interface ErrorContext {
  tokenSent: boolean
}

/** The RFC 6749 §5.2 error body of the token and revoke endpoints. */
export const oauthError = (
  status: 400 | 403 | 413 | 429 | 503,
  error: string,
  description: string,
): ErrorAnswer => ({
  status,
  body: { error, error_description: description },
})

/** The `{code, message}` body of every other route. */
export const adminError = (
  status: 400 | 403 | 404 | 409 | 413,
  code: string,
  message: string,
): ErrorAnswer => ({
  status,
  body: { code, message },
})

const challenge = (error?: string): ErrorAnswer => ({
  status: 401,
  headers: {
    'WWW-Authenticate': error ? `Bearer realm="${REALM}", error="${error}"` : `Bearer realm="${REALM}"`,
  },
  body: null,
})

const notFound: ErrorAnswer = { status: 404, body: null }

type Mapping = { [C in DomainErrorCode]: (error: ErrorOf<C>, context: ErrorContext) => ErrorAnswer }

// Exhaustive: a new DomainError code does not compile until it has a row here.
const mapping: Mapping = {
  // Only the token endpoint yields these three, so they take its RFC 6749 shape.
  invalid_request: (error) => oauthError(400, 'invalid_request', error.message),
  unsupported_grant_type: (error) => oauthError(400, 'unsupported_grant_type', error.message),
  invalid_scope: (error) => oauthError(400, 'invalid_scope', error.message),
  // Every credential failure looks alike: same status, same headers, no body.
  invalid_credentials: () => ({ status: 401, body: null }),
  // RFC 6749 §5.2: a client that authenticated with HTTP Basic is challenged in that scheme.
  invalid_client: () => ({
    status: 401,
    headers: { 'WWW-Authenticate': `Basic realm="${REALM}"` },
    body: { error: 'invalid_client', error_description: 'Client authentication failed' },
  }),
  throttled: (error) => ({
    ...oauthError(
      429,
      'temporarily_unavailable',
      `Too many failed login attempts. Try again in ${error.retryAfter} seconds.`,
    ),
    headers: { 'Retry-After': String(error.retryAfter) },
  }),
  // A reporter past its allowance of audit events (POST /audit/events): it waits, then sends again.
  too_many_events: (error) => ({
    status: 429,
    headers: { 'Retry-After': String(error.retryAfter) },
    body: {
      code: 'too_many_events',
      message: `More audit events than this reporter may send now; nothing was kept. Send them again in ${error.retryAfter} seconds.`,
    },
  }),
  // RFC 6749's error for a server that cannot handle the request now; answered at once.
  temporarily_unavailable: (error) => ({
    ...oauthError(503, 'temporarily_unavailable', 'Too many logins are being checked. Try again shortly.'),
    headers: { 'Retry-After': String(error.retryAfter) },
  }),
  // A person of the directory while it cannot be asked: flowadmin's own users still sign in.
  directory_unavailable: (error) => ({
    ...oauthError(
      503,
      'temporarily_unavailable',
      'The directory cannot be reached now, so its people cannot sign in. Try again shortly.',
    ),
    headers: { 'Retry-After': String(error.retryAfter) },
  }),
  unauthenticated: (error) => challenge(error.reason === 'invalid' ? 'invalid_token' : undefined),
  // RFC 6750 §3.1: a request without credentials gets a bare challenge, not an error code.
  forbidden: (_error, context) => challenge(context.tokenSent ? 'insufficient_scope' : undefined),
  token_not_found: () => notFound,
  module_not_found: () => notFound,
  node_set_not_found: () => notFound,
  type_in_use: (error) => ({
    status: 400,
    body:
      error.instances === undefined
        ? { code: 'type_in_use', message: `Type in use: ${error.types.join(', ')}`, types: error.types }
        : {
            code: 'type_in_use',
            message: `Type in use: ${error.types.join(', ')} (on ${error.instances.join(', ')})`,
            types: error.types,
            instances: error.instances,
          },
  }),
  instance_conflict: (error) => ({
    status: 409,
    body: {
      code: 'instance_conflict',
      message: error.enrolled
        ? `Instance ${error.instance} is enrolled already (or another resource server's); revoke it first, or enrol this one under another id`
        : `Instance ${error.instance} belongs to another resource server; give this one another instanceId`,
    },
  }),
  // At enrolment, a malformed request of the instance; elsewhere, a credential acting as another instance.
  instance_mismatch: (error) =>
    error.where === 'enrolment'
      ? adminError(
          400,
          'instance_mismatch',
          `The enrolment token names another instance than ${error.instance}; leave the instance out, or ask for another token`,
        )
      : adminError(403, 'instance_mismatch', `This credential is not instance ${error.instance}'s`),
  group_not_found: (error) =>
    adminError(
      404,
      'group_not_found',
      `No group ${error.group}: groups are declared in the settings (fleet.groups)`,
    ),
  assignment_not_found: (error) =>
    adminError(
      404,
      'assignment_not_found',
      `Instance ${error.instance} was not put in group ${error.group} (a rule of the settings may still hold it there)`,
    ),
  snapshot_not_found: (error) => adminError(404, 'snapshot_not_found', `No snapshot ${error.id}`),
  rollout_not_found: (error) => adminError(404, 'rollout_not_found', `No rollout ${error.id}`),
  no_previous_target: (error) =>
    adminError(
      409,
      'no_previous_target',
      `Group ${error.group} has no earlier snapshot rolled out to go back to`,
    ),
  no_target: (error) =>
    adminError(404, 'no_target', `No rollout reaches instance ${error.instance}: it has no flows to deploy`),
  not_targeted: (error) =>
    adminError(409, 'not_targeted', `Rollout ${error.rollout} does not reach instance ${error.instance}`),
  variable_not_found: (error) =>
    adminError(404, 'variable_not_found', `No variable ${error.name} is set for ${error.scope}`),
  sealing_not_configured: () =>
    adminError(
      409,
      'sealing_not_configured',
      'A secret variable needs a key to seal it with: set fleet.flows.key (or FLOWADMIN_FLOWS_KEY)',
    ),
  snapshot_not_asked: (error) => ({
    status: 409,
    body: {
      code: 'snapshot_not_asked',
      message: `Nobody asked instance ${error.instance} for its flows as ${error.name}, or they were sent already`,
    },
  }),
  snapshot_too_large: (error) =>
    adminError(
      413,
      'payload_too_large',
      `The snapshot's file would be ${error.bytes} bytes, more than fleet.snapshots.maxBytes (${error.limit})`,
    ),
  invalid_enrolment: () => ({
    status: 401,
    body: {
      code: 'invalid_enrolment',
      message: 'The enrolment token is unknown, spent, expired or cancelled; ask for another',
    },
  }),
  too_many_instances: (error) => ({
    status: 409,
    body: {
      code: 'too_many_instances',
      message: `The resource server holds ${error.limit} enrolled instances, as many as fleet.maxInstances allows; revoke one first`,
    },
  }),
  flows_unavailable: () => ({
    status: 503,
    body: {
      code: 'flows_unavailable',
      message: 'The deployed flows cannot be read, so no module can be disabled until they can',
    },
  }),
  // People's second factors.
  mfa_not_configured: () => ({
    status: 409,
    body: {
      code: 'mfa_not_configured',
      message: 'No key for second-factor secrets is configured (adminAuth.mfa.key or FLOWADMIN_MFA_KEY)',
    },
  }),
  factor_exists: () => ({
    status: 409,
    body: { code: 'factor_exists', message: 'A second factor is enrolled already; it must be removed first' },
  }),
  enrolment_not_found: () => ({
    status: 409,
    body: { code: 'enrolment_not_found', message: 'No enrolment awaits a code; start one first' },
  }),
  // The password grant, for a person who must give a second factor: it cannot ask for one.
  mfa_required: () =>
    oauthError(
      403,
      'mfa_required',
      'This person must sign in with a second factor, which the password grant cannot ask for: people sign in on the sign-in page (/auth/signin, or an editor\'s "Sign in with flowadmin"); scripts and node-red-admin use an API token.',
    ),
  reauthentication_required: (error) =>
    adminError(
      403,
      'reauthentication_required',
      error.action === 'add_factor'
        ? `Sign in again to add a second factor: your session began more than ${error.minutes} minutes ago`
        : error.action === 'fleet_install'
          ? `Sign in again to install or upgrade on the fleet (it runs the package's code on every instance): your session began more than ${error.minutes} minutes ago`
          : `Sign in again with your second factor (a code of your authenticator app, a recovery code or a passkey) to remove one: your session began more than ${error.minutes} minutes ago, or its sign-in used no second factor`,
    ),
  provider_sign_in: () => ({
    status: 409,
    body: {
      code: 'provider_sign_in',
      message:
        'You sign in with the identity provider, which never asks for a second factor of flowadmin’s: one set up here could never sign you in. Your identity provider’s own second factor protects your sign-in.',
    },
  }),
  invalid_code: () => adminError(400, 'invalid_code', 'The code is wrong, expired or used already'),
  // Passkeys.
  passkeys_not_configured: () => ({
    status: 409,
    body: {
      code: 'passkeys_not_configured',
      message: 'Passkeys are not configured here (adminAuth.webauthn)',
    },
  }),
  too_many_passkeys: (error) => ({
    status: 409,
    body: {
      code: 'too_many_passkeys',
      message: `A person may have at most ${error.limit} passkeys; remove one first`,
    },
  }),
  passkey_not_found: () => ({
    status: 404,
    body: { code: 'passkey_not_found', message: 'You have no passkey with that id' },
  }),
  invalid_passkey_name: () => adminError(400, 'invalid_request', 'name: must have 1 to 64 characters'),
  passkey_refused: () =>
    adminError(
      400,
      'passkey_refused',
      'The passkey’s answer was refused (its challenge unknown, used or expired, or it did not verify); try again',
    ),
  // A sign-in that could not end: too many wait to finish from the client's address, or in all.
  too_many_sign_ins: (error) =>
    error.scope === 'address'
      ? {
          status: 429,
          headers: { 'Retry-After': '60' },
          body: {
            code: 'too_many_sign_ins',
            message: 'Too many sign-ins from your address are waiting to finish; try again in a minute',
          },
        }
      : {
          status: 503,
          headers: { 'Retry-After': '30' },
          body: {
            code: 'too_many_sign_ins',
            message: 'Too many sign-ins are waiting to finish here right now; try again shortly',
          },
        },
  // Installing and removing node modules: in every case nothing was changed.
  invalid_module_spec: (error) => adminError(400, 'invalid_request', error.message),
  module_not_allowed: (error) => adminError(400, 'module_not_allowed', error.message),
  install_failed: (error) => adminError(400, 'install_failed', error.message),
  install_timeout: () => ({
    status: 504,
    body: {
      code: 'install_timeout',
      message: 'The package manager ran past its time limit; nothing was changed',
    },
  }),
  busy: () => ({
    status: 409,
    body: { code: 'busy', message: 'Another module is being installed or removed; try again later' },
  }),
}

/** The HTTP answer for a domain error. */
export function errorAnswerOf(error: DomainError, context: ErrorContext = { tokenSent: false }): ErrorAnswer {
  return (mapping[error.code] as (error: DomainError, context: ErrorContext) => ErrorAnswer)(error, context)
}

/**
 * The answer to a domain error at a route for a signed-in caller, who came with a token: a right
 * they lack is `insufficient_scope`.
 */
export const signedInRefusal = (error: DomainError): Response =>
  toResponse(errorAnswerOf(error, { tokenSent: true }))

/** A refused body at the token or revoke endpoint (RFC 6749 shape). */
export function oauthBodyError(problem: BodyProblem): ErrorAnswer {
  return problem.problem === 'too_large'
    ? oauthError(413, 'invalid_request', 'Request body too large')
    : oauthError(400, 'invalid_request', problem.message)
}

/** A refused body at an admin route. */
export function adminBodyError(problem: BodyProblem): ErrorAnswer {
  return problem.problem === 'too_large'
    ? adminError(413, 'payload_too_large', `Request body larger than ${problem.limit} bytes`)
    : adminError(400, 'invalid_request', problem.message)
}

/** A store that cannot answer now: the request may succeed after `retryAfter` seconds. */
export const storageUnavailable = (retryAfter: number): ErrorAnswer => ({
  status: 503,
  // Never cached, like every answer of the token endpoint where it may also come.
  headers: { 'Retry-After': String(retryAfter), 'Cache-Control': 'no-store', Pragma: 'no-cache' },
  body: { code: 'storage_unavailable', message: 'The store cannot be reached now; try again shortly' },
})

/** Body of every unexpected failure: no stack, path or detail. */
export const UNEXPECTED_ERROR: ErrorAnswer = {
  status: 500,
  body: { code: 'unexpected_error', message: 'Internal error' },
}

/** The answer to something a route threw: 503 when a store could not answer, else 500. */
export function thrownAnswer(error: unknown): ErrorAnswer {
  return isStoreUnavailable(error) ? storageUnavailable(error.retryAfter) : UNEXPECTED_ERROR
}

/**
 * The Responses made here, apart from a request's context: they do not carry the headers a
 * middleware set on the context before the handler ran, so such a middleware adds its headers to
 * these (whose headers are a Headers object already) and never reads those of the others (see
 * `madeApart`).
 */
const APART = new WeakSet<Response>()

/**
 * True when `response` was made here (an error, an empty answer) rather than through the context,
 * which gives its answers the headers set on it beforehand. Reading the headers of an answer made
 * through the context would build a Headers object for it and make the server rebuild the answer.
 */
export const madeApart = (response: Response): boolean => APART.has(response)

/** A response without a body; `Content-Length: 0` spares servers a chunked empty body. */
export function emptyResponse(status: number, init?: Record<string, string>): Response {
  const headers = new Headers(init)
  headers.set('Content-Length', '0')
  headers.set('X-Content-Type-Options', 'nosniff')
  const response = new Response(null, { status, headers })
  APART.add(response)
  return response
}

/** Turns an ErrorAnswer into a Response (JSON or empty). */
export function toResponse(answer: ErrorAnswer): Response {
  if (answer.body === null) return emptyResponse(answer.status, answer.headers)
  const headers = new Headers(answer.headers)
  headers.set('Content-Type', 'application/json')
  headers.set('X-Content-Type-Options', 'nosniff')
  const response = new Response(JSON.stringify(answer.body), { status: answer.status, headers })
  APART.add(response)
  return response
}
