import type { Digest } from '../ports/index.js'
import { SSO_FINGERPRINT_PREFIX } from '../tokens/owner.js'

/**
 * How the provider's people and sessions are named in token fingerprints: keyed hashes of the
 * issuer and the provider's subject (`sso:<identity>:`) or session (`:<session>`).
 */
export function ssoIdentities(digest: Digest, issuer: string) {
  /** The provider's identity of a person: a keyed hash of the issuer and their subject. */
  const identityOf = (subject: string) => digest.hmacSha256(issuer, `sub:${subject}`)
  /** `sso:<identity>:`: the fingerprint prefix of one person's tokens, from the provider's subject. */
  const personPrefix = async (subject: string) => `${SSO_FINGERPRINT_PREFIX}${await identityOf(subject)}:`
  /** `:<session>`: the fingerprint suffix of the tokens of one provider session (its `sid`). */
  const sessionSuffix = async (sessionId: string) => `:${await digest.hmacSha256(issuer, `sid:${sessionId}`)}`
  return { identityOf, personPrefix, sessionSuffix }
}
