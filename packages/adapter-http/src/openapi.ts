import { json, oauthResponses, ref, responses, schemas, unauthorized } from './openapi-schemas.js'

// The OpenAPI 3.1 document of the app, written once. The adapter's tests check that it lists
// every route the app answers and nothing else, and that every response the app gives validates.

/** A JSON Schema in the 2020-12 dialect that OpenAPI 3.1 uses. */
export type JsonSchema = { [keyword: string]: unknown }

export interface MediaTypeObject {
  schema: JsonSchema
}

export interface HeaderObject {
  required?: boolean
  description?: string
  schema: JsonSchema
}

export interface ResponseObject {
  description: string
  headers?: Record<string, HeaderObject>
  /** Absent: the body is empty. */
  content?: Record<string, MediaTypeObject>
}

export interface ReferenceObject {
  $ref: string
}

export interface ParameterObject {
  name: string
  in: 'path' | 'query' | 'header'
  required: boolean
  description?: string
  schema: JsonSchema
}

export interface OperationObject {
  operationId: string
  summary: string
  description?: string
  tags: string[]
  /** `[]`: no credentials needed. Absent: the document's default. */
  security?: Array<Record<string, string[]>>
  parameters?: ParameterObject[]
  requestBody?: { required: boolean; content: Record<string, MediaTypeObject> }
  /** Every status the operation can answer, by its code. */
  responses: Record<string, ResponseObject | ReferenceObject>
}

export interface PathItemObject {
  get?: OperationObject
  put?: OperationObject
  post?: OperationObject
  delete?: OperationObject
}

/** The parts of an OpenAPI 3.1 document this API uses. */
export interface OpenApiDocument {
  openapi: '3.1.0'
  info: { title: string; version: string; description: string; license: { name: string; identifier: string } }
  jsonSchemaDialect: string
  servers: Array<{ url: string; description: string }>
  security?: Array<Record<string, string[]>>
  tags: Array<{ name: string; description: string }>
  paths: Record<string, PathItemObject>
  components: {
    schemas: Record<string, JsonSchema>
    responses: Record<string, ResponseObject>
    securitySchemes: Record<string, { type: 'http'; scheme: 'bearer'; description: string }>
  }
}

/** What the document depends on: the same values the app was built with. */
export interface OpenApiOptions {
  /** Product version (`info.version`). */
  version: string
  /** Normalised base path: '' or '/admin'. The server URL. */
  basePath: string
  /** Without authentication the token and revoke routes do not exist and nothing answers 401. */
  authEnabled: boolean
  /** Whether the app serves `GET /metrics`. Default false. */
  metrics?: boolean | undefined
}

const use = (name: string): ReferenceObject => ({ $ref: `#/components/responses/${name}` })

const MODULE_PARAMETER: ParameterObject = {
  name: 'module',
  in: 'path',
  required: true,
  description:
    'A package name, plain (`node-red-node-random`) or scoped (`@scope/name`). The slash of a ' +
    'scoped name may be sent as it is or as `%2F`. Case-sensitive.',
  schema: { type: 'string', pattern: '^(@[^/]+/[^/]+|[^@/][^/]*)$' },
}

const SET_PARAMETER: ParameterObject = {
  name: 'set',
  in: 'path',
  required: true,
  description: 'The name of one of the module’s node sets.',
  schema: { type: 'string', pattern: '^[^/]+$' },
}

const USER_QUERY: ParameterObject = {
  name: 'user',
  in: 'query',
  required: false,
  description: 'A username, or `*` for every user. Absent: the caller.',
  schema: { type: 'string', minLength: 1 },
}

const ENABLE_BODY = { required: true, content: json(ref('EnableRequest')) }

/**
 * The OpenAPI 3.1 document of the admin API as `createHttpApp` serves it with these options: every
 * route, every status, the schema of every body.
 */
export function createOpenApiDocument(options: OpenApiOptions): OpenApiDocument {
  const { authEnabled } = options
  /**
   * A guarded route can also answer 401 (only with auth), 500 (a port failed) and 503 (the store
   * cannot be reached), unless it documents its own 503.
   */
  const guarded = (own: OperationObject['responses']): OperationObject['responses'] => ({
    503: use('StorageUnavailable'),
    ...own,
    ...(authEnabled ? { 401: use('Unauthorized') } : {}),
    500: use('Unexpected'),
  })
  const needs = (permission: string) =>
    authEnabled
      ? `Needs \`${permission}\`: a token whose scope grants it, or default permissions that do.`
      : 'Open: authentication is off.'

  const nodeWrite = (
    summary: string,
    operationId: string,
    body: string,
    parameters: ParameterObject[],
  ): OperationObject => ({
    operationId,
    summary,
    description: `${needs('nodes.write')} Setting the state it already has changes nothing. Disabling changes every node set concerned or none.`,
    tags: ['nodes'],
    parameters,
    requestBody: ENABLE_BODY,
    responses: guarded({
      200: { description: `The ${body} after the change.`, content: json(ref(body)) },
      400: use('BadAdminRequest'),
      404: use('NotFound'),
      413: use('AdminPayloadTooLarge'),
      503: use('FlowsUnavailable'),
    }),
  })

  const paths: Record<string, PathItemObject> = {
    '/auth/login': {
      get: {
        operationId: 'getLoginScheme',
        summary: 'The active login scheme',
        tags: ['auth'],
        security: [],
        // Neither this nor the document consults a port: no 500.
        responses: {
          200: { description: 'The login scheme.', content: json(ref('LoginScheme')) },
        },
      },
    },
    '/settings': {
      get: {
        operationId: 'getSettings',
        summary: 'The product version and who the caller is',
        description: needs('settings.read'),
        tags: ['settings'],
        responses: guarded({ 200: { description: 'The settings.', content: json(ref('Settings')) } }),
      },
    },
    '/nodes': {
      get: {
        operationId: 'listNodeSets',
        summary: 'Every node set of every module, sorted by id',
        description: needs('nodes.read'),
        tags: ['nodes'],
        responses: guarded({
          200: { description: 'The node sets.', content: json({ type: 'array', items: ref('NodeSet') }) },
        }),
      },
      post: {
        operationId: 'installNodeModule',
        summary: 'Install a node module with npm',
        description:
          `${needs('nodes.write')} From the registry (\`version\`: a semver range, the newest without it), ` +
          'from a tarball `url`, or a tarball uploaded as the `tarball` field of a multipart form ' +
          '(only with `externalModules.palette.allowUpload`). The settings’ policy is decided before anything is fetched. Its node ' +
          'sets are loaded; a module new to the service starts enabled, one it knows keeps its stored ' +
          'state. A failed install changes nothing. One install or removal runs at a time.',
        tags: ['nodes'],
        requestBody: {
          required: true,
          content: {
            ...json(ref('InstallRequest')),
            'multipart/form-data': {
              schema: {
                type: 'object',
                required: ['tarball'],
                properties: { tarball: { type: 'string', contentMediaType: 'application/gzip' } },
              },
            },
          },
        },
        responses: guarded({
          200: { description: 'The installed Node Module object.', content: json(ref('NodeModule')) },
          400: use('BadInstallRequest'),
          409: use('Busy'),
          413: use('AdminPayloadTooLarge'),
          504: use('InstallTimeout'),
        }),
      },
    },
    '/nodes/{module}': {
      get: {
        operationId: 'getNodeModule',
        summary: 'A node module',
        description: needs('nodes.read'),
        tags: ['nodes'],
        parameters: [MODULE_PARAMETER],
        responses: guarded({
          200: { description: 'The Node Module object.', content: json(ref('NodeModule')) },
          404: use('NotFound'),
        }),
      },
      put: nodeWrite('Enable or disable every node set of a module', 'setNodeModuleEnabled', 'NodeModule', [
        MODULE_PARAMETER,
      ]),
      delete: {
        operationId: 'removeNodeModule',
        summary: 'Uninstall a node module and forget its stored state',
        description:
          `${needs('nodes.write')} Refused while the deployed flows use any of its types. A module ` +
          'that is known but not installed is only forgotten. A failed removal changes nothing.',
        tags: ['nodes'],
        parameters: [MODULE_PARAMETER],
        responses: guarded({
          204: { description: 'Removed. Empty body.' },
          400: use('BadRemoveRequest'),
          404: use('NotFound'),
          409: use('Busy'),
          503: use('FlowsUnavailable'),
          504: use('InstallTimeout'),
        }),
      },
    },
    '/nodes/{module}/{set}': {
      get: {
        operationId: 'getNodeSet',
        summary: 'One node set of a module',
        description: needs('nodes.read'),
        tags: ['nodes'],
        parameters: [MODULE_PARAMETER, SET_PARAMETER],
        responses: guarded({
          200: { description: 'The node set.', content: json(ref('NodeSet')) },
          404: use('NotFound'),
        }),
      },
      put: nodeWrite('Enable or disable one node set', 'setNodeSetEnabled', 'NodeSet', [
        MODULE_PARAMETER,
        SET_PARAMETER,
      ]),
    },
    '/openapi.json': {
      get: {
        operationId: 'getOpenApiDocument',
        summary: 'This document',
        tags: ['meta'],
        security: [],
        responses: {
          200: { description: 'The OpenAPI document.', content: json(ref('OpenApiDocument')) },
        },
      },
    },
  }
  Object.assign(paths, healthPaths())
  if (options.metrics === true) {
    paths['/metrics'] = {
      get: {
        operationId: 'getMetrics',
        summary: 'Metrics in the Prometheus text format',
        description: needs('metrics.read'),
        tags: ['operations'],
        responses: guarded({
          200: {
            description: 'Every metric, in the Prometheus text exposition format 0.0.4.',
            headers: { 'Cache-Control': NO_STORE },
            content: { 'text/plain': { schema: { type: 'string' } } },
          },
        }),
      },
    }
  }
  if (authEnabled) Object.assign(paths, authPaths())

  return {
    openapi: '3.1.0',
    info: {
      title: 'flowadmin administration API',
      version: options.version,
      description:
        'Login scheme discovery, OAuth2 password-grant tokens, revocation, and node module ' +
        'enablement. HEAD is answered on every GET route. Unknown paths and methods are 404 with an empty body.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    servers: [{ url: options.basePath === '' ? '/' : options.basePath, description: 'This service' }],
    ...(authEnabled ? { security: [{ bearer: [] }] } : {}),
    tags: [
      { name: 'auth', description: 'Login scheme, tokens, revocation' },
      { name: 'settings', description: 'Who the caller is' },
      { name: 'nodes', description: 'Node modules and node sets' },
      { name: 'meta', description: 'This document' },
      { name: 'operations', description: 'Health, readiness and metrics, for load balancers and monitoring' },
    ],
    paths,
    components: {
      schemas,
      responses,
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'An access token from `POST /auth/token`: `Authorization: Bearer <token>`.',
        },
      },
    },
  }
}

const NO_STORE: HeaderObject = { required: true, schema: { const: 'no-store' } }

/** `GET /healthz` and `GET /readyz`: open, cheap, and without any detail about the service. */
function healthPaths(): Record<string, PathItemObject> {
  const headers = { 'Cache-Control': NO_STORE }
  return {
    '/healthz': {
      get: {
        operationId: 'getHealth',
        summary: 'Whether the process answers',
        description: 'Consults nothing: for liveness probes. Needs no token.',
        tags: ['operations'],
        security: [],
        responses: { 200: { description: 'The process answers.', headers, content: json(ref('Health')) } },
      },
    },
    '/readyz': {
      get: {
        operationId: 'getReadiness',
        summary: 'Whether the service can do its work',
        description:
          'Ready when the storage answers and no stop was asked for (the schema is migrated and the node modules discovered before the server listens). Needs no token.',
        tags: ['operations'],
        security: [],
        responses: {
          200: { description: 'Ready.', headers, content: json(ref('Ready')) },
          503: {
            description: 'Not ready, with a short reason code.',
            headers,
            content: json(ref('NotReady')),
          },
        },
      },
    },
  }
}

/** `POST /auth/token` and `POST /auth/revoke`, which exist only when authentication is on. */
function authPaths(): Record<string, PathItemObject> {
  const { noStore, badRequest, tooLarge, throttled, unavailable } = oauthResponses
  const form = (schema: string) => ({
    'application/x-www-form-urlencoded': { schema: ref(schema) },
    'application/json': { schema: ref(schema) },
  })
  return {
    '/auth/token': {
      post: {
        operationId: 'issueToken',
        summary: 'Exchange credentials for an access token',
        description:
          'Every credential failure (unknown user, wrong password, unknown client, a scope beyond the user’s permissions) is the same empty 401.',
        tags: ['auth'],
        security: [],
        requestBody: { required: true, content: form('TokenRequest') },
        responses: {
          200: { description: 'A new token.', headers: noStore, content: json(ref('TokenResponse')) },
          400: badRequest(
            ['invalid_request', 'unsupported_grant_type', 'invalid_scope'],
            'A malformed request: another content type, a missing or malformed field, a grant type other than `password`, an unknown scope word.',
          ),
          401: { description: 'The credentials were refused. Empty body.', headers: noStore },
          413: tooLarge,
          429: throttled,
          500: use('Unexpected'),
          503: unavailable,
        },
      },
    },
    '/auth/tokens': {
      get: {
        operationId: 'listTokens',
        summary: 'Sessions and API tokens: the caller’s own, one user’s, or everyone’s',
        description:
          'Any authenticated caller sees their own unexpired tokens; `?user=<name>` (another user) or ' +
          '`?user=*` (everyone) needs `*`. Never shows a token or its hash.',
        tags: ['auth'],
        parameters: [USER_QUERY],
        responses: {
          200: {
            description: 'The tokens, oldest first.',
            headers: noStore,
            content: json(ref('TokenList')),
          },
          401: unauthorized,
          500: use('Unexpected'),
          503: use('StorageUnavailable'),
        },
      },
      post: {
        operationId: 'createApiToken',
        summary: 'Create a named API token for the caller',
        description:
          'Needs a user’s token. The scope must lie within the caller’s rights now (default: those ' +
          'rights); the lifetime defaults to `adminAuth.apiTokens.expiryTime` (90 days) and may not exceed ' +
          '`maxExpiryTime`; `expires_in: null` (never) only when `allowNoExpiry` is set. The token, ' +
          '`fa_…`, is in this answer only.',
        tags: ['auth'],
        requestBody: { required: true, content: json(ref('CreateTokenRequest')) },
        responses: {
          201: {
            description: 'The new token, shown this once.',
            headers: noStore,
            content: json(ref('CreatedToken')),
          },
          400: badRequest(
            ['invalid_request', 'invalid_scope'],
            'Not a JSON object, `name` missing, empty or longer than 100 characters, `expires_in` not allowed, or a scope beyond the caller’s rights.',
          ),
          401: unauthorized,
          413: tooLarge,
          500: use('Unexpected'),
          503: use('StorageUnavailable'),
        },
      },
      delete: {
        operationId: 'revokeUserTokens',
        summary: 'End every token of a user (sign out everywhere)',
        description: 'One’s own (`?user=<own name>`), anyone’s with `*`, or everyone’s (`?user=*`) with `*`.',
        tags: ['auth'],
        parameters: [{ ...USER_QUERY, required: true, description: 'Whose tokens end.' }],
        responses: {
          200: { description: 'How many tokens ended.', content: json(ref('RevokedCount')) },
          400: badRequest(['invalid_request'], '`user` missing or empty.'),
          401: unauthorized,
          500: use('Unexpected'),
          503: use('StorageUnavailable'),
        },
      },
    },
    '/auth/tokens/{id}': {
      delete: {
        operationId: 'revokeTokenById',
        summary: 'End one session or API token by its id',
        description: 'One’s own, or any with `*`. Another user’s token without `*` is as unknown: 404.',
        tags: ['auth'],
        parameters: [
          {
            name: 'id',
            in: 'path',
            required: true,
            description: 'The `id` from `GET /auth/tokens`.',
            schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
          },
        ],
        responses: {
          204: { description: 'Ended. Empty body.' },
          401: unauthorized,
          404: { description: 'No such token that the caller may end. Empty body.' },
          500: use('Unexpected'),
          503: use('StorageUnavailable'),
        },
      },
    },
    '/auth/revoke': {
      post: {
        operationId: 'revokeToken',
        summary: 'Revoke an access token',
        description:
          'Any authenticated caller; revoking another user’s token needs `*`, otherwise nothing happens. ' +
          'The answer is the same whether or not a token was revoked (RFC 7009).',
        tags: ['auth'],
        requestBody: { required: true, content: form('RevokeRequest') },
        responses: {
          200: { description: 'Done, or nothing to do. Empty body.', headers: noStore },
          400: badRequest(
            ['invalid_request'],
            'Another content type, or `token` missing, empty or not a string.',
          ),
          401: { ...unauthorized, headers: { ...unauthorized.headers, ...noStore } },
          413: tooLarge,
          500: use('Unexpected'),
          503: use('StorageUnavailable'),
        },
      },
    },
  }
}
