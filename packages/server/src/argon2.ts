import { randomBytes } from 'node:crypto'
import { availableParallelism } from 'node:os'
import type { PasswordVerifier } from '@flowadmin/core'
import { ARGON2ID_COST } from '@flowadmin/verifier-wasm'
import * as argon2 from 'argon2'
import { createLimit } from './limit.js'

/** OWASP's argon2id recommendation: 19 MiB of memory, two passes, one lane (shared with the
 *  WebAssembly verifier, so its dummy hash costs what users' hashes cost). */
export const ARGON2_OPTIONS = { type: argon2.argon2id, ...ARGON2ID_COST } as const

/** An argon2id hash of `password` in PHC string form (`$argon2id$v=19$m=19456,t=2,p=1$...`). */
export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, ARGON2_OPTIONS)
}

export interface Argon2VerifierOptions {
  /**
   * Verifications run at once; more wait their turn. Default: the number of cores. Each takes
   * 19 MiB while it runs, so this also bounds the memory that a storm of logins costs.
   */
  concurrency?: number
}

/**
 * The password verifier over argon2. Its dummy hash is made at start from random bytes, so no
 * password matches it and unknown users cost one real verification. Hashing runs on libuv's
 * thread pool, off the event loop. Creating one changes nothing process-wide: the `flowadmin`
 * command lowers the priority of those threads itself (process-tuning.ts).
 */
export async function createArgon2Verifier(options: Argon2VerifierOptions = {}): Promise<PasswordVerifier> {
  const dummyHash = await hashPassword(randomBytes(32).toString('base64url'))
  const limit = createLimit(options.concurrency ?? availableParallelism())
  return {
    dummyHash,
    verify(hash, password) {
      return limit(async () => {
        try {
          return await argon2.verify(hash, password)
        } catch {
          // A malformed or unsupported hash matches no password.
          return false
        }
      })
    },
  }
}
