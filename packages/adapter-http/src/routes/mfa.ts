import { RECOVERY_CODE_COUNT } from '@flowadmin/core'
import { Hono } from 'hono'
import * as v from 'valibot'
import { requirePerson } from '../auth.js'
import type { AppEnv, RouteDeps } from '../env.js'
import { adminError, emptyResponse, signedInRefusal, toResponse } from '../errors.js'
import { readFields } from '../fields.js'
import { noStore } from '../no-store.js'
import {
  adminErrorContent,
  describe,
  json,
  NO_STORE,
  NO_STORE_HEADERS,
  noStoreTooLarge,
  oauthErrorContent,
  RETRY_AFTER,
  reauthenticate,
  removalRefusals,
  signedInAnswers,
} from '../openapi.js'
import { NullableTime } from '../schemas.js'

const FactorStatusSchema = v.strictObject({
  totp: v.pipe(
    v.picklist(['none', 'pending', 'enrolled']),
    v.description('`pending`: an enrolment awaits its first code; `enrolled`: confirmed.'),
  ),
  recovery_codes: v.pipe(
    v.number(),
    v.integer(),
    v.minValue(0),
    v.description('Unused recovery codes left.'),
  ),
  enrolled_at: NullableTime(
    'When the authenticator app was set up (its first code); null while there is none.',
  ),
  enrolled_at_sign_in: v.pipe(
    v.boolean(),
    v.description(
      'Whether it was set up during a sign-in, with the password alone, because `adminAuth.mfa.require` asked for it there (the person should know it was them).',
    ),
  ),
})

const TotpEnrolmentSchema = v.strictObject({
  secret: v.pipe(
    v.string(),
    v.description('The secret (base32), to type into an authenticator app; shown once.'),
  ),
  uri: v.pipe(
    v.string(),
    v.regex(/^otpauth:\/\/totp\//),
    v.description('The `otpauth://` URI of the secret.'),
  ),
  qr: v.pipe(
    v.string(),
    v.regex(/^data:image\/svg\+xml;base64,/),
    v.description('The URI as a QR code: an SVG image as a `data:` URL, made by flowadmin.'),
  ),
})

const ConfirmSchema = v.strictObject({
  code: v.pipe(v.string(), v.minLength(1), v.maxLength(64), v.description('A code of the new secret.')),
})

const RecoveryCodesSchema = v.strictObject({
  recovery_codes: v.pipe(
    v.array(v.string()),
    v.length(RECOVERY_CODE_COUNT),
    v.description('Ten recovery codes, each usable once instead of a code; shown this once.'),
  ),
})

const conflict = (codes: [string, ...string[]]) => ({
  409: {
    description:
      '`mfa_not_configured`: no key for second-factor secrets; `factor_exists`: a factor is enrolled already; `enrolment_not_found`: no enrolment awaits a code; `provider_sign_in`: the caller signs in with the identity provider, which never asks for a factor of flowadmin’s, so none can be set up for them.',
    ...NO_STORE,
    content: adminErrorContent(codes),
  },
})

/**
 * A person's second factor: `GET /auth/mfa`, `POST /auth/mfa/totp` (begin a TOTP enrolment),
 * `POST /auth/mfa/totp/confirm` (one code confirms it), `DELETE /auth/mfa` (the caller's app) and
 * `DELETE /auth/mfa?user=U` (every factor: anyone's needs `*`). Only when auth is on.
 */
export function mfaRoutes(deps: RouteDeps): Hono<AppEnv> {
  const { core } = deps
  const routes = new Hono<AppEnv>()
  if (!core.authEnabled) return routes
  const signedIn = requirePerson(deps)

  routes.get(
    '/auth/mfa',
    describe({
      operationId: 'getSecondFactor',
      summary: 'The caller’s second factor: none, an enrolment awaiting its code, or enrolled',
      tags: ['auth'],
      responses: {
        200: { description: 'Never a secret.', ...NO_STORE, content: json(FactorStatusSchema) },
        ...signedInAnswers(),
      },
    }),
    noStore,
    signedIn,
    async (c) => {
      const person = c.get('person')
      const status = await core.mfa.status(person)
      return c.json({
        totp: status.totp,
        recovery_codes: status.recoveryCodes,
        enrolled_at: status.enrolledAt === null ? null : new Date(status.enrolledAt).toISOString(),
        enrolled_at_sign_in: status.enrolledAtSignIn,
      })
    },
  )

  routes.post(
    '/auth/mfa/totp',
    describe({
      operationId: 'startTotpEnrolment',
      summary: 'Begin a TOTP enrolment for the caller: a new secret, its URI and QR code',
      description:
        'The secret is shown in this answer only, and replaces an enrolment not yet confirmed. ' +
        'Nothing changes at sign-in until `POST /auth/mfa/totp/confirm` confirms it with one code. ' +
        'Only the person’s own session for flowadmin may enrol: an API token gets 401 `insufficient_scope`.',
      tags: ['auth'],
      responses: {
        200: { description: 'The new secret.', ...NO_STORE, content: json(TotpEnrolmentSchema) },
        ...conflict(['mfa_not_configured', 'factor_exists', 'provider_sign_in']),
        ...signedInAnswers(),
        ...reauthenticate(),
      },
    }),
    noStore,
    signedIn,
    async (c) => {
      const person = c.get('person')
      const started = await core.mfa.startTotp(person)
      if (!started.ok) return signedInRefusal(started.error)
      const { secret, uri, qrSvg } = started.value
      return c.json({ secret, uri, qr: `data:image/svg+xml;base64,${btoa(qrSvg)}` })
    },
  )

  routes.post(
    '/auth/mfa/totp/confirm',
    describe({
      operationId: 'confirmTotpEnrolment',
      summary: 'Confirm the caller’s TOTP enrolment with one code; answers ten recovery codes, once',
      description:
        'The code must be of the current time step or the one before or after. On success the ' +
        'caller’s other sessions end (API tokens stay) and `mfa.enrolled` is audited. Wrong codes ' +
        'count against the caller like wrong passwords (`mfa.failed`) and are throttled alike. ' +
        'Only the person’s own session may confirm: an API token gets 401 `insufficient_scope`.',
      tags: ['auth'],
      requestBody: {
        required: true,
        content: json(ConfirmSchema, {
          wrong: { summary: 'A code that is not the app’s (400)', value: { code: '000000' } },
          empty: { summary: 'No code (400)', value: {} },
        }),
      },
      responses: {
        200: { description: 'Confirmed.', ...NO_STORE, content: json(RecoveryCodesSchema) },
        400: {
          description: 'Not a JSON object with a `code`, or the code is wrong (`invalid_code`).',
          ...NO_STORE,
          content: adminErrorContent(['invalid_request', 'invalid_code']),
        },
        ...conflict(['mfa_not_configured', 'factor_exists', 'enrolment_not_found', 'provider_sign_in']),
        413: noStoreTooLarge('admin'),
        429: {
          description: 'Too many wrong codes for this user or from this address; nothing was checked.',
          headers: { ...NO_STORE_HEADERS, 'Retry-After': RETRY_AFTER },
          content: oauthErrorContent(['temporarily_unavailable']),
        },
        ...signedInAnswers(),
      },
    }),
    noStore,
    signedIn,
    async (c) => {
      const person = c.get('person')
      const fields = await readFields(c, deps.maxBodyBytes, ['json'], ConfirmSchema, 'admin')
      if (!fields.ok) return fields.error
      const confirmed = await core.mfa.confirmTotp(person, fields.value.code, c.get('address'))
      if (!confirmed.ok) return signedInRefusal(confirmed.error)
      return c.json({ recovery_codes: confirmed.value.recoveryCodes })
    },
  )

  routes.delete(
    '/auth/mfa',
    describe({
      operationId: 'removeSecondFactor',
      summary: 'Remove the caller’s authenticator app, or every second factor of a user',
      description:
        'Without `user`: the caller’s TOTP secret and recovery codes (their passkeys stay). With `user`: every second factor of that user (TOTP, recovery codes, passkeys): the caller’s own, or, for a caller with `*`, anyone’s. ' +
        'Either way only the person’s own session for flowadmin may, begun within 10 minutes with a second factor (a code of the authenticator app, a recovery code or a passkey): an API token, even with `*`, gets 401 `insufficient_scope`; an older session, or one signed in with a password alone or the identity provider, gets 403 `reauthentication_required`. ' +
        'On the server, `flowadmin mfa reset USER` does it without a session. ' +
        'The user’s sessions end (the caller’s own stays) and `mfa.removed` is audited. They sign in without a second factor until they enrol again (unless `adminAuth.mfa.require` asks them to, at their next sign-in).',
      tags: ['auth'],
      parameters: [
        {
          name: 'user',
          in: 'query',
          required: false,
          description: 'Whose factors are removed, all of them; absent: the caller’s authenticator app.',
          schema: { type: 'string', minLength: 1 },
          examples: { none: { summary: 'A user with no second factor (404)', value: 'nobody' } },
        },
      ],
      responses: {
        204: { description: 'Removed. Empty body.' },
        400: {
          description: '`user` empty.',
          ...NO_STORE,
          content: adminErrorContent(['invalid_request']),
        },
        404: { description: 'Nothing to remove: no authenticator app, or no second factor. Empty body.' },
        ...removalRefusals(),
        ...signedInAnswers(),
      },
    }),
    noStore,
    signedIn,
    async (c) => {
      const person = c.get('person')
      const user = c.req.query('user')
      if (user === '') return toResponse(adminError(400, 'invalid_request', 'user: must not be empty'))
      const removed =
        user === undefined
          ? await core.mfa.removeTotp(person, c.get('address'))
          : await core.mfa.remove(person, user, c.get('address'))
      if (!removed.ok) return signedInRefusal(removed.error)
      return emptyResponse(removed.value ? 204 : 404)
    },
  )

  return routes
}
