import { randomBytes } from 'node:crypto'
import { availableParallelism } from 'node:os'
import type { PasswordVerifier } from '@flowadmin/core'
import { ARGON2ID_COST } from '@flowadmin/verifier-wasm'

/** The argon2 package's number for argon2id (`argon2.argon2id`). */
const ARGON2ID = 2

/** OWASP's argon2id recommendation: 19 MiB of memory, two passes, one lane (shared with the
 *  WebAssembly verifier, so its dummy hash costs what users' hashes cost). */
export const ARGON2_OPTIONS = { type: ARGON2ID, ...ARGON2ID_COST } as const

/**
 * The argon2 package, loaded at the first hash or verification: a server that nobody logs in to
 * never needs it, and its start does not wait for it.
 */
let argon2: Promise<typeof import('argon2')> | undefined
const loadArgon2 = () => {
  argon2 ??= import('argon2')
  return argon2
}

let bcrypt: Promise<typeof import('@node-rs/bcrypt')> | undefined
/** Loaded at the first bcrypt hash only: most servers never see one. */
const loadBcrypt = () => {
  bcrypt ??= import('@node-rs/bcrypt')
  return bcrypt
}

/** Node-RED's settings.js holds bcrypt hashes (`$2a$`, `$2b$`, `$2y$`): verified, never made. */
const isBcrypt = (hash: string) => /^\$2[aby]\$/.test(hash)

/** An argon2id hash of `password` in PHC string form (`$argon2id$v=19$m=19456,p=1,t=2$...`). */
export async function hashPassword(password: string): Promise<string> {
  return (await loadArgon2()).hash(password, ARGON2_OPTIONS)
}

/** Unpadded base64, as PHC strings write their salt and hash. */
const phcBase64 = (bytes: Buffer) => bytes.toString('base64').replace(/=+$/, '')

/**
 * A PHC string of the OWASP parameters whose salt and hash are random bytes (16 and 32, as
 * `hashPassword` makes them). Verifying a password against it hashes that password at the full
 * cost, like any user's hash, and no password matches it: finding one would mean inverting
 * argon2id. It needs no hashing to make, so the server does not spend one at start.
 */
function randomDummyHash(): string {
  const { memoryCost, parallelism, timeCost } = ARGON2ID_COST
  return `$argon2id$v=19$m=${memoryCost},p=${parallelism},t=${timeCost}$${phcBase64(randomBytes(16))}$${phcBase64(randomBytes(32))}`
}

/**
 * Verifications at once in the server: one fewer than the cores, at least one (the login queue's
 * concurrency, `adminAuth.loginQueue.concurrency`). The core left over is the event loop's, so a
 * storm of logins slows logins, not every other request.
 */
export const DEFAULT_VERIFY_CONCURRENCY = Math.max(1, availableParallelism() - 1)

/**
 * The password verifier over argon2. Its dummy hash is random, fresh for each verifier, so no
 * password matches it and unknown users cost one real verification. Hashing runs on libuv's
 * thread pool, off the event loop. Creating one changes nothing process-wide: the `flowadmin`
 * command lowers the priority of those threads itself (process-tuning.ts).
 */
export async function createArgon2Verifier(): Promise<PasswordVerifier> {
  return {
    dummyHash: randomDummyHash(),
    async verify(hash, password) {
      try {
        // Both hash on libuv's thread pool, off the event loop.
        if (isBcrypt(hash)) return await (await loadBcrypt()).verify(password, hash)
        return await (await loadArgon2()).verify(hash, password)
      } catch {
        // A malformed or unsupported hash matches no password.
        return false
      }
    },
  }
}
