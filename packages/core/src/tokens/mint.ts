import type { User } from '../auth/users.js'
import type { Clock, RandomSource, SignInMethod, TokenKind, TokenRecord, TokenStore } from '../ports/index.js'
import { base64url } from './encoding.js'
import type { TokenOwner } from './owner.js'

/** 32 bytes = 256 bits of entropy; 43 base64url characters. */
export const TOKEN_BYTES = 32
/** 12 bytes: 16 base64url characters, unique enough to name a record, and no secret. */
const ID_BYTES = 12

/**
 * A new record id. A leading `-` becomes `_`, so a command line (`flowadmin tokens revoke ID`)
 * takes the id for an argument, never for an option.
 */
const newId = (random: RandomSource): string => {
  const id = base64url(random.bytes(ID_BYTES))
  return id.startsWith('-') ? `_${id.slice(1)}` : id
}
/** Every API token starts with this, so secret scanners can find a leaked one. */
export const API_TOKEN_PREFIX = 'fa_'

/** A token just created: the record as stored and the token itself, shown this once. */
export interface CreatedToken {
  token: string
  record: TokenRecord
}

export interface MintDeps {
  store: TokenStore
  clock: Clock
  random: RandomSource
  /** The SHA-256 of a token: all the store keeps of it. */
  hashOf: (token: string) => Promise<string>
  /** The credential fingerprint of a configured user (see createFingerprints). */
  fingerprintOf: (user: User) => Promise<string>
}

/** Makes a new token of either kind: its secret, its public id, and its record, saved. */
export function createMint({ store, clock, random, hashOf, fingerprintOf }: MintDeps) {
  return async function mint(
    user: TokenOwner,
    fields: {
      kind: TokenKind
      name: string | null
      clientId: string
      audience: string
      scope: string[]
      expiresIn: number | null
      /** Where a login came from: that is the session's first use. Null for an API token. */
      address: string | null
      agent: string | null
      /** How the person signed in; null for an API token. */
      signIn: SignInMethod | null
    },
  ): Promise<CreatedToken> {
    const secret = base64url(random.bytes(TOKEN_BYTES))
    const token = fields.kind === 'api' ? `${API_TOKEN_PREFIX}${secret}` : secret
    const now = clock.now()
    const record: TokenRecord = {
      hash: await hashOf(token),
      id: newId(random),
      kind: fields.kind,
      name: fields.name,
      username: user.username,
      clientId: fields.clientId,
      audience: fields.audience,
      scope: fields.scope,
      fingerprint: 'fingerprint' in user ? user.fingerprint : await fingerprintOf(user),
      createdAt: now,
      expiresAt: fields.expiresIn === null ? null : now + fields.expiresIn * 1000,
      lastUsedAt: fields.address === null ? null : now,
      lastAddress: fields.address,
      agent: fields.agent,
      signIn: fields.signIn,
    }
    await store.save(record)
    return { token, record }
  }
}
