import type { PasskeyCredential, WebAuthn } from '@flowadmin/core'

/** An answer of the fake authenticator, shaped as a browser's (its client data carries the challenge). */
export interface FakeAnswer {
  id: string
  rawId: string
  type: 'public-key'
  response: {
    clientDataJSON: string
    /** A placeholder where a real answer has its attestation (registration) or signature (sign-in). */
    attestationObject: string
    fake: { counter: number; valid: boolean; backedUp: boolean }
  }
  clientExtensionResults: Record<string, never>
}

const clientData = (challenge: string, type: string) =>
  Buffer.from(JSON.stringify({ type, challenge, origin: 'https://fa.example' })).toString('base64url')

const answer = (
  id: string,
  challenge: string,
  type: string,
  fake: { counter?: number; valid?: boolean; backedUp?: boolean },
): FakeAnswer => ({
  id,
  rawId: id,
  type: 'public-key',
  response: {
    clientDataJSON: clientData(challenge, type),
    attestationObject: 'ZmFrZQ',
    fake: { counter: fake.counter ?? 0, valid: fake.valid ?? true, backedUp: fake.backedUp ?? false },
  },
  clientExtensionResults: {},
})

const fakeOf = (response: unknown) => (response as Partial<FakeAnswer>).response?.fake
const challengeIn = (response: unknown): string | null => {
  const data = (response as Partial<FakeAnswer>).response?.clientDataJSON
  if (typeof data !== 'string') return null
  return (JSON.parse(Buffer.from(data, 'base64url').toString()) as { challenge?: string }).challenge ?? null
}

/**
 * A pretend relying party and authenticator: options carry the challenges the core gives, and
 * `create` / `get` make the answers a browser would send for them. An answer verifies when its
 * challenge is the one expected and it was not made `valid: false`; its public key is `pk-<id>`.
 */
export function createFakeWebAuthn() {
  const fake = {
    async registrationOptions(username: string, exclude: readonly PasskeyCredential[], challenge: string) {
      return { options: { challenge, user: username, exclude: exclude.map((one) => one.id) } }
    },
    async verifyRegistration(response: unknown, challenge: string) {
      const id = (response as Partial<FakeAnswer>).id
      const details = fakeOf(response)
      if (
        typeof id !== 'string' ||
        details === undefined ||
        !details.valid ||
        challengeIn(response) !== challenge
      )
        return null
      return {
        id,
        publicKey: `pk-${id}`,
        counter: details.counter,
        transports: ['internal'],
        backedUp: details.backedUp,
      }
    },
    async authenticationOptions(challenge: string) {
      return { options: { challenge, userVerification: 'required' } }
    },
    async verifyAuthentication(response: unknown, challenge: string, credential: PasskeyCredential) {
      const details = fakeOf(response)
      if (details === undefined || !details.valid || challengeIn(response) !== challenge) return null
      if (credential.publicKey !== `pk-${(response as FakeAnswer).id}`) return null
      return { counter: details.counter, backedUp: details.backedUp }
    },
    /** The answer to registration options: a new credential `id`. */
    create: (options: unknown, id: string, fakeDetails: { counter?: number; valid?: boolean } = {}) =>
      answer(id, (options as { challenge: string }).challenge, 'webauthn.create', fakeDetails),
    /** The answer to sign-in options with credential `id`, reporting `counter`. */
    get: (
      options: unknown,
      id: string,
      fakeDetails: { counter?: number; valid?: boolean; backedUp?: boolean } = {},
    ) => answer(id, (options as { challenge: string }).challenge, 'webauthn.get', fakeDetails),
  }
  return fake satisfies WebAuthn & Record<string, unknown>
}
