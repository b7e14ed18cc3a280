import { err, ok, type Result } from '../errors.js'
import type { Clock, Digest, EventSink, IdentityProvider, SsoStore, TokenRecord } from '../ports/index.js'
import { SSO_FINGERPRINT_PREFIX } from '../tokens/owner.js'
import type { Tokens } from '../tokens/tokens.js'
import { ssoIdentities } from './sso-identity.js'
import type { SsoRefusal } from './sso-refusal.js'

export interface SsoLogoutDeps {
  provider: IdentityProvider
  tokens: Tokens
  store: SsoStore
  /** Whether a name is a configured user's (settings `adminAuth.users`). */
  isConfiguredUser: (username: string) => boolean
  digest: Digest
  clock: Clock
  events: EventSink
  /** The provider's label, for the audit. */
  label: string
}

/** The tokens of the provider's people that end without a request of theirs. */
export function createSsoLogout({
  provider,
  tokens,
  store,
  isConfiguredUser,
  digest,
  clock,
  events,
  label,
}: SsoLogoutDeps) {
  const { personPrefix, sessionSuffix } = ssoIdentities(digest, provider.issuer)
  return {
    /**
     * Binds the names of tokens saved before names were bound to identities, as prior claims: the
     * live tokens of signed-in people, oldest first, each claims its name for the identity in its
     * fingerprint. A token whose name is (or just got) bound to another identity ends, audited
     * (name_taken). Run at start, before requests: every instance on a store may run it at once
     * (a claim is atomic and the first stays), and a second run changes nothing. Returns how many
     * tokens ended.
     */
    async bindNamesOfTokens(): Promise<number> {
      const records = (await tokens.withFingerprint(SSO_FINGERPRINT_PREFIX)).sort(
        (a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
      )
      const owners = new Map<string, string>()
      let ended = 0
      for (const record of records) {
        // A configured user's name is no signed-in person's: such a token ends at its first use.
        if (isConfiguredUser(record.username)) continue
        const rest = record.fingerprint.slice(SSO_FINGERPRINT_PREFIX.length)
        const identity = rest.slice(0, rest.indexOf(':'))
        if (identity === '') continue
        let owner = owners.get(record.username)
        if (owner === undefined) {
          owner = await store.claimName(record.username, identity, clock.now())
          owners.set(record.username, owner)
        }
        if (owner !== identity && (await tokens.endNameTaken(record))) ended++
      }
      return ended
    },

    /**
     * OpenID Connect Back-Channel Logout: the provider ended a person's session. With a session id
     * (`sid`), the tokens of that session end (of that person, when it names one too); with a
     * subject alone, every token of that person. Each logout token is taken once: its `jti` is
     * remembered in the store until the token would be refused anyway. Returns how many ended.
     */
    async logout(logoutToken: string, address: string | null): Promise<Result<number, SsoRefusal>> {
      const verified = await provider.verifyLogoutToken(logoutToken)
      if (!verified.ok) return err({ reason: verified.error.kind, message: verified.error.message })
      const { subject, sessionId, tokenId, expiresAt } = verified.value
      const key = await digest.hmacSha256(provider.issuer, `jti:${tokenId}`)
      if (!(await store.rememberLogout(key, expiresAt, clock.now())))
        return err({
          reason: 'invalid',
          message: 'This logout token was received before (same jti): refused.',
        })
      // Taken, but carried out only once its tokens are gone: should that fail, the key is
      // forgotten, so the provider's retry is no replay and ends them.
      let records: TokenRecord[]
      let count: number
      try {
        records = await tokens.withFingerprint(
          subject === null ? SSO_FINGERPRINT_PREFIX : await personPrefix(subject),
        )
        if (sessionId !== null) {
          const session = await sessionSuffix(sessionId)
          records = records.filter((record) => record.fingerprint.endsWith(session))
        }
        count = await tokens.deleteRecords(records)
      } catch (error) {
        await store.forgetLogout(key).catch(() => {})
        throw error
      }
      events.emit({
        type: 'sso.logout',
        at: clock.now(),
        provider: label,
        owner: records[0]?.username ?? null,
        count,
        username: null,
        clientId: null,
        address,
      })
      return ok(count)
    },
  }
}
