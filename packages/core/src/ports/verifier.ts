// Password verification: argon2id in the server, WebAssembly elsewhere, a fake in tests.

export interface PasswordVerifier {
  /** True when `password` matches `hash`. Never throws for a wrong password or a malformed hash. */
  verify(hash: string, password: string): Promise<boolean>
  /**
   * A hash of a random secret, verified for unknown users so that they cost the same time as
   * known ones.
   */
  readonly dummyHash: string
  /**
   * Optional: the configured users' password hashes, given at start and at every change of the
   * users. A verifier whose kinds of hash cost different times (argon2, bcrypt of some cost) uses
   * them to make every verification, the dummy hash's too, cost alike, so that the time of a
   * failure never tells whether the user exists.
   */
  useHashes?(hashes: readonly string[]): void
}
