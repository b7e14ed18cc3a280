import type { User } from '../auth/users.js'
import type { TokenRecord } from '../ports/index.js'

/**
 * The fingerprint of every token of a person the identity provider vouched for starts with this:
 * `sso:<identity>:<session>`, keyed hashes of the provider's subject and session. A password
 * user's fingerprint is hex, so the two never meet.
 */
export const SSO_FINGERPRINT_PREFIX = 'sso:'

/** A person the identity provider vouched for, as their tokens need them. */
export interface SsoUser {
  username: string
  /** Their permissions as derived from the provider's claims at their latest sign-in. */
  permissions: string[]
  /** `sso:<identity>:<session>` (see SSO_FINGERPRINT_PREFIX). */
  fingerprint: string
}

/** Whom a token is for: a configured user, or a person signed in with the identity provider. */
export type TokenOwner = User | SsoUser

/** True for a token of a person signed in with the identity provider. */
export const isSsoRecord = (record: TokenRecord): boolean =>
  record.fingerprint.startsWith(SSO_FINGERPRINT_PREFIX)
