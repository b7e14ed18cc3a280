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

const optionalString = (field: string) => v.optional(v.string(`Invalid parameter: ${field} must be a string`))

/** `POST /auth/token`: the OAuth2 password grant. The core decides which fields are missing. */
export const TokenRequestSchema = v.object(
  {
    client_id: optionalString('client_id'),
    grant_type: optionalString('grant_type'),
    scope: optionalString('scope'),
    username: optionalString('username'),
    password: optionalString('password'),
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

/** `POST /auth/tokens`: a named API token. */
export const CreateTokenRequestSchema = v.object(
  {
    name: v.pipe(
      v.string((issue) => `Invalid field: name must be a string, not ${kindOf(issue.input)}`),
      v.nonEmpty('Invalid field: name must not be empty'),
      v.maxLength(MAX_TOKEN_NAME, `Invalid field: name must be at most ${MAX_TOKEN_NAME} characters`),
    ),
    scope: v.optional(
      v.string((issue) => `Invalid field: scope must be a string, not ${kindOf(issue.input)}`),
    ),
    expires_in: v.optional(
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
    ),
  },
  NOT_AN_OBJECT,
)

/** `PUT /nodes/:module` and `PUT /nodes/:module/:set`. */
export const EnableRequestSchema = v.object(
  { enabled: v.boolean((issue) => `Invalid field: enabled must be a boolean, not ${kindOf(issue.input)}`) },
  NOT_AN_OBJECT,
)

const specField = (field: string, max: number) =>
  v.pipe(
    v.string(`Invalid field: ${field} must be a string`),
    v.nonEmpty(`Invalid field: ${field} must not be empty`),
    v.maxLength(max, `Invalid field: ${field} is longer than ${max} characters`),
  )

/**
 * `POST /nodes`: a module from the registry (`version` a semver range, the newest without it), or
 * the tarball at `url`. The installer checks the name, range and URL themselves.
 */
export const InstallRequestSchema = v.pipe(
  v.object(
    {
      module: specField('module', 214),
      version: v.optional(specField('version', 256)),
      url: v.optional(specField('url', 2048)),
    },
    NOT_AN_OBJECT,
  ),
  v.check(
    (request) => request.version === undefined || request.url === undefined,
    'Invalid request: give a version or a url, not both',
  ),
)
