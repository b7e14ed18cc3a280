import type { PasswordVerifier } from '@flowadmin/core'
import {
  type Argon2Cost,
  type Argon2Wasm,
  instantiateArgon2,
  randomBytes,
  type WasmSource,
} from './argon2-wasm.js'

/** OWASP's argon2id recommendation, which `flowadmin hash-pw` uses: 19 MiB, two passes, one lane. */
export const ARGON2ID_COST: Argon2Cost = { memoryCost: 19_456, timeCost: 2, parallelism: 1 }

export interface WasmVerifier extends PasswordVerifier {
  /** An argon2id PHC string of `password` at {@link ARGON2ID_COST}, as `flowadmin hash-pw` prints. */
  hash(password: string): string
}

/**
 * The password verifier over argon2 in WebAssembly. `wasm` is the module of `@phi-ag/argon2`
 * (`argon2.wasm`): compiled (a workerd or bundler `.wasm` import) or its bytes (see
 * `loadArgon2Wasm` from `@flowadmin/verifier-wasm/load`). It verifies every PHC string the native
 * `argon2` package makes. Its dummy hash is made at start from random bytes, so no password
 * matches it and unknown users cost one real verification.
 *
 * A verification runs on the calling thread (about as long as the native one takes on a thread
 * of its own, see the README): other requests wait meanwhile.
 */
export async function createWasmVerifier(wasm: WasmSource): Promise<WasmVerifier> {
  const argon2: Argon2Wasm = await instantiateArgon2(wasm)
  const dummyHash = argon2.hash(randomBytes(32), ARGON2ID_COST)
  return {
    dummyHash,
    async verify(hash, password) {
      try {
        return argon2.verify(hash, password)
      } catch {
        // Out of memory for an absurd cost in a malformed hash: it matches no password.
        return false
      }
    },
    hash: (password) => argon2.hash(password, ARGON2ID_COST),
  }
}
