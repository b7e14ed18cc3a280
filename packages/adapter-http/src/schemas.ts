import { MAX_TOKEN_NAME } from '@flowadmin/core'
import * as v from 'valibot'

// Request bodies, validated once at the edge. Bodies arrive as objects (see body.ts); these
// schemas check the fields. Unknown fields are ignored. Messages name the field.

/** What a value is, in words, without echoing it. */
const kindOf = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`

const NOT_AN_OBJECT = 'Request body must be an object'

/** The message of the first issue, naming a missing field when that is the problem. */
export function firstIssueMessage(
  issues: readonly v.BaseIssue<unknown>[],
  noun: 'parameter' | 'field',
): string {
  const issue = issues[0]
  if (issue === undefined) return 'Invalid request'
  // A missing key is reported on the object, with the key as the expected value.
  if (issue.type === 'object' && issue.received === 'undefined' && issue.expected?.startsWith('"')) {
    return `Missing required ${noun}: ${issue.expected.slice(1, -1)}`
  }
  return issue.message
}

const optionalString = (field: string, description?: string) => {
  const string = v.string(`Invalid parameter: ${field} must be a string`)
  return v.optional(description === undefined ? string : v.pipe(string, v.description(description)))
}

const SCOPE_WORDS = 'Space-separated words, each `*` or `read`'

/** `POST /auth/token`: the OAuth2 password grant. The core decides which fields are missing. */
export const TokenRequestSchema = v.object(
  {
    client_id: optionalString(
      'client_id',
      '`service-admin`, `service-editor`, or a client id added by `adminAuth.clients`.',
    ),
    grant_type: optionalString(
      'grant_type',
      '`password`, or `authorization_code` to trade the one-time code of a single sign-on.',
    ),
    scope: optionalString('scope', `${SCOPE_WORDS}; \`""\` means the user’s own permissions.`),
    username: optionalString('username'),
    password: optionalString('password'),
    code: optionalString(
      'code',
      'The one-time code a single sign-on handed the console, or a resource server (`authorization_code`).',
    ),
    redirect_uri: optionalString(
      'redirect_uri',
      'A resource server’s `authorization_code` grant: the redirect URI the code was sent to.',
    ),
    code_verifier: optionalString(
      'code_verifier',
      'A resource server’s `authorization_code` grant: the PKCE verifier (RFC 7636).',
    ),
  },
  NOT_AN_OBJECT,
)

/** `POST /auth/revoke`. */
export const RevokeRequestSchema = v.object(
  {
    token: v.pipe(
      v.string('Invalid parameter: token must be a string'),
      v.nonEmpty('Missing required parameter: token'),
    ),
  },
  NOT_AN_OBJECT,
)

/** `POST /auth/introspect` (RFC 7662): `token_type_hint` is accepted and, as the RFC allows, not needed. */
export const IntrospectRequestSchema = v.object(
  {
    token: v.string('Invalid parameter: token must be a string'),
    token_type_hint: optionalString('token_type_hint'),
  },
  NOT_AN_OBJECT,
)

/** `POST /auth/tokens`: a named API token. */
export const CreateTokenRequestSchema = v.object(
  {
    name: v.pipe(
      v.string((issue) => `Invalid field: name must be a string, not ${kindOf(issue.input)}`),
      v.nonEmpty('Invalid field: name must not be empty'),
      v.maxLength(MAX_TOKEN_NAME, `Invalid field: name must be at most ${MAX_TOKEN_NAME} characters`),
    ),
    scope: v.optional(
      v.pipe(
        v.string((issue) => `Invalid field: scope must be a string, not ${kindOf(issue.input)}`),
        v.description(
          'Space-separated permission words (`*`, `read`, `write`, `*.read`, `*.write`, `<resource>.read|write`) or roles (`role:<name>`), each alone (everywhere) or ending in `@flowadmin` or `@<group>`, within the owner’s rights. Default: the caller’s rights.',
        ),
      ),
    ),
    expires_in: v.optional(
      v.pipe(
        v.nullable(
          v.pipe(
            v.number(
              (issue) =>
                `Invalid field: expires_in must be a number of seconds or null, not ${kindOf(issue.input)}`,
            ),
            v.integer('Invalid field: expires_in must be a whole number of seconds'),
            v.minValue(1, 'Invalid field: expires_in must be at least 1'),
          ),
        ),
        v.description('Seconds. Default 90 days; null: never expires (only when the settings allow).'),
      ),
    ),
    audience: v.optional(
      v.pipe(
        v.string((issue) => `Invalid field: audience must be a string, not ${kindOf(issue.input)}`),
        v.nonEmpty('Invalid field: audience must not be empty'),
        v.description(
          'Whom the token is for: `flowadmin` (this API; the default), or the id of one configured resource server, where alone it works (by introspection); flowadmin’s API refuses it.',
        ),
      ),
    ),
  },
  NOT_AN_OBJECT,
)

/** `PUT /nodes/:module` and `PUT /nodes/:module/:set`. */
export const EnableRequestSchema = v.object(
  { enabled: v.boolean((issue) => `Invalid field: enabled must be a boolean, not ${kindOf(issue.input)}`) },
  NOT_AN_OBJECT,
)

const specField = (field: string, max: number, description: string) =>
  v.pipe(
    v.string(`Invalid field: ${field} must be a string`),
    v.nonEmpty(`Invalid field: ${field} must not be empty`),
    v.maxLength(max, `Invalid field: ${field} is longer than ${max} characters`),
    v.description(description),
  )

/**
 * `POST /nodes`: a module from the registry (`version` a semver range, the newest without it), or
 * the tarball at `url`. The installer checks the name, range and URL themselves.
 */
export const InstallRequestSchema = v.pipe(
  v.object(
    {
      module: specField('module', 214, 'An npm package name, scoped or not.'),
      version: v.optional(specField('version', 256, 'A semver range, e.g. `1.2.3` or `^1.2`.')),
      url: v.optional(specField('url', 2048, 'An http(s) URL of a tarball of `module`.')),
    },
    NOT_AN_OBJECT,
  ),
  v.check(
    (request) => request.version === undefined || request.url === undefined,
    'Invalid request: give a version or a url, not both',
  ),
  // The check above, in JSON Schema for the OpenAPI document (a check has no JSON Schema of its own).
  v.metadata({ not: { required: ['version', 'url'], properties: { version: {}, url: {} } } }),
)

// Response bodies. Objects are strict: a body that grows a field fails the document's tests until
// its schema says so. `ref` names the schema in the document's components.

/** A `{code, message}` body (errors.ts) whose code is one of these; `types` with `type_in_use`. */
export const AdminError = (codes: [string, ...string[]], withTypes = false) => {
  const fields = { code: v.picklist(codes), message: v.string() }
  return withTypes
    ? v.strictObject({
        ...fields,
        types: v.optional(v.array(v.string())),
        instances: v.optional(
          v.pipe(v.array(v.string()), v.description('Fleet mode: the instances whose flows use them.')),
        ),
      })
    : v.strictObject(fields)
}

/** An RFC 6749 §5.2 error body whose `error` is one of these. */
export const OAuthError = (errors: [string, ...string[]]) =>
  v.strictObject({ error: v.picklist(errors), error_description: v.string() })

/** Permissions: `*`, `read`, `write` or `<resource>.read|write`. */
export const Permissions = v.pipe(
  v.array(v.string()),
  v.description('Permissions: `*`, `read`, `write` or `<resource>.read|write`.'),
)

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
/** A time as ISO 8601 in UTC. */
export const Time = v.pipe(v.string(), v.regex(ISO_TIME), v.description('ISO 8601, UTC.'))
/** A time, or null. */
export const NullableTime = (description: string) =>
  v.pipe(v.nullable(v.pipe(v.string(), v.regex(ISO_TIME))), v.description(description))
