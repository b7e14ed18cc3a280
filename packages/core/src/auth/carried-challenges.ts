// Challenges the browser carries: what a ceremony needs between its start and its answer (a
// passkey's challenge, a single sign-on's start) is handed to the browser, authenticated by a key
// only flowadmin holds, and never stored, so a start that is never answered costs the server
// nothing and no number of them can stop anyone else's. Each is bound to its purpose, to what
// asked for it (the browser's sign-in cookie, or a person's session), to the scope of the client
// address (see addressScope) and to anything it carries, and ends at its time. Its answer spends
// it in the store, once for every instance sharing the store, after the answer proved something
// (a passkey's signature, the provider's ID token): only then is a row written.
import type { Clock, Digest, RandomSource, SsoStore } from '../ports/index.js'
import { base64url, fromBase64url } from '../tokens/encoding.js'
import { addressScope } from './address-scope.js'
import { equalInConstantTime } from './machine-secret.js'

/** What a challenge is for: one never serves another purpose. */
export type ChallengePurpose = 'passkey-sign-in' | 'passkey-register' | 'sso'

/**
 * What a challenge is bound to: `holder`, what asked for it (the sign-in cookie's value, or a
 * session's token id), and the client address it was given to (its scope counts).
 */
export interface ChallengeBinding {
  holder: string
  address: string | null
}

/** A challenge whose key and time held: what spending it needs. */
export interface CheckedChallenge {
  id: string
  expiresAt: number
}

/** Random bytes of a challenge's id. */
const ID_BYTES = 16
/** Bytes of its end (milliseconds since the epoch, big-endian) and of its MAC (HMAC-SHA-256). */
const TIME_BYTES = 8
const MAC_BYTES = 32
/** Random bytes of a new key. */
const KEY_BYTES = 32

const toHex = (bytes: Uint8Array): string =>
  Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')
const fromHex = (hex: string): Uint8Array =>
  Uint8Array.from({ length: hex.length / 2 }, (_, i) => Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16))

/** `id ‖ end ‖ MAC` as base64url: what a browser carries (75 characters). */
function encode(id: Uint8Array, expiresAt: number, mac: string): string {
  const bytes = new Uint8Array(ID_BYTES + TIME_BYTES + MAC_BYTES)
  bytes.set(id)
  let time = expiresAt
  for (let i = ID_BYTES + TIME_BYTES - 1; i >= ID_BYTES; i--) {
    bytes[i] = time % 256
    time = Math.floor(time / 256)
  }
  bytes.set(fromHex(mac), ID_BYTES + TIME_BYTES)
  return base64url(bytes)
}

/** The parts of a carried challenge, or null when it is not one's form. */
function decode(carried: string): { id: string; expiresAt: number; mac: string } | null {
  if (carried.length > 128) return null
  const bytes = fromBase64url(carried)
  if (bytes === null || bytes.length !== ID_BYTES + TIME_BYTES + MAC_BYTES) return null
  let expiresAt = 0
  for (const byte of bytes.subarray(ID_BYTES, ID_BYTES + TIME_BYTES)) expiresAt = expiresAt * 256 + byte
  return {
    id: base64url(bytes.subarray(0, ID_BYTES)),
    expiresAt,
    mac: toHex(bytes.subarray(ID_BYTES + TIME_BYTES)),
  }
}

export interface CarriedChallengeDeps {
  /** Where the key is kept (made at its first use) and answers are spent. */
  store: Pick<SsoStore, 'signInKey' | 'spendChallenge'>
  digest: Digest
  random: RandomSource
  clock: Clock
}

/**
 * Challenges a browser carries from a ceremony's start to its answer. The key lives in the store
 * (made at first use, the same for every instance sharing the store) and is read once per process.
 */
export function createCarriedChallenges({ store, digest, random, clock }: CarriedChallengeDeps) {
  let key: Promise<string> | null = null
  /** The key, read once; a failed read (the store is down) is tried again next time. */
  const keyOf = (): Promise<string> => {
    key ??= store.signInKey(base64url(random.bytes(KEY_BYTES)), clock.now()).catch((error: unknown) => {
      key = null
      throw error
    })
    return key
  }

  const macOf = async (
    purpose: ChallengePurpose,
    id: string,
    expiresAt: number,
    bound: ChallengeBinding,
    carries: string,
  ) =>
    digest.hmacSha256(
      await keyOf(),
      JSON.stringify([
        purpose,
        id,
        expiresAt,
        bound.holder,
        addressScope(bound.address ?? 'unknown'),
        carries,
      ]),
    )

  return {
    /**
     * A new challenge for `purpose`, good for `ms`, bound to `bound` and to `carries` (what the
     * browser carries beside it, given back unchanged at the answer): `carried` is what the browser
     * gets (base64url, 75 characters).
     */
    async issue(
      purpose: ChallengePurpose,
      bound: ChallengeBinding,
      ms: number,
      carries = '',
    ): Promise<CheckedChallenge & { carried: string }> {
      const bytes = random.bytes(ID_BYTES)
      const id = base64url(bytes)
      const expiresAt = clock.now() + ms
      const carried = encode(bytes, expiresAt, await macOf(purpose, id, expiresAt, bound, carries))
      return { id, expiresAt, carried }
    },

    /**
     * The challenge `carried` when it is one this server issued for `purpose`, bound to `bound` and
     * `carries`, and its time has not ended; else null. It may have been spent: see spend.
     */
    async check(
      purpose: ChallengePurpose,
      carried: string,
      bound: ChallengeBinding,
      carries = '',
    ): Promise<CheckedChallenge | null> {
      const parts = decode(carried)
      if (parts === null || parts.expiresAt <= clock.now()) return null
      const expected = await macOf(purpose, parts.id, parts.expiresAt, bound, carries)
      return equalInConstantTime(parts.mac, expected) ? { id: parts.id, expiresAt: parts.expiresAt } : null
    },

    /** Spends a checked challenge: true the first time, for every instance on the store; false after. */
    async spend(purpose: ChallengePurpose, checked: CheckedChallenge): Promise<boolean> {
      const spent = await digest.sha256(`${purpose}\n${checked.id}`)
      return store.spendChallenge(spent, checked.expiresAt, clock.now())
    },

    /**
     * A secret of the challenge `id` for `label` (hex, 64 characters), derived with the key: what a
     * ceremony keeps from the browser and needs again at its answer (a sign-on's nonce).
     */
    async derive(label: string, id: string): Promise<string> {
      return digest.hmacSha256(await keyOf(), `derived\n${label}\n${id}`)
    },
  }
}

export type CarriedChallenges = ReturnType<typeof createCarriedChallenges>
