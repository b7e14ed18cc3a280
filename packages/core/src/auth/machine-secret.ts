// Machine secrets: what a resource server authenticates with. Not passwords: random, high entropy,
// so the settings hold only their SHA-256 and a call costs one hash, never a password verification.
import type { Digest, RandomSource } from '../ports/index.js'
import { base64url } from '../tokens/encoding.js'

/** Random bytes in a machine secret: 256 bits, 43 base64url characters. */
export const MACHINE_SECRET_BYTES = 32

/** A machine secret's digest as the settings hold it: `sha256:` and 64 lowercase hex digits. */
export const SECRET_DIGEST_FORM = /^sha256:[0-9a-f]{64}$/

/** True when `text` is a machine secret's digest (`sha256:<hex>`), not a password hash. */
export const isSecretDigest = (text: string): boolean => SECRET_DIGEST_FORM.test(text)

/** The settings' form of `secret`'s digest: `sha256:` and its SHA-256 in lowercase hex. */
export async function secretDigest(digest: Digest, secret: string): Promise<string> {
  return `sha256:${await digest.sha256(secret)}`
}

/** A new machine secret (base64url of 32 random bytes) and its digest for the settings. */
export async function createMachineSecret(
  random: RandomSource,
  digest: Digest,
): Promise<{ secret: string; digest: string }> {
  const secret = base64url(random.bytes(MACHINE_SECRET_BYTES))
  return { secret, digest: await secretDigest(digest, secret) }
}

/**
 * Whether two texts are equal, in a time that depends on their lengths only, never on where they
 * first differ. Meant for digests, whose length is no secret.
 */
export function equalInConstantTime(a: string, b: string): boolean {
  let difference = a.length ^ b.length
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i % (b.length || 1))
  return difference === 0
}
