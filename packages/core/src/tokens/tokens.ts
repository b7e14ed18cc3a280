import { hasPermission, intersectPermissions } from '../auth/permissions.js'
import type { User } from '../auth/users.js'
import type {
  Clock,
  Digest,
  EventSink,
  RandomSource,
  SignInMethod,
  TokenKind,
  TokenRecord,
  TokenStore,
} from '../ports/index.js'
import { FLOWADMIN_AUDIENCE } from './audience.js'
import { base64url } from './encoding.js'

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
/** Longer bearer values are not tokens of ours: refused without hashing. */
const MAX_TOKEN_LENGTH = 512
/** A token's last use is written at most this often (ms), so reads stay free of writes. */
export const LAST_USE_RESOLUTION_MS = 60_000
/** Most token uses this process remembers having written (see noteUse). */
const MAX_TOUCHED = 10_000
/** What the credential fingerprint is a keyed hash of: fixed, so only the key (the password hash) varies. */
const FINGERPRINT_LABEL = 'flowadmin token credential v1'

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

export interface IssuedToken {
  accessToken: string
  /** Seconds until it expires. */
  expiresIn: number
  tokenType: 'Bearer'
  scope: string[]
}

/** A token just created: the record as stored and the token itself, shown this once. */
export interface CreatedToken {
  token: string
  record: TokenRecord
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
   * Whether a client id is a configured resource server's, now: a token saved before tokens had
   * an audience is that server's when its client is one, flowadmin's otherwise. None by default.
   */
  isResourceServer?: ((clientId: string) => boolean) | undefined
}

/** How many tokens of one user ended. */
export interface UserCount {
  username: string
  count: number
}

export type RevokeOutcome = { revoked: true; record: TokenRecord } | { revoked: false }

/** Who asks to see or end tokens. */
export interface TokenCaller {
  username: string | null
  permissions: readonly string[]
  /**
   * The token the caller uses, when its audience is not flowadmin (a resource server's token):
   * such a caller may end that token and nothing else.
   */
  onlyToken?: string | undefined
}

const mayManage = (record: TokenRecord, caller: TokenCaller) =>
  caller.onlyToken !== undefined
    ? record.id === caller.onlyToken
    : record.username === caller.username || hasPermission(caller.permissions, '*')

export function createTokens({
  store,
  clock,
  random,
  digest,
  events,
  users,
  lifetime,
  sso = false,
  isResourceServer = () => false,
}: TokenDeps) {
  const hashOf = (token: string) => digest.sha256(token)

  /** The audience of a record; one saved before audiences existed gets its client's. */
  const audienceOf = (record: TokenRecord): string =>
    record.audience ?? (isResourceServer(record.clientId) ? record.clientId : FLOWADMIN_AUDIENCE)

  // Fingerprints by password hash: one keyed hash per credential, not one per request, and
  // known ones answered without waiting. Only the configured users' are kept (see pruneFingerprints).
  const fingerprints = new Map<string, string>()
  async function fingerprintOf(user: User): Promise<string> {
    const known = fingerprints.get(user.passwordHash)
    if (known !== undefined) return known
    const fingerprint = await digest.hmacSha256(user.passwordHash, FINGERPRINT_LABEL)
    fingerprints.set(user.passwordHash, fingerprint)
    pruneFingerprints()
    return fingerprint
  }
  /**
   * Forgets the fingerprints of passwords no configured user has any more, once there are more
   * fingerprints than users: a reload that changes passwords or removes users leaves the map no
   * larger than the users configured, however many reloads there were.
   */
  function pruneFingerprints(): void {
    if (fingerprints.size <= users.size) return
    const current = new Set<string>()
    for (const user of users.values()) current.add(user.passwordHash)
    for (const hash of fingerprints.keys()) if (!current.has(hash)) fingerprints.delete(hash)
  }

  // When this process last wrote a token's use, so racing requests write it once, not each. Only
  // the moments around a write matter: once it is written the record says so itself, and a use
  // read after that writes nothing. So forgetting the oldest entries costs at most a repeated
  // write for a request that read its record before that write landed, never a write per request.
  // Two generations bound it: when the newer is full it becomes the older, and the older is
  // dropped whole (O(1), the uses written longest ago).
  let touched = new Map<string, number>()
  let touchedBefore = new Map<string, number>()
  /** True when this use should be written: the last one written is a minute old or more. */
  function dueForTouch(record: TokenRecord, now: number): boolean {
    if (record.lastUsedAt !== null && now - record.lastUsedAt < LAST_USE_RESOLUTION_MS) return false
    const last = touched.get(record.id) ?? touchedBefore.get(record.id)
    return last === undefined || now - last >= LAST_USE_RESOLUTION_MS
  }
  async function noteUse(record: TokenRecord, address: string, now: number): Promise<void> {
    if (touched.size >= MAX_TOUCHED / 2) {
      touchedBefore = touched
      touched = new Map()
    }
    touched.set(record.id, now)
    await store.touch(record.id, now, address)
  }

  async function save(
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

  /**
   * Deletes every token of the users `which` selects; one entry per user that had any. With
   * `keepSso`, tokens of people signed in with the identity provider stay: they are not in the
   * settings' users, and their provider, not the settings, says what they are worth.
   */
  async function revokeUsers(which: (username: string) => boolean, keepSso = false): Promise<UserCount[]> {
    const ended: UserCount[] = []
    for (const username of await store.usernames()) {
      if (!which(username)) continue
      const count = keepSso ? await deleteAllBut(username, isSsoRecord) : await store.deleteByUser(username)
      if (count > 0) ended.push({ username, count })
    }
    return ended
  }

  /** Deletes the tokens of a user that `kept` does not select; how many. */
  async function deleteAllBut(username: string, kept: (record: TokenRecord) => boolean): Promise<number> {
    const records = await store.list(username)
    const doomed = records.filter((record) => !kept(record))
    if (doomed.length === records.length) return store.deleteByUser(username)
    return deleteRecords(doomed)
  }

  /** Deletes these records; how many were there. */
  async function deleteRecords(records: readonly TokenRecord[]): Promise<number> {
    let count = 0
    for (const record of records) if (await store.delete(record.id)) count++
    return count
  }

  /**
   * Deletes a record whose user is gone or whose credential changed, and records why; false when
   * it was gone already.
   */
  async function invalidate(
    record: TokenRecord,
    reason: 'user_removed' | 'credential_changed' | 'name_taken',
    address: string | null,
  ): Promise<boolean> {
    if (!(await store.delete(record.id))) return false
    events.emit({
      type: 'token.invalidated',
      at: clock.now(),
      id: record.id,
      owner: record.username,
      reason,
      username: record.username,
      clientId: record.clientId,
      address,
    })
    return true
  }

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
      const { token } = await save(user, {
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
      return save(user, { kind: 'api', ...fields, address: null, signIn: null })
    },

    /**
     * The live record for a bearer token and its rights now, or null when unknown, expired,
     * revoked, for another audience than `audience` (flowadmin unless said; null: any), or its
     * user is gone or changed password (then the record is deleted). A use is written at most
     * once a minute per token. The record's audience is always set.
     */
    async authenticate(
      token: string,
      address: string | null,
      audience: string | null = FLOWADMIN_AUDIENCE,
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
      const record = found.audience === null ? { ...found, audience: audienceOf(found) } : found
      // A token for another audience is as unknown here: nothing is written, nothing told.
      if (audience !== null && record.audience !== audience) return null
      if (isSsoRecord(record)) {
        if (!sso) {
          await invalidate(record, 'user_removed', address)
          return null
        }
        // A configured user's name is never a signed-in person's (one issued before the user was).
        if (users.has(record.username)) {
          await invalidate(record, 'name_taken', address)
          return null
        }
        // Their rights were narrowed in the record at their latest sign-in (see narrow).
        if (address !== null && dueForTouch(record, now)) await noteUse(record, address, now)
        return { record, permissions: [...record.scope] }
      }
      const user = users.get(record.username)
      if (user === undefined) {
        await invalidate(record, 'user_removed', address)
        return null
      }
      if (fingerprints.size > users.size) pruneFingerprints()
      const fingerprint = fingerprints.get(user.passwordHash) ?? (await fingerprintOf(user))
      if (fingerprint !== record.fingerprint) {
        await invalidate(record, 'credential_changed', address)
        return null
      }
      if (address !== null && dueForTouch(record, now)) await noteUse(record, address, now)
      return { record, permissions: intersectPermissions(record.scope, user.permissions) }
    },

    /**
     * Revokes `token` when the caller owns it (same user) or holds `*`. Anything else, an unknown
     * token included, is a silent no-op, so the answer reveals nothing about other tokens.
     */
    async revoke(token: string, caller: TokenCaller): Promise<RevokeOutcome> {
      if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) return { revoked: false }
      const record = await store.findByHash(await hashOf(token))
      if (record === null || !mayManage(record, caller)) return { revoked: false }
      return (await store.delete(record.id)) ? { revoked: true, record } : { revoked: false }
    },

    /** Revokes the token with this id when the caller may; another's is as unknown (no-op). */
    async revokeById(id: string, caller: TokenCaller): Promise<RevokeOutcome> {
      const record = await store.findById(id)
      if (record === null || !mayManage(record, caller)) return { revoked: false }
      return (await store.delete(record.id)) ? { revoked: true, record } : { revoked: false }
    },

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
    revokeUsers: () => revokeUsers(() => true),

    /**
     * Deletes every token of users not in `kept` (default: the users configured now); one entry
     * per such user with the count. Tokens of people signed in with the identity provider stay
     * while a provider is configured.
     */
    purgeRemovedUsers: (kept: { has(username: string): boolean } = users) =>
      revokeUsers((username) => !kept.has(username), sso),

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
     * Narrows each record's scope to `permissions` (what the person may do now): a record whose
     * scope keeps nothing is deleted. Returns how many records were deleted.
     */
    async narrow(records: readonly TokenRecord[], permissions: readonly string[]): Promise<number> {
      let deleted = 0
      for (const record of records) {
        const scope = intersectPermissions(record.scope, permissions)
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

    deleteRecords,

    /**
     * Deletes a signed-in person's record whose name another identity of the provider holds, and
     * records why (`token.invalidated`, reason name_taken); false when it was gone already.
     */
    endNameTaken: (record: TokenRecord) => invalidate(record, 'name_taken', null),

    audienceOf,

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
      return { fingerprints: fingerprints.size, touched: touched.size + touchedBefore.size }
    },
  }
}

export type Tokens = ReturnType<typeof createTokens>
