// Passkeys (WebAuthn) with @simplewebauthn/server: the relying party is `adminAuth.webauthn`, its
// id and the origins its pages are served from. Passkeys here are discoverable credentials
// (residentKey 'required'), so the sign-in page asks for none by name. User verification is
// required, in the options (the browser asks for a PIN or biometric, and offers no authenticator
// that cannot) and when an answer is verified: a passkey alone signs a person in, so it must prove
// its holder as a password and a second factor together would. The challenges are the core's
// (carried by the browser, see carried-challenges), given as base64url.
import { createHash } from 'node:crypto'
import type { PasskeyCredential, WebAuthn } from '@flowadmin/core'
import {
  type AuthenticationResponseJSON,
  type AuthenticatorTransportFuture,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server'
import type { WebAuthnSettings } from '../config/settings/webauthn.js'

/** Milliseconds the browser gives the person to answer; the challenge lives longer (5 min). */
const CEREMONY_TIMEOUT_MS = 120_000

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * The user handle of `username` under this relying party: the same for every passkey of the
 * person (so an authenticator keeps one passkey per person here, not one per registration), and
 * no more than the username the authenticator is given anyway.
 */
const userHandle = (rpId: string, username: string): Uint8Array<ArrayBuffer> =>
  new Uint8Array(createHash('sha256').update(`flowadmin passkey user\n${rpId}\n${username}`).digest())

/** The bytes of the core's challenge (base64url): the options carry them as base64url again. */
const challengeBytes = (challenge: string): Uint8Array<ArrayBuffer> =>
  new Uint8Array(Buffer.from(challenge, 'base64url'))

const transportsOf = (transports: readonly string[]) => transports as AuthenticatorTransportFuture[]

/** The relying party of the settings; answers that do not verify are null, never a throw. */
export function createWebAuthn(settings: WebAuthnSettings): WebAuthn {
  const { rpId, rpName, origins } = settings
  const expected = { expectedOrigin: [...origins], expectedRPID: rpId, requireUserVerification: true }
  return {
    async registrationOptions(username: string, exclude: readonly PasskeyCredential[], challenge: string) {
      const options = await generateRegistrationOptions({
        rpName,
        rpID: rpId,
        challenge: challengeBytes(challenge),
        userName: username,
        userID: userHandle(rpId, username),
        userDisplayName: username,
        timeout: CEREMONY_TIMEOUT_MS,
        attestationType: 'none',
        excludeCredentials: exclude.map((credential) => ({
          id: credential.id,
          transports: transportsOf(credential.transports),
        })),
        authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
      })
      return { options }
    },

    async verifyRegistration(response: unknown, challenge: string) {
      if (!isRecord(response)) return null
      try {
        const verified = await verifyRegistrationResponse({
          response: response as unknown as RegistrationResponseJSON,
          expectedChallenge: challenge,
          ...expected,
        })
        if (!verified.verified) return null
        const { credential, credentialBackedUp } = verified.registrationInfo
        return {
          id: credential.id,
          publicKey: Buffer.from(credential.publicKey).toString('base64url'),
          counter: credential.counter,
          transports: [...(credential.transports ?? [])],
          backedUp: credentialBackedUp,
        }
      } catch {
        // The library throws for every answer that does not verify, and for malformed ones.
        return null
      }
    },

    async authenticationOptions(challenge: string) {
      const options = await generateAuthenticationOptions({
        rpID: rpId,
        challenge: challengeBytes(challenge),
        timeout: CEREMONY_TIMEOUT_MS,
        userVerification: 'required',
      })
      return { options }
    },

    async verifyAuthentication(response: unknown, challenge: string, credential: PasskeyCredential) {
      if (!isRecord(response)) return null
      try {
        const verified = await verifyAuthenticationResponse({
          response: response as unknown as AuthenticationResponseJSON,
          expectedChallenge: challenge,
          ...expected,
          // The counter is compared by the store (one compare-and-set for every instance), not
          // here: given 0, the library compares nothing.
          credential: {
            id: credential.id,
            publicKey: new Uint8Array(Buffer.from(credential.publicKey, 'base64url')),
            counter: 0,
            transports: transportsOf(credential.transports),
          },
        })
        if (!verified.verified) return null
        const { newCounter, credentialBackedUp } = verified.authenticationInfo
        return { counter: newCounter, backedUp: credentialBackedUp }
      } catch {
        return null
      }
    },
  }
}
