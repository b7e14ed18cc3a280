import * as v from 'valibot'
import {
  adminErrorContent,
  describe,
  HTML_PAGE,
  json,
  NO_STORE_HEADERS,
  type Responses,
  schemaOf,
} from '../../openapi.js'

// How the document shows the sign-in page's steps.

/** What each status of a form step means; each step documents the ones it gives. */
const STEP_ANSWERS: Record<200 | 302 | 303 | 400 | 401 | 403 | 429 | 503, Responses[string]> = {
  200: { description: 'The next step’s page (HTML).', content: HTML_PAGE },
  302: {
    description:
      'To the resource server’s redirect URI with `error` (`temporarily_unavailable`: the provider cannot be reached) and `state`.',
  },
  303: {
    description:
      'Signed in: to the console with `#sso_code=…`, or to the resource server’s redirect URI with `code` and `state`.',
  },
  400: {
    description:
      'No sign-in of this browser now (never begun, used, or past its time), or a form this page does not send (an HTML page); nothing was checked.',
    content: HTML_PAGE,
  },
  401: {
    description:
      'Wrong username or password, or a wrong, expired or used code: the same step again (an HTML page).',
    content: HTML_PAGE,
  },
  403: {
    description:
      'Sent from another site (the browser’s `Sec-Fetch-Site` is not `same-origin`): an HTML page; nothing was checked.',
    content: HTML_PAGE,
  },
  429: {
    description: 'Too many failed attempts (an HTML page, `Retry-After`); nothing was checked.',
    content: HTML_PAGE,
  },
  503: {
    description:
      'Too many sign-ins are being checked, or waiting to finish, now (an HTML page, `Retry-After`).',
    content: HTML_PAGE,
  },
}

/** The description of a form step of the sign-in page, answering with these statuses. */
export const formStep = (
  operationId: string,
  summary: string,
  description: string,
  statuses: ReadonlyArray<keyof typeof STEP_ANSWERS>,
  example: Record<string, string>,
) =>
  describe({
    operationId,
    summary,
    description: `${description} A form of the sign-in page (\`application/x-www-form-urlencoded\`), with the cookie \`GET /auth/signin\` or \`GET /auth/authorize\` set; answered with the next page, or with 303 to where the sign-in ends.`,
    tags: ['auth'],
    security: [],
    requestBody: {
      required: true,
      content: {
        'application/x-www-form-urlencoded': {
          schema: schemaOf(
            v.object(Object.fromEntries(Object.keys(example).map((name) => [name, v.string()]))),
          ),
          examples: {
            uncookied: { summary: 'From a browser that began no sign-in (400)', value: example },
          },
        },
      },
    },
    responses: Object.fromEntries(statuses.map((status) => [status, STEP_ANSWERS[status]])),
  })

/** The description of a call of the passkey button's script: its 200, and its refusals besides `more`. */
export const passkeyStep = (
  operationId: string,
  summary: string,
  description: string,
  example: Record<string, unknown>,
  ok: { description: string; schema: v.GenericSchema },
  more: Record<number, object> = {},
) =>
  describe({
    operationId,
    summary,
    description: `${description} Called by the sign-in page's script, with the cookie of a sign-in begun in this browser.`,
    tags: ['auth'],
    security: [],
    requestBody: {
      required: true,
      content: json(v.object({}), {
        uncookied: { summary: 'From a browser that began no sign-in (400)', value: example },
      }),
    },
    responses: {
      200: { description: ok.description, headers: NO_STORE_HEADERS, content: json(ok.schema) },
      400: {
        description:
          '`sign_in_expired`: no sign-in of this browser now; `passkey_refused`: the answer did not verify (its challenge unknown, used or expired, its passkey unknown, another origin, a counter that did not grow); `invalid_request`: not JSON.',
        headers: NO_STORE_HEADERS,
        content: adminErrorContent(['sign_in_expired', 'passkey_refused', 'invalid_request']),
      },
      403: {
        description:
          '`cross_site`: sent from another site (the browser’s `Sec-Fetch-Site` is not `same-origin`).',
        headers: NO_STORE_HEADERS,
        content: adminErrorContent(['cross_site']),
      },
      409: {
        description: '`passkeys_not_configured`: no `adminAuth.webauthn` here.',
        headers: NO_STORE_HEADERS,
        content: adminErrorContent(['passkeys_not_configured']),
      },
      ...more,
    },
  })
