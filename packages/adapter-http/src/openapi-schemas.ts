// JSON Schemas (the 2020-12 dialect of OpenAPI 3.1) of every request and response body, and the
// shared responses. Response objects forbid unknown fields, so a body that grows a field fails the
// document's tests until the document says so.
import { MAX_TOKEN_NAME } from '@flowadmin/core'
import type { JsonSchema, MediaTypeObject, ResponseObject } from './openapi.js'

const string: JsonSchema = { type: 'string' }
const strings: JsonSchema = { type: 'array', items: string }
const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` })
const json = (schema: JsonSchema): Record<string, MediaTypeObject> => ({ 'application/json': { schema } })

/** A JSON object with exactly these fields (`optional` may be absent). */
function closed(properties: Record<string, JsonSchema>, optional: string[] = []): JsonSchema {
  return {
    type: 'object',
    required: Object.keys(properties).filter((name) => !optional.includes(name)),
    properties,
    additionalProperties: false,
  }
}

/** A `{code, message}` error body whose code is one of these. */
const adminError = (codes: string[], extra: Record<string, JsonSchema> = {}): JsonSchema =>
  closed({ code: { enum: codes }, message: string, ...extra }, Object.keys(extra))

/** An RFC 6749 §5.2 error body whose `error` is one of these. */
const oauthError = (errors: string[]): JsonSchema =>
  closed({ error: { enum: errors }, error_description: string })

const ISO_TIME = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$'
const time: JsonSchema = { type: 'string', pattern: ISO_TIME, description: 'ISO 8601, UTC.' }
const nullableTime: JsonSchema = { type: ['string', 'null'], pattern: ISO_TIME }

const permissions: JsonSchema = {
  type: 'array',
  items: string,
  description: 'Permissions: `*`, `read`, `write` or `<resource>.read|write`.',
}

export const schemas: Record<string, JsonSchema> = {
  LoginScheme: {
    description: '`{}` when authentication is off, else the credentials scheme.',
    oneOf: [{ type: 'object', maxProperties: 0 }, ref('CredentialsScheme')],
  },
  CredentialsScheme: closed({
    type: { const: 'credentials' },
    prompts: {
      type: 'array',
      description: 'The inputs a client collects, username then password.',
      items: closed({
        id: { enum: ['username', 'password'] },
        type: { enum: ['text', 'password'] },
        label: string,
      }),
    },
  }),
  TokenRequest: {
    type: 'object',
    description: 'OAuth2 password grant (RFC 6749 §4.3). Other fields are ignored.',
    required: ['client_id', 'grant_type', 'scope', 'username', 'password'],
    properties: {
      client_id: {
        type: 'string',
        description: '`service-admin`, `service-editor`, or a client id added by `adminAuth.clients`.',
      },
      grant_type: { const: 'password' },
      scope: {
        type: 'string',
        description: 'Space-separated words, each `*` or `read`; `""` means the user’s own permissions.',
      },
      username: { type: 'string', minLength: 1 },
      password: { type: 'string', minLength: 1 },
    },
  },
  TokenResponse: closed({
    access_token: string,
    expires_in: { type: 'integer', minimum: 1, description: 'Seconds the token is valid.' },
    token_type: { const: 'Bearer' },
  }),
  RevokeRequest: {
    type: 'object',
    required: ['token'],
    properties: { token: { type: 'string', minLength: 1 } },
  },
  TokenInfo: closed({
    id: {
      type: 'string',
      description: 'Public id: names the token for `DELETE /auth/tokens/{id}`; not a secret.',
    },
    user: string,
    kind: { enum: ['session', 'api'], description: '`session`: from a login; `api`: a named API token.' },
    name: { type: ['string', 'null'], description: 'The name of an API token; null for a session.' },
    client_id: string,
    scope: {
      ...permissions,
      description: 'What it was granted; it acts with this ∩ its user’s permissions now.',
    },
    created_at: time,
    expires_at: { ...nullableTime, description: 'null: never expires.' },
    last_used_at: { ...nullableTime, description: 'Recorded at most once a minute; null: never used.' },
    last_address: { type: ['string', 'null'] },
    current: { type: 'boolean', description: 'True for the token of this request.' },
  }),
  TokenList: closed({ tokens: { type: 'array', items: ref('TokenInfo') } }),
  CreateTokenRequest: {
    type: 'object',
    required: ['name'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: MAX_TOKEN_NAME },
      scope: {
        type: 'string',
        description: 'Space-separated words, each `*` or `read`. Default: the caller’s rights.',
      },
      expires_in: {
        type: ['integer', 'null'],
        minimum: 1,
        description: 'Seconds. Default 90 days; null: never expires (only when the settings allow).',
      },
    },
  },
  CreatedToken: closed({
    id: string,
    name: string,
    token: { type: 'string', pattern: '^fa_', description: 'The bearer token, shown this once.' },
    scope: permissions,
    expires_at: nullableTime,
  }),
  RevokedCount: closed({ revoked: { type: 'integer', minimum: 0 } }),
  Settings: closed({
    version: string,
    user: {
      oneOf: [closed({ username: string, permissions }), closed({ anonymous: { const: true }, permissions })],
    },
  }),
  NodeSet: closed(
    {
      id: { type: 'string', description: '`<module>/<set name>`' },
      name: string,
      types: strings,
      enabled: { type: 'boolean' },
      loaded: { type: 'boolean', description: 'Whether this process has loaded the set’s files.' },
      module: string,
      version: { type: 'string', description: 'The module’s version.' },
      err: { type: 'string', description: 'Why loading failed; present only then.' },
    },
    ['err'],
  ),
  NodeModule: closed({ name: string, version: string, nodes: { type: 'array', items: ref('NodeSet') } }),
  EnableRequest: {
    type: 'object',
    required: ['enabled'],
    properties: { enabled: { type: 'boolean' } },
  },
  Health: closed({ status: { const: 'ok' } }),
  Ready: closed({ status: { const: 'ready' } }),
  NotReady: closed({
    status: { const: 'not_ready' },
    reason: {
      type: 'string',
      pattern: '^[a-z_]+$',
      description: '`storage_unavailable`, `shutting_down`, `check_timeout` or `check_failed`.',
    },
  }),
  InstallRequest: {
    type: 'object',
    description: 'A module from the registry, or a tarball URL; not both `version` and `url`.',
    required: ['module'],
    not: { required: ['version', 'url'], properties: { version: {}, url: {} } },
    properties: {
      module: {
        type: 'string',
        minLength: 1,
        maxLength: 214,
        description: 'An npm package name, scoped or not.',
      },
      version: {
        type: 'string',
        minLength: 1,
        maxLength: 256,
        description: 'A semver range, e.g. `1.2.3` or `^1.2`.',
      },
      url: {
        type: 'string',
        minLength: 1,
        maxLength: 2048,
        description: 'An http(s) URL of a tarball of `module`.',
      },
    },
  },
  OpenApiDocument: {
    type: 'object',
    required: ['openapi', 'info', 'paths'],
    properties: {
      openapi: { type: 'string', pattern: '^3\\.1\\.' },
      info: {
        type: 'object',
        required: ['title', 'version'],
        properties: { title: string, version: string },
      },
      paths: { type: 'object' },
    },
  },
}

const challenge = {
  'WWW-Authenticate': {
    required: true,
    description: '`Bearer realm="flowadmin"`, with `error="invalid_token"` or `error="insufficient_scope"`.',
    schema: { type: 'string', pattern: '^Bearer realm="flowadmin"' },
  },
}

/** 401 of a route that needs credentials. */
export const unauthorized: ResponseObject = {
  description:
    'No usable credentials (missing, unknown, expired or revoked token) or not the permission. Empty body.',
  headers: challenge,
}

const retryAfter = {
  description: 'Seconds after which the request may succeed (only with `storage_unavailable`).',
  schema: { type: 'string', pattern: '^[1-9][0-9]*$' },
}

/** Responses shared by several operations. */
export const responses: Record<string, ResponseObject> = {
  Unauthorized: unauthorized,
  NotFound: { description: 'No such module or node set, or a malformed name. Empty body.' },
  BadAdminRequest: {
    description:
      'The body is not a JSON object with a boolean `enabled` (`invalid_request`), or disabling would ' +
      'remove types the deployed flows use (`type_in_use`, nothing changes).',
    content: json(adminError(['invalid_request', 'type_in_use'], { types: strings })),
  },
  BadInstallRequest: {
    description:
      'A malformed body, package name, semver range or URL (`invalid_request`); refused by the ' +
      'settings (`module_not_allowed`, nothing fetched); npm failed or the package is not a node ' +
      'module (`install_failed`). Nothing was changed.',
    content: json(adminError(['invalid_request', 'module_not_allowed', 'install_failed'])),
  },
  BadRemoveRequest: {
    description:
      'The deployed flows use some of its types (`type_in_use`, listed in `types`), removing is not ' +
      'allowed (`module_not_allowed`) or npm failed (`install_failed`). Nothing was changed.',
    content: json(adminError(['type_in_use', 'module_not_allowed', 'install_failed'], { types: strings })),
  },
  Busy: {
    description: 'Another install or removal kept running past the wait allowed; try again later.',
    content: json(adminError(['busy'])),
  },
  InstallTimeout: {
    description: 'npm ran past `externalModules.palette.timeout`; what it did was undone.',
    content: json(adminError(['install_timeout'])),
  },
  AdminPayloadTooLarge: {
    description: 'The body is larger than the configured limit.',
    content: json(adminError(['payload_too_large'])),
  },
  FlowsUnavailable: {
    description:
      'The deployed flows cannot be read, so no module can be disabled until they can (`flows_unavailable`); ' +
      'or the store cannot be reached now (`storage_unavailable`, with `Retry-After`).',
    headers: { 'Retry-After': retryAfter },
    content: json(adminError(['flows_unavailable', 'storage_unavailable'])),
  },
  StorageUnavailable: {
    description:
      'The store cannot be reached now (a PostgreSQL store that is down, restarting or not answering); ' +
      'nothing was changed. Try again after `Retry-After` seconds.',
    headers: { 'Retry-After': { ...retryAfter, required: true } },
    content: json(adminError(['storage_unavailable'])),
  },
  Unexpected: {
    description: 'An unexpected failure, logged by the server; the body never holds any detail.',
    content: json(adminError(['unexpected_error'])),
  },
}

const noStore = {
  'Cache-Control': { required: true, schema: { const: 'no-store' } },
  Pragma: { required: true, schema: { const: 'no-cache' } },
}

/** Responses of the token and revoke endpoints: RFC 6749 error bodies, never cached. */
export const oauthResponses = {
  noStore,
  badRequest: (errors: string[], description: string): ResponseObject => ({
    description,
    headers: noStore,
    content: json(oauthError(errors)),
  }),
  tooLarge: {
    description: 'The body is larger than the configured limit.',
    headers: noStore,
    content: json(oauthError(['invalid_request'])),
  } satisfies ResponseObject,
  throttled: {
    description:
      'Too many failed logins for this username from this address, or from this address; the ' +
      'password was not checked.',
    headers: {
      ...noStore,
      'Retry-After': {
        required: true,
        description: 'Seconds to wait.',
        schema: { type: 'string', pattern: '^[0-9]+$' },
      },
    },
    content: json(oauthError(['temporarily_unavailable'])),
  } satisfies ResponseObject,
  unavailable: {
    description:
      'Too many logins are waiting for their password to be checked, or too many attempts for this ' +
      'username and address are in flight (`temporarily_unavailable`). Answered at once; the password ' +
      'was not checked and nothing was counted against the client. Or the store cannot be reached now ' +
      '(`storage_unavailable`, a `{code, message}` body).',
    headers: {
      ...noStore,
      'Retry-After': {
        required: true,
        description: 'Seconds to wait.',
        schema: { type: 'string', pattern: '^[0-9]+$' },
      },
    },
    content: json({ oneOf: [oauthError(['temporarily_unavailable']), adminError(['storage_unavailable'])] }),
  } satisfies ResponseObject,
}

export { json, ref }
