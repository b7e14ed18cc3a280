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
 * What verifying a hash costs, as a key: its algorithm and parameters (`argon2id m=19456,p=1,t=2`,
 * `bcrypt 08`), or null for a hash that is neither.
 */
export function costOf(hash: string): string | null {
  const bcrypt = /^\$2[aby]\$(\d\d)\$/.exec(hash)
  if (bcrypt !== null) return `bcrypt ${bcrypt[1]}`
  const argon = /^\$(argon2(?:id|i|d))\$v=\d+\$([^$]+)\$/.exec(hash)
  return argon === null ? null : `${argon[1]} ${(argon[2] as string).split(',').sort().join(',')}`
}

/** Random bytes as bcrypt's own base64 (`./A-Za-z0-9`), for a password nobody knows. */
const randomPassword = () => randomBytes(32).toString('base64')

/**
 * A hash of the same cost as `hash` that no password matches: random salt and hash bytes under the
 * same argon2 parameters, or a bcrypt hash of a random password at the same cost (made once).
 */
async function dummyLike(hash: string): Promise<string> {
  if (isBcrypt(hash)) {
    const cost = Number(hash.slice(4, 6))
    return (await loadBcrypt()).hash(randomPassword(), { cost })
  }
  const [, type, version, parameters] = hash.split('$')
  return `$${type}$${version}$${parameters}$${phcBase64(randomBytes(16))}$${phcBase64(randomBytes(32))}`
}

/**
 * The password verifier over argon2 (and the bcrypt hashes of Node-RED settings). Its dummy hash is
 * random, fresh for each verifier, so no password matches it and unknown users cost one real
 * verification. Hashing runs on libuv's thread pool, off the event loop. Creating one changes
 * nothing process-wide: the `flowadmin` command lowers the priority of those threads itself
 * (process-tuning.ts).
 *
 * Users whose hashes cost different times (argon2 users beside bcrypt users from Node-RED, whose
 * check takes about half as long) would let the time of a failure tell an existing user from an
 * unknown one. So once the users' hashes are known (`useHashes`) and they are of more than one cost,
 * or of a cost other than the dummy's, every verification costs one of each: the hash itself plus a
 * dummy of every other cost, and the dummy hash one dummy of each.
 */
export async function createArgon2Verifier(): Promise<PasswordVerifier> {
  const dummyHash = randomDummyHash()
  /** A dummy of each cost among the users' hashes, by cost; made at most once per cost. */
  let dummies = new Map<string, Promise<string | null>>()
  let previous = dummies

  const verifyOne = async (hash: string, password: string): Promise<boolean> => {
    try {
      // Both hash on libuv's thread pool, off the event loop.
      if (isBcrypt(hash)) return await (await loadBcrypt()).verify(password, hash)
      return await (await loadArgon2()).verify(hash, password)
    } catch {
      // A malformed or unsupported hash matches no password.
      return false
    }
  }

  return {
    dummyHash,
    useHashes(hashes) {
      const next = new Map<string, Promise<string | null>>()
      for (const hash of hashes) {
        const cost = costOf(hash)
        if (cost === null || next.has(cost)) continue
        // A dummy made for the users before is kept: a bcrypt one cost a hash to make.
        next.set(cost, previous.get(cost) ?? dummyLike(hash).catch(() => null))
      }
      // The dummy hash alone, as before, when every user's hash costs what it costs.
      const own = costOf(dummyHash) as string
      dummies = next.size === 1 && next.has(own) ? new Map() : next
      previous = next
    },
    async verify(hash, password) {
      const kinds = [...dummies.entries()]
      if (kinds.length === 0) return verifyOne(hash, password)
      const cost = hash === dummyHash ? null : costOf(hash)
      const matched = cost === null ? false : await verifyOne(hash, password)
      for (const [kind, dummy] of kinds) {
        if (kind === cost) continue
        const made = await dummy
        if (made !== null) await verifyOne(made, password)
      }
      return matched
    },
  }
}
