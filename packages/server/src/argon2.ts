import { randomBytes } from 'node:crypto'
import type { PasswordVerifier } from '@flowadmin/core'
import * as argon2 from 'argon2'

/** OWASP's argon2id recommendation: 19 MiB of memory, two passes, one lane. */
export const ARGON2_OPTIONS = {
  type: argon2.argon2id,
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
} as const

/** An argon2id hash of `password` in PHC string form (`$argon2id$v=19$m=19456,t=2,p=1$...`). */
export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, ARGON2_OPTIONS)
}

/**
 * The password verifier over argon2. Its dummy hash is made at start from random bytes, so no
 * password matches it and unknown users cost one real verification.
 */
export async function createArgon2Verifier(): Promise<PasswordVerifier> {
  const dummyHash = await hashPassword(randomBytes(32).toString('base64url'))
  return {
    dummyHash,
    async verify(hash, password) {
      try {
        return await argon2.verify(hash, password)
      } catch {
        // A malformed or unsupported hash matches no password.
        return false
      }
    },
  }
}
