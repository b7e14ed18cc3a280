import { MAX_PASSKEY_NAME, type PasskeyView } from '@flowadmin/core'
import { Hono } from 'hono'
import * as v from 'valibot'
import { requirePerson } from '../auth.js'
import type { AppEnv, RouteDeps } from '../env.js'
import { emptyResponse, signedInRefusal } from '../errors.js'
import { readFields } from '../fields.js'
import { noStore } from '../no-store.js'
import {
  adminErrorContent,
  describe,
  describeTemplates,
  json,
  NO_STORE,
  noStoreTooLarge,
  reauthenticate,
  removalRefusals,
  signedInAnswers,
} from '../openapi.js'
import { NullableTime, Time } from '../schemas.js'

const iso = (time: number) => new Date(time).toISOString()

const PasskeySchema = v.strictObject({
  id: v.pipe(
    v.string(),
    v.description('The credential id (base64url): names it for `DELETE /auth/passkeys/{id}`.'),
  ),
  name: v.pipe(v.string(), v.description('The name its owner gave it.')),
  created_at: Time,
  last_used_at: NullableTime('Its last sign-in; null: it signed in never.'),
  backed_up: v.pipe(
    v.boolean(),
    v.description('Whether its provider backs it up (a synced passkey), as its last use said.'),
  ),
})

const PasskeyListSchema = v.strictObject({ passkeys: v.array(PasskeySchema) })

const OptionsSchema = v.strictObject({
  options: v.pipe(
    v.looseObject({ challenge: v.string() }),
    v.description(
      'PublicKeyCredentialCreationOptionsJSON, for `startRegistration({ optionsJSON })` of @simplewebauthn/browser. Its challenge serves once, for 5 minutes.',
    ),
  ),
})

/** A browser's registration answer (RegistrationResponseJSON): checked by the relying party, not here. */
const RegistrationResponseSchema = v.pipe(
  v.looseObject({
    id: v.pipe(v.string(), v.minLength(1), v.maxLength(1024)),
    rawId: v.string(),
    type: v.literal('public-key'),
    response: v.looseObject({ clientDataJSON: v.string(), attestationObject: v.string() }),
  }),
  v.description(
    'What `startRegistration()` of @simplewebauthn/browser resolved with (RegistrationResponseJSON).',
  ),
)

const RegisterSchema = v.strictObject({
  name: v.pipe(
    v.string(),
    v.minLength(1),
    v.maxLength(MAX_PASSKEY_NAME),
    v.check((name) => name.trim() !== '', 'must not be blank'),
    v.description('A name for the passkey (1 to 64 characters), to tell it from the person’s others.'),
  ),
  response: RegistrationResponseSchema,
})

const toJson = (view: PasskeyView) => ({
  id: view.id,
  name: view.name,
  created_at: iso(view.createdAt),
  last_used_at: view.lastUsedAt === null ? null : iso(view.lastUsedAt),
  backed_up: view.backedUp,
})

const common = () => ({
  ...signedInAnswers(),
  409: {
    description: '`passkeys_not_configured`: no relying party is configured (`adminAuth.webauthn`).',
    ...NO_STORE,
    content: adminErrorContent(['passkeys_not_configured']),
  },
})
/**
 * 409 of a route that adds a passkey: none can be made here, the caller has as many as allowed,
 * or the caller signs in with the identity provider.
 */
const tooMany = () => ({
  409: {
    description:
      '`passkeys_not_configured`: no relying party is configured (`adminAuth.webauthn`); `too_many_passkeys`: the caller has 10; `provider_sign_in`: the caller signs in with the identity provider, which never asks for a passkey of flowadmin’s, so none can be registered for them.',
    ...NO_STORE,
    content: adminErrorContent(['passkeys_not_configured', 'too_many_passkeys', 'provider_sign_in']),
  },
})
const OWN_SESSION =
  'Only the person’s own session for flowadmin may: an API token or another audience’s token gets 401 `insufficient_scope`.'

/**
 * A person's passkeys: `GET /auth/passkeys`, `POST /auth/passkeys/options` (options to make one),
 * `POST /auth/passkeys` (register the browser's answer), `DELETE /auth/passkeys/:id`. Each is the
 * person's own session's. Only when auth is on.
 */
export function passkeyRoutes(deps: RouteDeps): Hono<AppEnv> {
  const { core } = deps
  const routes = new Hono<AppEnv>()
  if (!core.authEnabled) return routes
  const signedIn = requirePerson(deps)

  routes.get(
    '/auth/passkeys',
    describe({
      operationId: 'listPasskeys',
      summary: 'The caller’s passkeys, oldest first',
      description: `Never a public key. ${OWN_SESSION}`,
      tags: ['auth'],
      responses: {
        200: { description: 'The passkeys.', ...NO_STORE, content: json(PasskeyListSchema) },
        ...common(),
      },
    }),
    noStore,
    signedIn,
    async (c) => {
      const person = c.get('person')
      const listed = await core.passkeys.list(person)
      if (!listed.ok) return signedInRefusal(listed.error)
      return c.json({ passkeys: listed.value.map(toJson) })
    },
  )

  routes.post(
    '/auth/passkeys/options',
    describe({
      operationId: 'passkeyRegistrationOptions',
      summary: 'Options for the caller’s browser to make a passkey',
      description: `A discoverable credential (a passkey), never one of the caller’s passkeys already here, user verification \`required\`. Its challenge is bound to the caller’s session and is not stored (the browser carries it back): any number of options costs nothing. ${OWN_SESSION}`,
      tags: ['auth'],
      responses: {
        200: { description: 'The options.', ...NO_STORE, content: json(OptionsSchema) },
        ...common(),
        ...tooMany(),
        ...reauthenticate(),
      },
    }),
    noStore,
    signedIn,
    async (c) => {
      const person = c.get('person')
      const made = await core.passkeys.registrationOptions(person)
      if (!made.ok) return signedInRefusal(made.error)
      return c.json({ options: made.value.options })
    },
  )

  routes.post(
    '/auth/passkeys',
    describe({
      operationId: 'registerPasskey',
      summary:
        'Register the passkey the caller’s browser made with options from `POST /auth/passkeys/options`',
      description:
        'The answer must carry the challenge of those options (once, within 5 minutes), come from a configured origin and verify. ' +
        `On success the caller’s other sessions end (API tokens stay) and \`passkey.registered\` is audited. ${OWN_SESSION}`,
      tags: ['auth'],
      requestBody: {
        required: true,
        content: json(RegisterSchema, {
          stale: {
            summary: 'An answer to a challenge never given, or used already (400)',
            value: {
              name: 'Laptop',
              response: {
                id: 'Y3JlZC0x',
                rawId: 'Y3JlZC0x',
                type: 'public-key',
                response: {
                  clientDataJSON: 'eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIiwiY2hhbGxlbmdlIjoibm9uZSJ9',
                  attestationObject: 'o2NmbXRkbm9uZQ',
                },
                clientExtensionResults: {},
              },
            },
          },
          empty: { summary: 'No name and no answer (400)', value: {} },
        }),
      },
      responses: {
        201: {
          description: 'Registered.',
          ...NO_STORE,
          content: json(v.strictObject({ passkey: PasskeySchema })),
        },
        400: {
          description:
            'Not a JSON object with a `name` and a `response` (`invalid_request`), or the answer was refused (`passkey_refused`).',
          ...NO_STORE,
          content: adminErrorContent(['invalid_request', 'passkey_refused']),
        },
        ...common(),
        ...tooMany(),
        413: noStoreTooLarge('admin'),
      },
    }),
    noStore,
    signedIn,
    async (c) => {
      const person = c.get('person')
      const fields = await readFields(c, deps.maxBodyBytes, ['json'], RegisterSchema, 'admin')
      if (!fields.ok) return fields.error
      const { name, response } = fields.value
      const registered = await core.passkeys.register(person, name, response, c.get('address'))
      if (!registered.ok) return signedInRefusal(registered.error)
      return c.json({ passkey: toJson(registered.value) }, 201)
    },
  )

  const prefix = `${deps.basePath}/auth/passkeys/`
  routes.delete(
    '/auth/passkeys/*',
    describeTemplates({
      '/auth/passkeys/{id}': {
        operationId: 'removePasskey',
        summary: 'Remove one of the caller’s passkeys',
        description: `Only the person’s own session may, begun within 10 minutes with a second factor (a code of the authenticator app, a recovery code or a passkey): an API token gets 401 \`insufficient_scope\`, an older session or one signed in with a password alone 403 \`reauthentication_required\`; \`flowadmin mfa reset USER\` on the server removes all of a person’s. The caller’s other sessions end (API tokens stay) and \`passkey.removed\` is audited.`,
        tags: ['auth'],
        parameters: [
          {
            name: 'id',
            in: 'path',
            required: true,
            description: 'The credential id (base64url), as `GET /auth/passkeys` lists it.',
            schema: { type: 'string', minLength: 1 },
            examples: { unknown: { summary: 'No passkey of the caller’s (404)', value: 'unknown' } },
          },
        ],
        responses: {
          204: { description: 'Removed. Empty body.' },
          404: {
            description: 'The caller has no passkey with that id.',
            ...NO_STORE,
            content: adminErrorContent(['passkey_not_found']),
          },
          ...removalRefusals(),
          ...common(),
        },
      },
    }),
    noStore,
    signedIn,
    async (c) => {
      const person = c.get('person')
      const id = c.req.path.startsWith(prefix) ? c.req.path.slice(prefix.length) : ''
      const removed = await core.passkeys.remove(person, id, c.get('address'))
      if (!removed.ok) return signedInRefusal(removed.error)
      return emptyResponse(204)
    },
  )

  return routes
}
