// What the core asks of its platform: time, randomness, hashing, and a place to report measurements.

/** Measurements the core reports as they happen; each call must be cheap and must not throw. */
export interface CoreObserver {
  /** A login waited this many milliseconds in the verifier queue before its verification began. */
  verifierWait?(milliseconds: number): void
  /** A resource server asked about a token, and how that ended. */
  introspection?(outcome: IntrospectionOutcome): void
  /** The directory was asked (a password, or a person's re-check), how that ended, and in how many milliseconds. */
  directory?(outcome: DirectoryOutcome, milliseconds: number): void
}

/**
 * How asking the directory ended: the person found (and their password right), refused (no such
 * person, a wrong password, a disabled account), or no answer (unreachable, or past the bound).
 */
export type DirectoryOutcome = 'verified' | 'refused' | 'unavailable'

/** How an introspection ended: the token's state, or why the resource server was refused. */
export type IntrospectionOutcome = 'active' | 'inactive' | 'invalid_client' | 'throttled' | 'shed'

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number
}

export interface RandomSource {
  /** `length` bytes; in production from a CSPRNG. */
  bytes(length: number): Uint8Array
}

export interface Digest {
  /** SHA-256 of the UTF-8 text, as lowercase hex. */
  sha256(text: string): Promise<string>
  /** HMAC-SHA-256 of the UTF-8 text under the UTF-8 key, as lowercase hex. */
  hmacSha256(key: string, text: string): Promise<string>
}
