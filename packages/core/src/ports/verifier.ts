// Password verification: argon2id in the server, WebAssembly elsewhere, a fake in tests.

export interface PasswordVerifier {
  /** True when `password` matches `hash`. Never throws for a wrong password or a malformed hash. */
  verify(hash: string, password: string): Promise<boolean>
  /**
   * A hash of a random secret, verified for unknown users so that they cost the same time as
   * known ones.
   */
  readonly dummyHash: string
}
