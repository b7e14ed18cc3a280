import { type AccessRights, AT_FLOWADMIN, createAccessRights, type Place } from '../access/rights.js'
import { intersectPermissions } from '../auth/permissions.js'
import type { User } from '../auth/users.js'
import type {
  Clock,
  Digest,
  EventSink,
  RandomSource,
  SignInMethod,
  TokenRecord,
  TokenStore,
} from '../ports/index.js'
import { FLOWADMIN_AUDIENCE } from './audience.js'
import { createFingerprints } from './fingerprints.js'
import { type CreatedToken, createMint } from './mint.js'
import { isDirectoryRecord, isSsoRecord, type TokenOwner } from './owner.js'
import { createRecentUses } from './recent-uses.js'
import { createRevocation, MAX_TOKEN_LENGTH } from './revocation.js'

export interface IssuedToken {
  accessToken: string
  /** Seconds until it expires. */
  expiresIn: number
  tokenType: 'Bearer'
  scope: string[]
}

/** The live record behind a bearer and what it may do now. */
export interface Authenticated {
  record: TokenRecord
  /** The token's scope ∩ its user's permissions now. */
  permissions: string[]
}

export interface TokenDeps {
  store: TokenStore
  clock: Clock
  random: RandomSource
  digest: Digest
  events: EventSink
  /** The configured users now, by name; read on every use, so a reload takes effect at once. */
  users: ReadonlyMap<string, User>
  /** Seconds a session lives. */
  lifetime: number
  /**
   * Whether people may sign in with an identity provider: their tokens carry their rights (narrowed
   * at each sign-in); without a provider configured, such tokens are refused and deleted.
   */
  sso?: boolean | undefined
  /**
   * People of the directory, when one is configured: the re-check of a token's person when it is
   * due (the record as it is now, or null when it ended). Without it such tokens are refused and
   * deleted.
   */
  directory?: { recheck(record: TokenRecord): Promise<TokenRecord | null> } | undefined
  /**
   * Whether a client id is a configured resource server's, now: a token saved before tokens had
   * an audience is that server's when its client is one, flowadmin's otherwise. None by default.
   */
  isResourceServer?: ((clientId: string) => boolean) | undefined
  /** The roles and groups that make a token's rights at each place; none but the built-in roles by default. */
  rights?: AccessRights | undefined
}

export function createTokens({
  store,
  clock,
  random,
  digest,
  events,
  users,
  lifetime,
  sso = false,
  directory,
  isResourceServer = () => false,
  rights = createAccessRights(),
}: TokenDeps) {
  const hashOf = (token: string) => digest.sha256(token)

  /** The audience of a record; one saved before audiences existed gets its client's. */
  const audienceOf = (record: TokenRecord): string =>
    record.audience ?? (isResourceServer(record.clientId) ? record.clientId : FLOWADMIN_AUDIENCE)

  const fingerprints = createFingerprints(digest, users)
  const uses = createRecentUses(store)
  const revocation = createRevocation({ store, hashOf, events, clock })
  const mint = createMint({ store, clock, random, hashOf, fingerprintOf: fingerprints.of })

  return {
    /**
     * Issues a session for a user who just logged in from `address`; stores only its hash. The
     * login counts as its first use, so requests in the minute after it write nothing. Its
     * audience is flowadmin unless a resource server's id is given; `signIn` records how the
     * person signed in (null when the caller does not say).
     */
    async issue(
      user: TokenOwner,
      clientId: string,
      scope: string[],
      address: string,
      agent: string | null = null,
      expiresIn: number = lifetime,
      audience: string = FLOWADMIN_AUDIENCE,
      signIn: SignInMethod | null = null,
    ): Promise<IssuedToken> {
      const { token } = await mint(user, {
        kind: 'session',
        name: null,
        clientId,
        audience,
        scope,
        expiresIn,
        address,
        agent,
        signIn,
      })
      return { accessToken: token, expiresIn, tokenType: 'Bearer', scope }
    },

    /** Creates a named API token (`fa_…`) for a user; `expiresIn` in seconds, null for never. */
    create(
      user: TokenOwner,
      fields: {
        name: string
        clientId: string
        audience: string
        scope: string[]
        expiresIn: number | null
        agent: string | null
      },
    ): Promise<CreatedToken> {
      return mint(user, { kind: 'api', ...fields, address: null, signIn: null })
    },

    /**
     * The live record for a bearer token and its rights now, or null when unknown, expired,
     * revoked, for another audience than `audience` (flowadmin unless said; a list: any of them;
     * null: any), or its
     * user is gone or changed password (then the record is deleted). A use is written at most
     * once a minute per token. The record's audience is always set. Its rights are those at
     * `place`: flowadmin's own API unless said (see access/rights.ts).
     */
    async authenticate(
      token: string,
      address: string | null,
      audience: string | readonly string[] | null = FLOWADMIN_AUDIENCE,
      place: Place = AT_FLOWADMIN,
    ): Promise<Authenticated | null> {
      if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) return null
      const found = await store.findByHash(await hashOf(token))
      if (found === null) return null
      // Every request passes here: the common path awaits nothing but the lookup above.
      const now = clock.now()
      if (found.expiresAt !== null && found.expiresAt <= now) {
        await store.delete(found.id)
        return null
      }
      let record = found.audience === null ? { ...found, audience: audienceOf(found) } : found
      // A token for another audience is as unknown here: nothing is written, nothing told.
      if (
        audience !== null &&
        (typeof audience === 'string'
          ? record.audience !== audience
          : !audience.includes(record.audience ?? ''))
      )
        return null
      if (isDirectoryRecord(record)) {
        if (directory === undefined) {
          await revocation.invalidate(record, 'user_removed', address)
          return null
        }
        if (users.has(record.username)) {
          await revocation.invalidate(record, 'name_taken', address)
          return null
        }
        // Their rights are in the record, narrowed at each sign-in and re-check (see narrow).
        const current = await directory.recheck(record)
        if (current === null) return null
        record = current
        if (address !== null && uses.due(record, now)) await uses.note(record, address, now)
        return { record, permissions: [...rights.at(record.scope, place, now - record.createdAt)] }
      }
      if (isSsoRecord(record)) {
        if (!sso) {
          await revocation.invalidate(record, 'user_removed', address)
          return null
        }
        // A configured user's name is never a signed-in person's (one issued before the user was).
        if (users.has(record.username)) {
          await revocation.invalidate(record, 'name_taken', address)
          return null
        }
        // Their rights were narrowed in the record at their latest sign-in (see narrow).
        if (address !== null && uses.due(record, now)) await uses.note(record, address, now)
        return { record, permissions: [...rights.at(record.scope, place, now - record.createdAt)] }
      }
      const user = users.get(record.username)
      if (user === undefined) {
        await revocation.invalidate(record, 'user_removed', address)
        return null
      }
      const fingerprint = fingerprints.known(user) ?? (await fingerprints.of(user))
      if (fingerprint !== record.fingerprint) {
        await revocation.invalidate(record, 'credential_changed', address)
        return null
      }
      if (address !== null && uses.due(record, now)) await uses.note(record, address, now)
      const age = now - record.createdAt
      const held = rights.at(user.permissions, place, age)
      // A token with its user's own words (an empty request) has just what the user has there.
      const same =
        record.scope.length === user.permissions.length &&
        record.scope.every((word, i) => word === user.permissions[i])
      return {
        record,
        permissions: same ? [...held] : intersectPermissions(rights.at(record.scope, place, age), held),
      }
    },

    revoke: revocation.revoke,
    revokeById: revocation.revokeById,

    /** Deletes every token of a user; returns how many. */
    revokeUser(username: string): Promise<number> {
      return store.deleteByUser(username)
    },

    /** The unexpired tokens of one user, or of everyone (null), oldest first. */
    async list(username: string | null): Promise<TokenRecord[]> {
      const now = clock.now()
      return (await store.list(username)).filter(
        (record) => record.expiresAt === null || record.expiresAt > now,
      )
    },

    /** Deletes every token of every user; one entry per user that had any, with the count. */
    revokeUsers: () => revocation.revokeUsers(() => true),

    /**
     * Deletes every token of users not in `kept` (default: the users configured now); one entry
     * per such user with the count. Tokens of people signed in with the identity provider stay
     * while a provider is configured, and those of people of the directory while it is.
     */
    purgeRemovedUsers: (kept: { has(username: string): boolean } = users) =>
      revocation.revokeUsers(
        (username) => !kept.has(username),
        sso || directory !== undefined
          ? (record) => (sso && isSsoRecord(record)) || (directory !== undefined && isDirectoryRecord(record))
          : null,
      ),

    /** The record with this public id, or null (expired ones included). */
    findById: (id: string): Promise<TokenRecord | null> => store.findById(id),

    /**
     * The unexpired tokens whose fingerprint starts with `prefix` (one person of the identity
     * provider: `sso:<identity>:`), whoever's username they carry. Reads every record: sign-ins
     * and logouts are rare beside requests.
     */
    async withFingerprint(prefix: string): Promise<TokenRecord[]> {
      const now = clock.now()
      return (await store.list(null)).filter(
        (record) =>
          record.fingerprint.startsWith(prefix) && (record.expiresAt === null || record.expiresAt > now),
      )
    },

    /**
     * Narrows each record's scope to `permissions` (the words of what the person may do now; see
     * AccessRights.narrow): a record whose scope keeps nothing is deleted. Returns how many records were deleted.
     */
    async narrow(records: readonly TokenRecord[], permissions: readonly string[]): Promise<number> {
      let deleted = 0
      for (const record of records) {
        const scope = rights.narrow(record.scope, permissions)
        if (scope.length === 0) {
          if (await store.delete(record.id)) deleted++
        } else if (
          scope.length !== record.scope.length ||
          scope.some((word, i) => word !== record.scope[i])
        ) {
          await store.save({ ...record, scope })
        }
      }
      return deleted
    },

    deleteRecords: revocation.deleteRecords,

    /**
     * Deletes a signed-in person's record whose name another identity of the provider holds, and
     * records why (`token.invalidated`, reason name_taken); false when it was gone already.
     */
    endNameTaken: (record: TokenRecord) => revocation.invalidate(record, 'name_taken', null),

    /** Deletes a record whose person is gone or changed, and records why; false when it was gone already. */
    invalidate: revocation.invalidate,

    audienceOf,

    /** The roles and groups that make rights at each place. */
    rights,

    /**
     * Gives every record saved before tokens had an audience the audience of its client (a
     * configured resource server's id, or flowadmin), so that it no longer depends on the
     * settings of the day. Returns how many records changed. Run at start.
     */
    async settleAudiences(): Promise<number> {
      let settled = 0
      for (const record of await store.list(null)) {
        if (record.audience !== null) continue
        await store.save({ ...record, audience: audienceOf(record) })
        settled++
      }
      return settled
    },

    /** Deletes up to `limit` expired records; returns how many. */
    sweep(limit: number): Promise<number> {
      return store.deleteExpired(clock.now(), limit)
    },

    /** How many entries the in-process caches hold now (fingerprints, recent uses), for tests. */
    cached(): { fingerprints: number; touched: number } {
      return { fingerprints: fingerprints.size(), touched: uses.size() }
    },
  }
}

export type Tokens = ReturnType<typeof createTokens>
