import { hasPermission } from '../auth/permissions.js'
import type { Clock, Digest, RandomSource, TokenRecord, TokenStore } from '../ports.js'
import { base64url } from './encoding.js'

/** 32 bytes = 256 bits of entropy; 43 base64url characters. */
export const TOKEN_BYTES = 32
/** Longer bearer values are not tokens of ours: refused without hashing. */
const MAX_TOKEN_LENGTH = 512

export interface IssuedToken {
  accessToken: string
  /** Seconds until it expires. */
  expiresIn: number
  tokenType: 'Bearer'
  scope: string[]
}

export interface TokenDeps {
  store: TokenStore
  clock: Clock
  random: RandomSource
  digest: Digest
  /** Seconds a token lives. */
  lifetime: number
}

export type RevokeOutcome = { revoked: true; owner: string } | { revoked: false }

export function createTokens({ store, clock, random, digest, lifetime }: TokenDeps) {
  const hashOf = (token: string) => digest.sha256(token)

  return {
    /** Issues a new token and stores only its hash. */
    async issue(username: string, clientId: string, scope: string[]): Promise<IssuedToken> {
      const accessToken = base64url(random.bytes(TOKEN_BYTES))
      const now = clock.now()
      await store.save({
        hash: await hashOf(accessToken),
        username,
        clientId,
        scope,
        createdAt: now,
        expiresAt: now + lifetime * 1000,
      })
      return { accessToken, expiresIn: lifetime, tokenType: 'Bearer', scope }
    },

    /** The live record for a bearer token, or null when unknown, expired or revoked. Removes it when expired. */
    async authenticate(token: string): Promise<TokenRecord | null> {
      if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) return null
      const hash = await hashOf(token)
      const record = await store.findByHash(hash)
      if (record === null) return null
      if (record.expiresAt <= clock.now()) {
        await store.delete(hash)
        return null
      }
      return record
    },

    /**
     * Revokes `token` when the caller owns it (same user) or holds `*`. Anything else, an unknown
     * token included, is a silent no-op, so the answer reveals nothing about other tokens.
     */
    async revoke(
      token: string,
      caller: { username: string | null; permissions: readonly string[] },
    ): Promise<RevokeOutcome> {
      if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) return { revoked: false }
      const hash = await hashOf(token)
      const record = await store.findByHash(hash)
      if (record === null) return { revoked: false }
      const mayRevoke = record.username === caller.username || hasPermission(caller.permissions, '*')
      if (!mayRevoke) return { revoked: false }
      return (await store.delete(hash)) ? { revoked: true, owner: record.username } : { revoked: false }
    },

    /** Deletes up to `limit` expired records; returns how many. */
    sweep(limit: number): Promise<number> {
      return store.deleteExpired(clock.now(), limit)
    },
  }
}

export type Tokens = ReturnType<typeof createTokens>
