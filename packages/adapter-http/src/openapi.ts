import { Hono, type MiddlewareHandler } from 'hono'
import { findTargetHandler } from 'hono/utils/handler'
import type { DescribeRouteOptions, generateSpecs, resolver } from 'hono-openapi'
import * as v from 'valibot'
import type { RouteDeps } from './env.js'
import { AdminError, OAuthError } from './schemas.js'

// The OpenAPI 3.1 document is generated from the app's routes (hono-openapi): each route carries
// its description, and every body schema in it is converted from the valibot schema the route
// validates with or answers with. The generator and the converter are loaded when the document
// is first asked for: routes carry their descriptions as plain data until then, so a server that
// never serves the document does not load them.

/** What the generator reads of an app: its routes. */
export type RoutesOf = Pick<Hono, 'routes'>
/** The document as `GET /openapi.json` serves it. */
export type OpenApiDocument = Awaited<ReturnType<typeof generateSpecs>>
/** One operation's description, next to its route. */
export type Operation = DescribeRouteOptions
/** The responses of an operation, by status. */
export type Responses = NonNullable<Operation['responses']>
/** A body schema in a description: the valibot schema, converted when the document is generated. */
type Schema = ReturnType<typeof resolver>
type Content = Record<string, { schema: Schema; examples?: Record<string, Example> }>
/** An example value of a request body or parameter, as OpenAPI's Example Object. */
export interface Example {
  /** Ends with the status in parentheses, e.g. `(404)`, when the request does not succeed. */
  summary: string
  value: unknown
}

/** A valibot schema waiting in a description for the document's generation. */
class Unresolved {
  constructor(readonly schema: v.GenericSchema) {}
}

/** The body schema of a description: `resolver` of hono-openapi, applied when the document is made. */
export const schemaOf = (schema: v.GenericSchema): Schema => new Unresolved(schema) as unknown as Schema

/** `403 reauthentication_required`: adding a second factor needs a session that began recently. */
export const reauthenticate = (): Responses => ({
  403: {
    description:
      '`reauthentication_required`: the session began more than 10 minutes ago; sign in again to add a second factor (a session taken from its person cannot add one of its own).',
    headers: NO_STORE_HEADERS,
    content: adminErrorContent(['reauthentication_required']),
  },
})

/**
 * `403 reauthentication_required`: removing a second factor needs a session that began recently
 * with a second factor.
 */
export const removalRefusals = (): Responses => ({
  403: {
    description:
      '`reauthentication_required`: the session began more than 10 minutes ago, or its sign-in used no second factor (a password alone, the identity provider): sign in again with a second factor to remove one (less than a second factor cannot strip one).',
    headers: NO_STORE_HEADERS,
    content: adminErrorContent(['reauthentication_required']),
  },
})

/** A short HTML page for a person in a browser (the sign-in and the pages around it). */
export const HTML_PAGE: Content = { 'text/html': { schema: schemaOf(v.string()) } }

/** `application/json` content of this valibot schema, with example values for request bodies. */
export const json = (schema: v.GenericSchema, examples?: Record<string, Example>): Content => ({
  'application/json': { schema: schemaOf(schema), ...(examples === undefined ? {} : { examples }) },
})

/** Form or JSON content, the same fields: what the OAuth endpoints take. */
export const formOrJson = (schema: v.GenericSchema, examples: Record<string, Example>): Content => ({
  'application/x-www-form-urlencoded': { schema: schemaOf(schema), examples },
  ...json(schema, examples),
})

const DESCRIBED = Symbol('described')

/**
 * A route's description, for the document: a middleware that only passes the request on,
 * carrying the operation until the document is generated. It sits in the route's chain, so every
 * request passes it: it hands over without a frame of its own to await (`describeRoute` of
 * hono-openapi has an async one, which costs each request a promise).
 */
export const describe = (operation: Operation): MiddlewareHandler =>
  Object.assign(passThrough(), { [DESCRIBED]: operation })

/** A middleware that only calls the next one: a fresh function each time, to carry a description. */
const passThrough = (): MiddlewareHandler => (_c, next) => next()

const TEMPLATES = Symbol('templates')

/**
 * Describes a wildcard route (`/nodes/*`) that parses the rest of its path itself, with one
 * operation per path template it answers, e.g. `/nodes/{module}` and `/nodes/{module}/{set}`.
 */
export function describeTemplates(operations: Record<string, Operation>): MiddlewareHandler {
  return Object.assign(passThrough(), { [TEMPLATES]: operations })
}

/** How a route needs to be called: its permission in words, and the responses that adds. */
export function accessDocs(deps: RouteDeps) {
  const authEnabled = deps.core.authEnabled
  return {
    /** The sentence of a route that needs `permission`. */
    needs: (permission: string) =>
      authEnabled
        ? `Needs \`${permission}\`: a token whose scope grants it, or default permissions that do.`
        : 'Open: authentication is off.',
    /**
     * A route that checks the caller and consults a store: it can also answer 401 (only with auth),
     * 500 (a port failed) and 503 (the store cannot be reached), unless it documents its own 503.
     */
    guarded: (own: Responses): Responses => ({
      503: use('StorageUnavailable'),
      ...own,
      ...(authEnabled ? { 401: use('Unauthorized') } : {}),
      500: use('Unexpected'),
    }),
  }
}

/** A shared response of `components.responses`. */
export const use = (name: keyof ReturnType<typeof sharedResponses>) => ({
  $ref: `#/components/responses/${name}`,
})

const retryAfter = (required: boolean) => ({
  required,
  description: 'Seconds after which the request may succeed.',
  schema: { type: 'string' as const, pattern: '^[1-9][0-9]*$' },
})

/** `Cache-Control: no-store` and `Pragma: no-cache`: the token endpoints' answers are never cached. */
export const NO_STORE_HEADERS = {
  'Cache-Control': { required: true, schema: { type: 'string' as const, enum: ['no-store'] } },
  Pragma: { required: true, schema: { type: 'string' as const, enum: ['no-cache'] } },
}

/** The no-store headers, to spread into the description of an answer that is never stored. */
export const NO_STORE = { headers: NO_STORE_HEADERS }

/** `Retry-After` in whole seconds. */
export const RETRY_AFTER = {
  required: true,
  description: 'Seconds to wait.',
  schema: { type: 'string' as const, pattern: '^[0-9]+$' },
}

const CHALLENGE = {
  'WWW-Authenticate': {
    required: true,
    description: '`Bearer realm="flowadmin"`, with `error="invalid_token"` or `error="insufficient_scope"`.',
    schema: { type: 'string' as const, pattern: '^Bearer realm="flowadmin"' },
  },
}

/** `WWW-Authenticate: Basic realm="flowadmin"`: the challenge to a resource server (RFC 6749 §5.2). */
const BASIC_CHALLENGE = {
  'WWW-Authenticate': {
    required: true,
    schema: { type: 'string' as const, pattern: '^Basic realm="flowadmin"$' },
  },
}

/**
 * 401 and 429 of a route for resource servers, which authenticate with HTTP Basic: no, unknown or
 * wrong credentials, or too many wrong secrets. `caller` names them in the descriptions; `headers`
 * come before each answer's own.
 */
export const clientRefusals = (caller: 'client' | 'resource server', headers: object = {}) => ({
  401: {
    description: `No client credentials, an unknown ${caller}, or a wrong secret.`,
    headers: { ...headers, ...BASIC_CHALLENGE },
    content: oauthErrorContent(['invalid_client']),
  },
  429: {
    description: `Too many wrong secrets for this ${caller} from this address; the secret was not checked.`,
    headers: { ...headers, 'Retry-After': RETRY_AFTER },
    content: oauthErrorContent(['temporarily_unavailable']),
  },
})

/** 401 of a route that needs credentials. */
export const unauthorized = () => ({
  description:
    'No usable credentials (missing, unknown, expired or revoked token) or not the permission. Empty body.',
  headers: CHALLENGE,
})

/**
 * What a route for a signed-in caller (`requirePerson`, or any token) may answer besides its own:
 * 401 without usable credentials, 500 when a port failed, 503 when the store cannot be reached.
 */
export const signedInAnswers = () => ({
  401: unauthorized(),
  500: use('Unexpected'),
  503: use('StorageUnavailable'),
})

/** A `{code, message}` error body (errors.ts) whose code is one of these. */
export const adminErrorContent = (codes: [string, ...string[]], withTypes = false) =>
  json(AdminError(codes, withTypes))

/** An RFC 6749 §5.2 error body whose `error` is one of these. */
export const oauthErrorContent = (errors: [string, ...string[]]) => json(OAuthError(errors))

/** 413 of a route whose answers are never stored, in its error shape (see parseFields). */
export const noStoreTooLarge = (shape: 'oauth' | 'admin') => ({
  description: 'The body is larger than the configured limit.',
  ...NO_STORE,
  content:
    shape === 'oauth' ? oauthErrorContent(['invalid_request']) : adminErrorContent(['payload_too_large']),
})

/** Responses shared by several operations (fresh objects for every document). */
function sharedResponses() {
  return {
    Unauthorized: unauthorized(),
    NotFound: { description: 'No such module or node set, or a malformed name. Empty body.' },
    Busy: {
      description: 'Another install or removal kept running past the wait allowed; try again later.',
      content: adminErrorContent(['busy']),
    },
    InstallTimeout: {
      description: 'npm ran past `externalModules.palette.timeout`; what it did was undone.',
      content: adminErrorContent(['install_timeout']),
    },
    AdminPayloadTooLarge: {
      description: 'The body is larger than the configured limit.',
      content: adminErrorContent(['payload_too_large']),
    },
    FlowsUnavailable: {
      description:
        'The deployed flows cannot be read, so no module can be disabled until they can (`flows_unavailable`); ' +
        'or the store cannot be reached now (`storage_unavailable`, with `Retry-After`).',
      headers: { 'Retry-After': retryAfter(false) },
      content: adminErrorContent(['flows_unavailable', 'storage_unavailable']),
    },
    StorageUnavailable: {
      description:
        'The store cannot be reached now (a PostgreSQL store that is down, restarting or not answering); ' +
        'nothing was changed. Try again after `Retry-After` seconds.',
      headers: { 'Retry-After': retryAfter(true) },
      content: adminErrorContent(['storage_unavailable']),
    },
    Unexpected: {
      description: 'An unexpected failure, logged by the server; the body never holds any detail.',
      content: adminErrorContent(['unexpected_error']),
    },
  }
}

/** The same description with each body schema converted by `resolve` (a copy; the original stays). */
function resolved(value: unknown, resolve: typeof resolver): unknown {
  if (value instanceof Unresolved) return resolve(value.schema)
  if (Array.isArray(value)) return value.map((item) => resolved(item, resolve))
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resolved(item, resolve)]))
}

/**
 * The same routes, each with the description of hono-openapi, and each wildcard route replaced by
 * the templates it describes, so that the generator sees one route per documented path.
 */
function documentedRoutes(app: RoutesOf, openapi: typeof import('hono-openapi')): Hono {
  const describeRoute = (operation: Operation) =>
    openapi.describeRoute(resolved(operation, openapi.resolver) as Operation)
  const view = new Hono()
  for (const route of app.routes) {
    const handler = findTargetHandler(route.handler) as {
      [TEMPLATES]?: Record<string, Operation>
      [DESCRIBED]?: Operation
    }
    const templates = handler[TEMPLATES]
    if (templates === undefined) {
      const operation = handler[DESCRIBED]
      if (operation !== undefined) view.on(route.method, route.path, describeRoute(operation))
      continue
    }
    for (const [template, operation] of Object.entries(templates)) {
      view.on(route.method, template.replace(/\{([^}]+)\}/g, ':$1'), describeRoute(operation))
    }
  }
  return view
}

/** The OpenAPI 3.1 document of these routes (below `deps.basePath`), generated from their descriptions. */
export async function createOpenApiDocument(app: RoutesOf, deps: RouteDeps): Promise<OpenApiDocument> {
  const authEnabled = deps.core.authEnabled
  const openapi = await import('hono-openapi')
  return openapi.generateSpecs(documentedRoutes(app, openapi), {
    excludeStaticFile: false,
    documentation: {
      info: {
        title: 'flowadmin administration API',
        version: deps.version,
        description:
          'Login scheme discovery, OAuth2 password-grant tokens, revocation, and node module ' +
          'enablement. HEAD is answered on every GET route. Unknown paths and methods are 404 with an empty body.',
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
      servers: [{ url: deps.basePath === '' ? '/' : deps.basePath, description: 'This service' }],
      ...(authEnabled ? { security: [{ bearer: [] }] } : {}),
      tags: [
        { name: 'auth', description: 'Login scheme, tokens, revocation' },
        { name: 'settings', description: 'Who the caller is' },
        { name: 'nodes', description: 'Node modules and node sets' },
        { name: 'audit', description: 'The trail: flowadmin’s and its instances’ audit events' },
        { name: 'meta', description: 'This document' },
        {
          name: 'operations',
          description: 'Health, readiness and metrics, for load balancers and monitoring',
        },
      ],
      components: {
        responses: resolved(sharedResponses(), openapi.resolver) as ReturnType<typeof sharedResponses>,
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'An access token from `POST /auth/token`: `Authorization: Bearer <token>`.',
          },
          basicAuth: {
            type: 'http',
            scheme: 'basic',
            description:
              'A resource server of `adminAuth.resourceServers`: its id and secret, each form-urlencoded (RFC 6749 §2.3.1).',
          },
        },
      },
    },
  })
}
