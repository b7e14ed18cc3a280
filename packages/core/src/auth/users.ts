/** A configured user. `passwordHash` is whatever the verifier understands (argon2id in the server). */
export interface User {
  username: string
  passwordHash: string
  permissions: string[]
}
