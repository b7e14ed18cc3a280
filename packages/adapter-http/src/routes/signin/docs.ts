import * as v from 'valibot'
import { describe, HTML_PAGE, type Responses, schemaOf } from '../../openapi.js'

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
