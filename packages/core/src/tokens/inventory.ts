import { hasPermission } from '../auth/permissions.js'
import { grantScope, parsePermissionScope } from '../auth/scope.js'
import type { User } from '../auth/users.js'
import { type DomainError, err, invalid, ok, type Result } from '../errors.js'
import type { Actor, Clock, EventSink, SignInMethod, TokenKind, TokenRecord } from '../ports/index.js'
import { type ApiTokenOptions, lifetimeOf, withinSession } from './api-token-lifetime.js'
import { FLOWADMIN_AUDIENCE } from './audience.js'
import { isDirectoryRecord, isSsoRecord, providerOf, type SsoUser, type TokenOwner } from './owner.js'
import type { Tokens } from './tokens.js'

/** Longest name of an API token, in characters. */
export const MAX_TOKEN_NAME = 100

/** A token as an inventory shows it: never the token or its hash. */
export interface TokenView {
  id: string
  user: string
  kind: TokenKind
  name: string | null
  clientId: string
  /** Whom it is for: `flowadmin`, or the id of the one resource server that may use it. */
  audience: string
  scope: string[]
  createdAt: number
  expiresAt: number | null
  lastUsedAt: number | null
  lastAddress: string | null
  /** The browser or tool that asked for it, described in a few words; null when unknown. */
  agent: string | null
  /** True for the token the caller is using. */
  current: boolean
  /**
   * The identity provider or the directory its owner signed in with (its label); null for a token
   * of one of the settings' users.
   */
  provider: string | null
  /** How the person signed in for this session; null for an API token or an older session. */
  signIn: SignInMethod | null
}

/** Whoever asks, as the inventory needs them: the caller's token id when they use one. */
export interface InventoryCaller {
  username: string | null
  tokenId: string | null
  /** The caller's rights now, at flowadmin. */
  permissions: readonly string[]
  /** The words of the caller's token's scope (see Principal.scope); null without a token. */
  scope: readonly string[] | null
  actor: Actor
}

export interface CreateTokenRequest {
  name: string
  /** Space-separated scope words; absent or empty: the owner's rights. */
  scope?: string | undefined
  /** Seconds; absent: the default; null: never expires (when allowed). */
  expiresIn?: number | null | undefined
  /** Whose token it is; absent: the caller's. Another user's needs `*`. */
  user?: string | undefined
  /** Recorded as the token's client; default `api`. */
  clientId?: string | undefined
  /** `flowadmin` (its API; the default) or a configured resource server's id. */
  audience?: string | undefined
  /** The browser or tool asking, described in a few words (see TokenRecord.agent). */
  agent?: string | null | undefined
}

export interface CreatedApiToken {
  token: string
  view: TokenView
}

export type InventoryError = Extract<
  DomainError,
  { code: 'invalid_request' | 'invalid_scope' | 'forbidden' | 'token_not_found' }
>

export interface InventoryDeps {
  tokens: Tokens
  users: ReadonlyMap<string, User>
  events: EventSink
  clock: Clock
  options: ApiTokenOptions
  /**
   * The identity provider people sign in with, when one is configured: its label, and whether
   * their API tokens may outlive the session they were created in.
   */
  sso?: { label: string; apiTokensOutliveSessions: boolean } | null | undefined
  /** The directory people sign in with, when one is configured: its label. */
  directory?: { label: string } | null | undefined
  /** Whether an id is a configured resource server's now (an audience an API token may name). */
  isResourceServer?: ((id: string) => boolean) | undefined
}

/** The session inventory and named API tokens: who may see, end and create which tokens. */
export function createTokenInventory({
  tokens,
  users,
  events,
  clock,
  options,
  sso = null,
  directory = null,
  isResourceServer = () => false,
}: InventoryDeps) {
  const labels = { sso: sso?.label ?? null, directory: directory?.label ?? null }
  /** A token of a person vouched for by a source configured now: the identity provider or the directory. */
  const isVouched = (record: TokenRecord) =>
    (sso !== null && isSsoRecord(record)) || (directory !== null && isDirectoryRecord(record))
  const mayAct = (caller: InventoryCaller, owner: string) =>
    caller.username === owner || hasPermission(caller.permissions, '*')

  const view = (record: TokenRecord, caller: InventoryCaller | null): TokenView => ({
    id: record.id,
    user: record.username,
    kind: record.kind,
    name: record.name,
    clientId: record.clientId,
    audience: tokens.audienceOf(record),
    scope: [...record.scope],
    createdAt: record.createdAt,
    expiresAt: record.expiresAt,
    lastUsedAt: record.lastUsedAt,
    lastAddress: record.lastAddress,
    agent: record.agent,
    current: caller !== null && record.id === caller.tokenId,
    provider: providerOf(record, labels),
    signIn: record.signIn,
  })

  /**
   * The owner of a new API token who is not in the settings' users: a person signed in with the
   * identity provider or the directory, known by a live token of theirs (the caller's own, or
   * their latest session when someone with `*` asks). Their rights are that token's now; the new
   * token of a person of the provider ends no later than it unless the settings allow longer (a
   * person of the directory is re-checked at its uses instead).
   */
  async function ssoOwner(
    caller: InventoryCaller,
    ownerName: string,
  ): Promise<{ owner: SsoUser; rights: readonly string[]; endsAt: number | null } | null> {
    if (sso === null && directory === null) return null
    let record =
      caller.username === ownerName && caller.tokenId !== null ? await tokens.findById(caller.tokenId) : null
    if (record === null || !isVouched(record)) {
      const live = (await tokens.list(ownerName)).filter((each) => isVouched(each) && each.kind === 'session')
      record = live.at(-1) ?? null
    }
    if (record === null) return null
    const rights = caller.username === ownerName ? (caller.scope ?? caller.permissions) : record.scope
    return {
      owner: { username: ownerName, permissions: [...rights], fingerprint: record.fingerprint },
      rights,
      endsAt: isDirectoryRecord(record) || sso?.apiTokensOutliveSessions ? null : record.expiresAt,
    }
  }

  return {
    /**
     * The caller's own unexpired tokens (`user` null), one user's, or everyone's (`*`). Another
     * user's or everyone's needs `*`.
     */
    async list(caller: InventoryCaller, user: string | null): Promise<Result<TokenView[], InventoryError>> {
      const owner = user ?? caller.username
      if (owner === null) return ok([])
      if (owner === '*' ? !hasPermission(caller.permissions, '*') : !mayAct(caller, owner)) {
        return err({ code: 'forbidden', permission: '*' })
      }
      const records = await tokens.list(owner === '*' ? null : owner)
      return ok(records.map((record) => view(record, caller)))
    },

    /** Ends one token: the caller's own, or any with `*`; any other is as unknown. */
    async revoke(caller: InventoryCaller, id: string): Promise<Result<TokenView, InventoryError>> {
      const outcome = await tokens.revokeById(id, caller)
      if (!outcome.revoked) return err({ code: 'token_not_found', id })
      const { record } = outcome
      events.emit({
        type: 'token.revoked',
        at: clock.now(),
        owner: record.username,
        id: record.id,
        ...caller.actor,
      })
      return ok(view(record, caller))
    },

    /**
     * Ends every token of a user ("sign out everywhere"): the caller's own, or anyone's with `*`;
     * `*` ends everyone's (one event per user that had any). Returns how many ended.
     */
    async revokeUser(caller: InventoryCaller, user: string): Promise<Result<number, InventoryError>> {
      if (user === '*' ? !hasPermission(caller.permissions, '*') : !mayAct(caller, user)) {
        return err({ code: 'forbidden', permission: '*' })
      }
      const ended =
        user === '*' ? await tokens.revokeUsers() : [{ username: user, count: await tokens.revokeUser(user) }]
      for (const { username, count } of ended) {
        events.emit({
          type: 'tokens.revoked_all',
          at: clock.now(),
          owner: username,
          count,
          reason: 'request',
          ...caller.actor,
        })
      }
      return ok(ended.reduce((total, { count }) => total + count, 0))
    },

    /**
     * Creates a named API token within the owner's rights: the caller's rights now when it is
     * their own, the owner's permissions when a caller with `*` creates one for another user.
     */
    async create(
      caller: InventoryCaller,
      request: CreateTokenRequest,
    ): Promise<Result<CreatedApiToken, InventoryError>> {
      const name = request.name.trim()
      if (name === '') return err(invalid('Missing required field: name'))
      if (name.length > MAX_TOKEN_NAME)
        return err(invalid(`name must be at most ${MAX_TOKEN_NAME} characters`))
      const audience = request.audience ?? FLOWADMIN_AUDIENCE
      if (audience !== FLOWADMIN_AUDIENCE && !isResourceServer(audience))
        return err(
          invalid(
            `Unknown audience: ${audience.slice(0, 64)} (flowadmin, or the id of a configured resource server)`,
          ),
        )
      const ownerName = request.user ?? caller.username
      if (ownerName === null) return err(invalid('Missing required field: user'))
      if (!mayAct(caller, ownerName)) return err({ code: 'forbidden', permission: '*' })
      const configured = users.get(ownerName)
      const signedIn = configured === undefined ? await ssoOwner(caller, ownerName) : null
      const owner: TokenOwner | undefined = configured ?? signedIn?.owner
      if (owner === undefined) return err(invalid(`No such user: ${ownerName.slice(0, 64)}`))
      let lifetime = lifetimeOf(options, request.expiresIn)
      if (!lifetime.ok) return lifetime
      if (signedIn != null && signedIn.endsAt !== null) {
        lifetime = withinSession(lifetime.value, request.expiresIn, signedIn.endsAt - clock.now())
        if (!lifetime.ok) return lifetime
      }
      const requested = parsePermissionScope(request.scope ?? '')
      if (!requested.ok) return requested
      // A token made with another: no more than that one's scope either.
      const ceiling = ownerName === caller.username ? caller.scope : null
      const covers = (words: readonly string[], word: string) =>
        tokens.rights.covers(words, word) && (ceiling === null || tokens.rights.covers(ceiling, word))
      const rights = signedIn != null ? signedIn.rights : (ceiling ?? owner.permissions)
      const scope = grantScope(requested.value, rights, covers)
      if (scope === null || scope.length === 0) {
        return err({ code: 'invalid_scope', message: 'The scope exceeds the rights of the token owner' })
      }
      const created = await tokens.create(owner, {
        name,
        clientId: request.clientId ?? 'api',
        audience,
        scope,
        expiresIn: lifetime.value,
        agent: request.agent ?? null,
      })
      const { record } = created
      events.emit({
        type: 'token.created',
        at: clock.now(),
        owner: record.username,
        id: record.id,
        name,
        ...caller.actor,
      })
      return ok({ token: created.token, view: view(record, caller) })
    },

    /**
     * Deletes every token of users no longer configured (or not in `kept`, the users about to be),
     * with one event per such user naming the count. Run at start-up and before the users change.
     */
    async purgeRemovedUsers(kept?: ReadonlySet<string>): Promise<Array<{ username: string; count: number }>> {
      const purged = await tokens.purgeRemovedUsers(kept)
      for (const { username, count } of purged) {
        events.emit({
          type: 'tokens.revoked_all',
          at: clock.now(),
          owner: username,
          count,
          reason: 'user_removed',
          username: null,
          clientId: null,
          address: null,
        })
      }
      return purged
    },
  }
}

export type TokenInventory = ReturnType<typeof createTokenInventory>
