import { Hono } from 'hono'
import * as v from 'valibot'
import { pageBindingOf } from '../../binding.js'
import { readBody } from '../../body.js'
import type { AppEnv } from '../../env.js'
import { adminBodyError, errorAnswerOf, toResponse } from '../../errors.js'
import { noStore, noStoreJson } from '../../no-store.js'
import { adminErrorContent, NO_STORE_HEADERS, RETRY_AFTER } from '../../openapi.js'
import { passkeyStep } from './docs.js'
import { EXPIRED, type SignInFlow } from './flow.js'

/** The answer of a passkey step when this browser began no sign-in here. */
const noSignIn = () => noStoreJson(400, { code: 'sign_in_expired', message: EXPIRED })

/**
 * The passkey button's calls (the page's script): the challenge, then the browser's answer, which
 * signs the person in whatever the policy asks (a passkey is a second factor itself).
 */
export function signInPasskeyRoutes(flow: SignInFlow): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  const { core, deps, destinationOf, handOver } = flow

  routes.post(
    '/auth/signin/passkey/options',
    passkeyStep(
      'signInPasskeyOptions',
      'Sign in with a passkey: the challenge',
      'Options for `navigator.credentials.get()` (no credential listed: the browser offers the person’s passkeys for this site; user verification `required`). Their challenge is bound to this browser’s sign-in cookie and the client’s address (an IPv6 /64), serves once, within 5 minutes, and is not stored: the browser carries it, so no number of options never answered costs the server anything or stops anyone’s sign-in.',
      {},
      {
        description: 'Options for the browser (PublicKeyCredentialRequestOptionsJSON).',
        schema: v.strictObject({ options: v.record(v.string(), v.unknown()) }),
      },
    ),
    noStore,
    async (c) => {
      const binding = pageBindingOf(c)
      if (binding === null) return noSignIn()
      const options = await core.passkeys.signInOptions(binding, deps.clientAddress(c) ?? '')
      if (!options.ok) return toResponse(errorAnswerOf(options.error))
      return noStoreJson(200, { options: options.value.options })
    },
  )

  routes.post(
    '/auth/signin/passkey',
    passkeyStep(
      'signInPasskey',
      'Sign in with a passkey',
      'Checks the browser’s answer (its challenge: one given to this browser and address, in time, unused; signature, origin, relying party, user verification, the passkey’s counter); the challenge is then spent, and the person is signed in, as they are now, whatever the policy asks (a passkey is a second factor itself).',
      { response: { id: 'credential-id', type: 'public-key', response: {} } },
      {
        description:
          'Signed in: where the browser goes next (the console with `#sso_code=…`, or the resource server’s redirect URI with `code` and `state`).',
        schema: v.strictObject({ redirect: v.string() }),
      },
      {
        429: {
          description:
            '`too_many_sign_ins`: 100 one-time codes of this client address (an IPv6 /64) wait to be traded (`Retry-After`); the sign-in did not end (audited as `passkey.failed`).',
          headers: { ...NO_STORE_HEADERS, 'Retry-After': RETRY_AFTER },
          content: adminErrorContent(['too_many_sign_ins']),
        },
        503: {
          description:
            '`too_many_sign_ins`: 10,000 one-time codes wait to be traded in all (`Retry-After`); the sign-in did not end (audited as `passkey.failed`).',
          headers: { ...NO_STORE_HEADERS, 'Retry-After': RETRY_AFTER },
          content: adminErrorContent(['too_many_sign_ins']),
        },
      },
    ),
    noStore,
    async (c) => {
      const binding = pageBindingOf(c)
      if (binding === null) return noSignIn()
      const body = await readBody(c.req.raw, deps.maxBodyBytes, ['json'], c.env)
      if (!body.ok) return toResponse(adminBodyError(body.error))
      const given = body.value.destination
      const destination =
        typeof given === 'object' && given !== null ? destinationOf(given as Record<string, unknown>) : null
      // Checked before the answer, so a sign-in going nowhere spends no challenge.
      if (destination === null) return noSignIn()
      const address = deps.clientAddress(c) ?? ''
      const signedIn = await core.passkeys.signIn(body.value.response, binding, address)
      if (!signedIn.ok) return toResponse(errorAnswerOf(signedIn.error))
      const handed = await handOver(c, { user: signedIn.value.user, method: 'passkey' }, destination, binding)
      if (!handed.ok) return toResponse(errorAnswerOf({ code: 'too_many_sign_ins', scope: handed.scope }))
      return noStoreJson(200, { redirect: handed.location })
    },
  )

  return routes
}
