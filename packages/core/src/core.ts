import { createFactors, type FactorError, type TotpEnrolment } from './auth/factors.js'
import { createHandover, type SsoExchangeError } from './auth/handover.js'
import { createLogin, type LoginError, type LoginRequest } from './auth/login.js'
import {
  createLoginQueue,
  DEFAULT_LOGIN_QUEUE,
  type LoginQueueBounds,
  type LoginQueueLoad,
  type LoginQueueOptions,
} from './auth/login-queue.js'
import { createPasskeys, type PasskeyError, type PasskeyView } from './auth/passkeys.js'
import { hasPermission, toPermissionList } from './auth/permissions.js'
import {
  type ClientError,
  createResourceServers,
  type ResourceServerActivity,
  type ResourceServerOptions,
} from './auth/resource-servers.js'
import { createSignIn, type SecondFactorPolicy } from './auth/sign-in.js'
import { createSso, type SsoOptions, ssoSessionSeconds } from './auth/sso.js'
import { createThrottle, DEFAULT_THROTTLE, type ThrottleOptions } from './auth/throttle.js'
import type { User } from './auth/users.js'
import { type DomainError, err, ok, type Result } from './errors.js'
import { createFleet, type FleetOptions, fleetInstaller } from './fleet/fleet.js'
import { createModules } from './modules/modules.js'
import type {
  Actor,
  Clock,
  CoreObserver,
  Digest,
  EventSink,
  IdentityProvider,
  ModuleInstaller,
  NodeSetLoader,
  PasswordVerifier,
  RandomSource,
  Stores,
  TokenKind,
  TotpVerifier,
  TypeUsage,
  WebAuthn,
} from './ports/index.js'
import { systemClock, systemRandom, webDigest } from './system.js'
import { FLOWADMIN_AUDIENCE } from './tokens/audience.js'
import type { CreateTokenRequest } from './tokens/inventory.js'
import {
  type ApiTokenOptions,
  checkApiTokenOptions,
  createTokenInventory,
  DEFAULT_API_TOKENS,
  type InventoryCaller,
} from './tokens/inventory.js'
import { createTokens, type IssuedToken, isSsoRecord } from './tokens/tokens.js'
import { aheadOfClock, createTrail, type TrailReport } from './trail/trail.js'

export const DEFAULT_CLIENTS: readonly string[] = ['service-admin', 'service-editor']
/** Seconds a token lives unless `sessionExpiryTime` says otherwise: seven days. */
export const DEFAULT_SESSION_EXPIRY = 604_800

/** The users and rules of the credentials scheme. Without it the API is open. */
export interface AdminAuthOptions {
  /** People who log in with a password; none when everyone signs in with the identity provider. */
  users?:
    | ReadonlyArray<{ username: string; password: string; permissions: string | readonly string[] }>
    | undefined
  /**
   * Single sign-on with the organisation's OpenID provider (needs the `identityProvider` port):
   * the button's label, and how the person's groups map to permissions.
   */
  oidc?: SsoOptions | undefined
  /** Permissions of requests that carry no token. Without it such requests are refused. */
  default?: { permissions: string | readonly string[] } | undefined
  /** Seconds a token lives; default 604800 (seven days). */
  sessionExpiryTime?: number | undefined
  /** Client ids accepted besides `service-admin` and `service-editor`. */
  clients?: readonly string[] | undefined
  throttle?: Partial<ThrottleOptions> | undefined
  /** Lifetimes of named API tokens: 90 days by default, at most a year, never "never". */
  apiTokens?: Partial<ApiTokenOptions> | undefined
  /** The queue in front of password verification. */
  loginQueue?: Partial<LoginQueueOptions> | undefined
  /** Programs that may ask about tokens (introspection) and check passwords for their users. */
  resourceServers?: readonly ResourceServerOptions[] | undefined
  /**
   * Who must have a second factor to sign in with a password: nobody (default), `everyone`, or
   * whoever holds any of the listed permissions. Such people sign in on flowadmin's page (asked to
   * enrol there when they have none); the password grant refuses them (`mfa_required`).
   */
  secondFactor?: { require: SecondFactorPolicy } | undefined
}

/** What a resource server presents: its id and secret (HTTP Basic). */
export interface ClientCredentials {
  id: string
  secret: string
}

/**
 * What a resource server learns of a token (RFC 7662): whether it is live, and then whose it is
 * and what it may do now. Anything not live is just `{active: false}`.
 */
export type Introspection =
  | { active: false }
  | {
      active: true
      username: string
      /** The token's rights now: its scope ∩ its user's permissions. Never empty. */
      permissions: string[]
      clientId: string
      /** Always the resource server that asked: a token of any other audience is not active. */
      audience: string
      kind: TokenKind
      /** Milliseconds since the epoch. */
      issuedAt: number
      /** Milliseconds since the epoch; null: never expires. */
      expiresAt: number | null
    }

/** Which tokens a route takes. */
export interface AudienceOptions {
  /**
   * Tokens of any audience, not only flowadmin's: for `POST /auth/revoke`, where a token may end
   * itself whoever it is for. A principal whose token is not flowadmin's can do nothing else.
   */
  anyAudience?: boolean | undefined
}

/** A configured user as settings give it. */
export type UserOptions = NonNullable<AdminAuthOptions['users']>[number]

export interface CoreOptions {
  adminAuth?: AdminAuthOptions | null | undefined
  /**
   * Fleet mode: the module routes state the desired modules of the Node-RED instances that report
   * here (see createFleet), not the modules of this process. Off when absent or null.
   */
  fleet?: FleetOptions | null | undefined
}

export interface CorePorts {
  stores: Stores
  verifier: PasswordVerifier
  loader: NodeSetLoader
  typeUsage: TypeUsage
  events?: EventSink | undefined
  /** Installs and removes node modules; without it every install is refused as not allowed. */
  installer?: ModuleInstaller | undefined
  /** Defaults to the system clock. */
  clock?: Clock | undefined
  /** Defaults to the platform CSPRNG. */
  random?: RandomSource | undefined
  /** Defaults to Web Crypto's SHA-256. */
  digest?: Digest | undefined
  /** Told what the core measures of itself (for metrics); nothing by default. */
  observer?: CoreObserver | undefined
  /** The organisation's OpenID provider, for `adminAuth.oidc`. */
  identityProvider?: IdentityProvider | undefined
  /** TOTP secrets and codes; without it no one can enrol a second factor. */
  totp?: TotpVerifier | undefined
  /** Passkey ceremonies (the relying party); without it no one can register or use a passkey. */
  webauthn?: WebAuthn | undefined
}

/** The sign-in button of the identity provider, as Node-RED announces a strategy's. */
export interface StrategyButton {
  type: 'button'
  label: string
  /** Below the API's root: `/auth/strategy`. */
  url: string
}

/**
 * `{}` when the API is open; the credentials scheme when people log in with passwords (with an
 * `sso` button beside it when the identity provider is configured too); Node-RED's `strategy`
 * scheme with one button when only the identity provider is.
 */
export type LoginScheme =
  | Record<string, never>
  | {
      type: 'credentials'
      prompts: Array<{ id: 'username' | 'password'; type: 'text' | 'password'; label: string }>
      sso?: StrategyButton
    }
  | { type: 'strategy'; prompts: StrategyButton[] }

/** Whoever makes a request, once authenticated. */
export type Principal =
  | {
      kind: 'user'
      username: string
      clientId: string
      /** The token's scope ∩ the user's permissions now. */
      permissions: string[]
      /** The public id of the token in use. */
      tokenId: string
      /** A session (a sign-in) or an API token. */
      tokenKind: TokenKind
      /**
       * Whom the token is for: `flowadmin`, except where a route takes a token of any audience
       * (ending itself at `POST /auth/revoke`).
       */
      audience: string
      /** The identity provider the token's owner signed in with (its label); absent for a password. */
      provider?: string | undefined
      /** When the token was issued (ms since the epoch): for a session, when its person signed in. */
      signedInAt: number
    }
  | { kind: 'anonymous'; permissions: string[] }

/** A person signed in with a token. */
export type UserPrincipal = Extract<Principal, { kind: 'user' }>

/** True when the principal is a person's own session for flowadmin: not an API token, not another audience's. */
const ownSession = (principal: UserPrincipal) =>
  principal.tokenKind === 'session' && principal.audience === FLOWADMIN_AUDIENCE

/**
 * Milliseconds a sign-in counts as recent: adding a second factor needs a session at most this
 * old, so a session taken from its person (a leaked token) cannot add a factor of its own.
 */
export const RECENT_SIGN_IN_MS = 10 * 60_000

/** The refusal of what only a person's own session may do. */
const notOwnSession = err({ code: 'forbidden', permission: 'session' } as const)

export type AccessError = Extract<DomainError, { code: 'unauthenticated' | 'forbidden' }>
export type ReauthenticationError = Extract<DomainError, { code: 'reauthentication_required' }>
const signInAgain = err({ code: 'reauthentication_required', minutes: RECENT_SIGN_IN_MS / 60_000 } as const)

const CREDENTIALS_SCHEME: Extract<LoginScheme, { type: 'credentials' }> = {
  type: 'credentials',
  prompts: [
    { id: 'username', type: 'text', label: 'Username' },
    { id: 'password', type: 'password', label: 'Password' },
  ],
}

const silentSink: EventSink = { emit() {} }

/** The whole domain, wired to its ports. */
export function createCore(ports: CorePorts, options: CoreOptions = {}) {
  const clock = ports.clock ?? systemClock
  const events = ports.events ?? silentSink
  const auth = options.adminAuth ?? null
  const lifetime = auth?.sessionExpiryTime ?? DEFAULT_SESSION_EXPIRY
  if (!Number.isInteger(lifetime) || lifetime <= 0) {
    throw new RangeError('sessionExpiryTime must be a positive whole number of seconds')
  }

  // One map for the life of the core, refilled in place by setUsers, so every part sees a reload.
  const users = new Map<string, User>()
  const fillUsers = (list: readonly UserOptions[]) => {
    ports.verifier.useHashes?.(list.map((user) => user.password))
    users.clear()
    for (const user of list) {
      users.set(user.username, {
        username: user.username,
        passwordHash: user.password,
        permissions: toPermissionList(user.permissions),
      })
    }
  }
  fillUsers(auth?.users ?? [])
  const ssoOptions = auth?.oidc ?? null
  const identityProvider = ports.identityProvider ?? null
  if (ssoOptions !== null && identityProvider === null) {
    throw new Error('adminAuth.oidc needs the identityProvider port')
  }
  const clients = new Set([...DEFAULT_CLIENTS, ...(auth?.clients ?? [])])
  // The resource servers' ids now: each is the audience of its tokens (see FLOWADMIN_AUDIENCE).
  let resourceServerIds = new Set<string>()
  const setResourceServerIds = (list: readonly ResourceServerOptions[]) => {
    if (list.some((server) => server.id === FLOWADMIN_AUDIENCE))
      throw new RangeError(
        `A resource server may not be called ${FLOWADMIN_AUDIENCE}: that is flowadmin's own audience`,
      )
    resourceServerIds = new Set(list.map((server) => server.id))
  }
  setResourceServerIds(auth?.resourceServers ?? [])
  const isResourceServer = (id: string) => resourceServerIds.has(id)
  const apiTokenOptions = { ...DEFAULT_API_TOKENS, ...auth?.apiTokens }
  checkApiTokenOptions(apiTokenOptions)
  const anonymousPermissions =
    auth === null ? ['*'] : auth.default ? toPermissionList(auth.default.permissions) : null
  const digest = ports.digest ?? webDigest
  const tokens = createTokens({
    store: ports.stores.tokens,
    clock,
    random: ports.random ?? systemRandom,
    digest,
    events,
    users,
    lifetime,
    sso: ssoOptions !== null,
    isResourceServer,
  })
  const handover = createHandover({
    store: ports.stores.sso,
    tokens,
    users,
    clients,
    clock,
    random: ports.random ?? systemRandom,
    digest,
    events,
    providerSessionSeconds: ssoOptions === null ? null : ssoSessionSeconds(ssoOptions, lifetime),
  })
  const sso =
    ssoOptions === null || identityProvider === null
      ? null
      : createSso({
          provider: identityProvider,
          tokens,
          store: ports.stores.sso,
          isConfiguredUser: (username) => users.has(username),
          clock,
          random: ports.random ?? systemRandom,
          digest,
          events,
          options: ssoOptions,
          lifetime,
          handover,
        })
  const inventory = createTokenInventory({
    tokens,
    users,
    events,
    clock,
    options: apiTokenOptions,
    sso: sso && { label: sso.label, apiTokensOutliveSessions: sso.apiTokensOutliveSessions },
    isResourceServer,
  })
  const throttle = createThrottle(ports.stores.throttle, clock, digest, {
    ...DEFAULT_THROTTLE,
    ...auth?.throttle,
  })
  const queue = createLoginQueue({ ...DEFAULT_LOGIN_QUEUE, ...auth?.loginQueue })
  const resourceServers = createResourceServers(
    { verifier: ports.verifier, queue, throttle, digest, events, clock },
    auth?.resourceServers ?? [],
  )
  const login = createLogin({
    users,
    clients,
    verifier: ports.verifier,
    queue,
    throttle,
    tokens,
    events,
    clock,
    observer: ports.observer,
    needsSecondFactor: (user) => signIn.needsSecondFactor(user),
  })
  const trail = createTrail(ports.stores.trail)
  const fleet =
    options.fleet === null || options.fleet === undefined
      ? null
      : createFleet(
          { store: ports.stores.modules, fleet: ports.stores.fleet, clock, digest, events },
          options.fleet,
        )
  const factors = createFactors({
    store: ports.stores.factors,
    passkeys: ports.stores.passkeys,
    totp: ports.totp ?? null,
    throttle,
    tokens,
    digest,
    random: ports.random ?? systemRandom,
    clock,
    events,
  })
  const passkeys = createPasskeys({
    store: ports.stores.passkeys,
    webauthn: ports.webauthn ?? null,
    users,
    tokens,
    digest,
    clock,
    events,
  })
  const signIn = createSignIn({
    checkPassword: (request, address, client) => login.checkPassword(request, address, client),
    users,
    factors,
    hasPasskey: (username) => passkeys.has(username),
    policy: auth?.secondFactor?.require ?? 'none',
    store: ports.stores.factors,
    digest,
    random: ports.random ?? systemRandom,
    clock,
    events,
  })
  const modules = createModules({
    store: ports.stores.modules,
    loader: ports.loader,
    typeUsage: fleet?.typeUsage ?? ports.typeUsage,
    events,
    clock,
    installer: fleet === null ? ports.installer : fleetInstaller(fleet, ports.installer),
    inventory: fleet === null ? 'discovered' : 'store',
  })

  /**
   * Authenticates a resource server (a fleet instance's helper): its credentials hold, or
   * `invalid_client`.
   */
  async function authenticateClient(
    client: ClientCredentials | null,
    address: string,
  ): Promise<Result<string, ClientError>> {
    if (auth === null || client === null) return err({ code: 'invalid_client' })
    const authenticated = await resourceServers.authenticate(client.id, client.secret, address)
    return authenticated.ok ? ok(client.id) : authenticated
  }

  async function authenticate(
    token: string | null,
    address: string | null = null,
    { anyAudience = false }: AudienceOptions = {},
  ): Promise<Result<Principal, AccessError>> {
    if (auth === null) return ok({ kind: 'anonymous', permissions: ['*'] })
    if (token === null) {
      return anonymousPermissions === null
        ? err({ code: 'unauthenticated', reason: 'missing' })
        : ok({ kind: 'anonymous', permissions: anonymousPermissions })
    }
    const live = await tokens.authenticate(token, address, anyAudience ? null : FLOWADMIN_AUDIENCE)
    if (live === null) return err({ code: 'unauthenticated', reason: 'invalid' })
    return ok({
      kind: 'user',
      username: live.record.username,
      clientId: live.record.clientId,
      permissions: live.permissions,
      tokenId: live.record.id,
      tokenKind: live.record.kind,
      audience: live.record.audience ?? FLOWADMIN_AUDIENCE,
      signedInAt: live.record.createdAt,
      ...(sso !== null && isSsoRecord(live.record) && { provider: sso.label }),
    })
  }

  /** Whether the principal's session began recently enough to add a second factor. */
  const recent = (principal: UserPrincipal) => clock.now() - principal.signedInAt <= RECENT_SIGN_IN_MS

  return {
    /** True when `adminAuth` is configured; false means every route is open. */
    authEnabled: auth !== null,
    /** Seconds a newly issued token lives. */
    tokenLifetime: lifetime,

    /** The login queue in front of password verification (`adminAuth.loginQueue`). */
    loginQueue: {
      /**
       * New bounds for its lanes, from the next login on (the server sets them once it has
       * measured the verify rate). A bound that is not a whole number from 0 throws.
       */
      resize(bounds: LoginQueueBounds): void {
        queue.resize(bounds)
      },
      /** Password verifications running, and logins waiting for one in each lane, now (for metrics). */
      load(): LoginQueueLoad {
        return queue.load()
      },
    },

    /** The login scheme clients discover: `{}` when the API is open. */
    loginScheme(): LoginScheme {
      if (auth === null) return {}
      if (sso === null) return CREDENTIALS_SCHEME
      const button: StrategyButton = { type: 'button', label: sso.label, url: '/auth/strategy' }
      return users.size === 0
        ? { type: 'strategy', prompts: [button] }
        : { ...CREDENTIALS_SCHEME, sso: button }
    },

    /**
     * Single sign-on with the organisation's OpenID provider; null when `adminAuth.oidc` is not
     * configured. See createSso.
     */
    sso,

    /**
     * Exchanges credentials for a token (OAuth2 password grant). `address` is the client's,
     * `agent` what it is (see TokenRecord.agent).
     */
    login: (request: LoginRequest, address: string, agent: string | null = null) =>
      login(request, address, agent),

    /**
     * The password grant asked by a resource server that authenticates itself (a Node-RED
     * instance checking its editor's login form): the client is checked first, and the token is
     * issued to it as `client_id`. A `client_id` in the request must be the same.
     */
    async loginAsClient(
      client: ClientCredentials | null,
      request: LoginRequest,
      address: string,
      agent: string | null = null,
    ): Promise<Result<IssuedToken, LoginError | ClientError>> {
      if (auth === null || client === null) return err({ code: 'invalid_client' })
      const authenticated = await resourceServers.authenticate(client.id, client.secret, address)
      if (!authenticated.ok) return authenticated
      if (request.clientId !== undefined && request.clientId !== client.id)
        return err({ code: 'invalid_client' })
      return login({ ...request, clientId: client.id }, address, agent, client.id)
    },

    /**
     * Whether a resource server may be sent a person's authorization code at `redirectUri`: the
     * server exists and registered exactly that URI. Checked before a sign-in begins, so an
     * unregistered URI never receives anything.
     */
    redirectRegistered: (clientId: string, redirectUri: string): boolean =>
      resourceServers.redirects(clientId, redirectUri),

    /**
     * The authorization code grant of a resource server (a Node-RED editor's sign-in through
     * flowadmin): the client authenticates itself (HTTP Basic) first, then the code, its redirect
     * URI and PKCE verifier are checked (see Sso.redeem). A `client_id` in the request must be the
     * same as the authenticated one.
     */
    async redeemCode(
      client: ClientCredentials | null,
      request: { clientId: string | undefined; code: string; redirectUri: string; codeVerifier: string },
      address: string,
      agent: string | null = null,
    ): Promise<Result<IssuedToken, ClientError | SsoExchangeError>> {
      if (auth === null || client === null) return err({ code: 'invalid_client' })
      const authenticated = await resourceServers.authenticate(client.id, client.secret, address)
      if (!authenticated.ok) return authenticated
      if (request.clientId !== undefined && request.clientId !== client.id)
        return err({ code: 'invalid_client' })
      const { code, redirectUri, codeVerifier } = request
      return handover.redeem(client.id, code, redirectUri, codeVerifier, address, agent)
    },

    /**
     * Token introspection (RFC 7662) for a resource server: refused (`invalid_client`) unless its
     * credentials hold; then the token's state now, through the same rules as every request
     * (expired, revoked, user removed, password changed, or no rights left: not active). Asking
     * is not a use of the token: its last use stays as its own requests wrote it.
     */
    async introspect(
      client: ClientCredentials | null,
      token: string,
      address: string,
    ): Promise<Result<Introspection, ClientError>> {
      const observe = ports.observer?.introspection
      if (auth === null || client === null) {
        observe?.('invalid_client')
        return err({ code: 'invalid_client' })
      }
      const authenticated = await resourceServers.authenticate(client.id, client.secret, address)
      if (!authenticated.ok) {
        const { code } = authenticated.error
        observe?.(code === 'temporarily_unavailable' ? 'shed' : code)
        return authenticated
      }
      // Only the token's own audience learns that it is live; to any other it is as unknown.
      const live = await tokens.authenticate(token, null, client.id)
      observe?.(live === null || live.permissions.length === 0 ? 'inactive' : 'active')
      if (live === null || live.permissions.length === 0) return ok({ active: false })
      const { record } = live
      return ok({
        active: true,
        username: record.username,
        permissions: live.permissions,
        clientId: record.clientId,
        audience: client.id,
        kind: record.kind,
        issuedAt: record.createdAt,
        expiresAt: record.expiresAt,
      })
    },

    /**
     * A resource server's way to report its instances' events, once its credentials are proven:
     * `report` appends them to the trail under that server (never one the reports name) and
     * returns how many were kept. Authenticating first lets the caller read a report only from a
     * proven client.
     */
    async reporter(
      client: ClientCredentials | null,
      address: string,
    ): Promise<
      Result<
        {
          report(
            reports: readonly TrailReport[],
          ): Promise<Result<number, { code: 'invalid_request'; message: string }>>
        },
        ClientError
      >
    > {
      if (auth === null || client === null) return err({ code: 'invalid_client' })
      const authenticated = await resourceServers.authenticate(client.id, client.secret, address)
      if (!authenticated.ok) return authenticated
      const server = authenticated.value.id
      return ok({
        async report(reports: readonly TrailReport[]) {
          const ahead = aheadOfClock(reports, clock.now())
          if (ahead !== null) return err({ code: 'invalid_request' as const, message: ahead })
          return ok(await trail.ingest(server, reports))
        },
      })
    },

    /** The trail: search, export and retention (see createTrail). */
    trail,

    /** The configured resource servers and when each last called (since start or reload). */
    resourceServers: {
      activity: (): ResourceServerActivity[] => resourceServers.activity(),
      /** Replaces them (a reload): every secret is verified again on its next use. */
      set: (list: readonly ResourceServerOptions[]) => {
        setResourceServerIds(list)
        resourceServers.set(list)
      },
    },

    /**
     * The principal behind a bearer token (`null` when none was sent). Given the client's
     * address, the token's last use is recorded (at most once a minute). Only a token for
     * flowadmin is accepted, unless `anyAudience` (see AudienceOptions).
     */
    authenticate,

    /** Authenticates and checks one permission; a refusal is recorded as `permission.denied`. */
    async authorize(
      token: string | null,
      permission: string,
      address: string,
      options: AudienceOptions = {},
    ): Promise<Result<Principal, AccessError>> {
      const principal = await authenticate(token, address, options)
      if (!principal.ok || hasPermission(principal.value.permissions, permission)) return principal
      events.emit({
        type: 'permission.denied',
        at: clock.now(),
        permission,
        ...actorOf(principal.value, address),
      })
      return err({ code: 'forbidden', permission })
    },

    /**
     * Revokes a token the caller may revoke; anything else is a silent no-op. A caller whose token
     * is not for flowadmin (a resource server's) may end that token and nothing else.
     */
    async revoke(principal: Principal, token: string, address: string): Promise<void> {
      const caller = {
        username: principal.kind === 'user' ? principal.username : null,
        permissions: principal.permissions,
        onlyToken:
          principal.kind === 'user' && principal.audience !== FLOWADMIN_AUDIENCE
            ? principal.tokenId
            : undefined,
      }
      const outcome = await tokens.revoke(token, caller)
      if (outcome.revoked) {
        events.emit({
          type: 'token.revoked',
          at: clock.now(),
          owner: outcome.record.username,
          id: outcome.record.id,
          ...actorOf(principal, address),
        })
      }
    },

    /**
     * The session inventory and named API tokens. The command line acts with {@link operator}:
     * every right, no user.
     */
    tokens: {
      list: (principal: Principal, user: string | null, address: string | null) =>
        inventory.list(callerOf(principal, address), user),
      revoke: (principal: Principal, id: string, address: string | null) =>
        inventory.revoke(callerOf(principal, address), id),
      revokeUser: (principal: Principal, user: string, address: string | null) =>
        inventory.revokeUser(callerOf(principal, address), user),
      create: (principal: Principal, request: CreateTokenRequest, address: string | null) =>
        inventory.create(callerOf(principal, address), request),
      /** Deletes the tokens of users no longer configured (one event per user); the server runs it at start. */
      purgeRemovedUsers: inventory.purgeRemovedUsers,
      /**
       * Gives tokens saved before tokens had an audience their client's (see
       * Tokens.settleAudiences); the server runs it at start. How many changed.
       */
      settleAudiences: () => tokens.settleAudiences(),
    },

    /**
     * Deletes the tokens of users not in `list`, then replaces the configured users (names,
     * passwords, permissions) from the next request on. The store work comes first, so when it
     * fails (the store is down) the users stay as they were and this rejects; there is never a
     * moment when the new users are live and a removed user's tokens are not yet gone. A removed
     * user who logs in meanwhile gets a token refused on first use. A list that removes nobody
     * needs no store work, nor do tokens of a changed password: their credential no longer
     * matches once the new users are live. Only when `adminAuth` was configured at start.
     */
    async setUsers(list: readonly UserOptions[]): Promise<Array<{ username: string; count: number }>> {
      if (auth === null) throw new Error('setUsers needs adminAuth configured at start')
      const kept = new Set(list.map((user) => user.username))
      const removesSomeone = [...users.keys()].some((username) => !kept.has(username))
      const purged = removesSomeone ? await inventory.purgeRemovedUsers(kept) : []
      fillUsers(list)
      return purged
    },

    modules,

    /**
     * Fleet mode (the `fleet` option), or null when it is off: the desired state the instances
     * poll, their reports and drift. `authenticateClient` checks an instance's resource server.
     */
    fleet: fleet === null ? null : { ...fleet, authenticateClient },

    /**
     * A person's sign-in on flowadmin's own page: the password, then the second factor when the
     * person has one (see createSignIn).
     */
    signIn: {
      password: signIn.password,
      secondFactor: signIn.secondFactor,
      enrol: signIn.enrol,
      finishEnrolment: signIn.finishEnrolment,
      /** True when people may sign in with a password here (flowadmin has users of its own). */
      hasUsers: () => users.size > 0,
      /** Ends a sign-in with the person's one-time code (see Handover.handOver). */
      handOver: handover.handOver,
      /** A console's one-time code traded for a session (see Handover.exchange). */
      exchange: auth === null ? null : handover.exchange,
    },

    /**
     * People's second factors. A person manages their own (status, TOTP enrolment); `remove`
     * needs the `*` permission for another person's (the command line acts as {@link operator}).
     */
    mfa: {
      available: factors.available,
      status: (principal: UserPrincipal) => factors.status(principal.username),
      /** Enrolment is a person's own act: refused to an API token or a token of another audience. */
      startTotp: async (
        principal: UserPrincipal,
      ): Promise<Result<TotpEnrolment, FactorError | AccessError | ReauthenticationError>> =>
        !ownSession(principal)
          ? notOwnSession
          : !recent(principal)
            ? signInAgain
            : factors.startTotp(principal.username),
      confirmTotp: async (
        principal: UserPrincipal,
        code: string,
        address: string | null,
      ): Promise<Result<{ recoveryCodes: string[] }, FactorError | AccessError>> =>
        ownSession(principal)
          ? factors.confirmTotp(
              { ...actorOf(principal, address), username: principal.username },
              code,
              principal.tokenId,
            )
          : notOwnSession,
      /** Checks a second factor's code of `username` (see Factors.verify). */
      verify: (username: string, code: string, actor: Omit<Actor, 'username'>) =>
        factors.verify({ ...actor, username }, code),
      /** Whether signing in as `username` asks for a second factor. */
      required: (username: string) => factors.required(username),
      async remove(
        principal: Principal,
        username: string,
        address: string | null,
      ): Promise<Result<boolean, AccessError>> {
        if (!hasPermission(principal.permissions, '*')) return err({ code: 'forbidden', permission: '*' })
        const keep = principal.kind === 'user' && principal.username === username ? principal.tokenId : null
        return ok(await factors.remove(actorOf(principal, address), username, keep))
      },
    },

    /**
     * People's passkeys. A person manages their own, with their own session for flowadmin (an API
     * token or a token of another audience is refused); the sign-in page signs in with one
     * (`signInOptions`, then `signIn`, which says whose it is: the page issues the session).
     * Removing every factor of a person (`mfa.remove`) removes their passkeys too.
     */
    passkeys: {
      available: passkeys.available,
      list: async (principal: UserPrincipal): Promise<Result<PasskeyView[], PasskeyError | AccessError>> =>
        ownSession(principal) ? passkeys.list(principal.username) : notOwnSession,
      registrationOptions: async (
        principal: UserPrincipal,
      ): Promise<Result<{ options: unknown }, PasskeyError | AccessError | ReauthenticationError>> =>
        !ownSession(principal)
          ? notOwnSession
          : !recent(principal)
            ? signInAgain
            : passkeys.registrationOptions(principal.username),
      register: async (
        principal: UserPrincipal,
        name: string,
        response: unknown,
        address: string | null,
      ): Promise<Result<PasskeyView, PasskeyError | AccessError>> =>
        ownSession(principal)
          ? passkeys.register(
              { ...actorOf(principal, address), username: principal.username },
              name,
              response,
              principal.tokenId,
            )
          : notOwnSession,
      remove: async (
        principal: UserPrincipal,
        id: string,
        address: string | null,
      ): Promise<Result<void, PasskeyError | AccessError>> =>
        ownSession(principal)
          ? passkeys.remove(
              { ...actorOf(principal, address), username: principal.username },
              id,
              principal.tokenId,
            )
          : notOwnSession,
      signInOptions: passkeys.signInOptions,
      signIn: passkeys.signIn,
      /** Whether `username` has any passkey. */
      has: (username: string) => passkeys.has(username),
    },

    /**
     * Deletes expired tokens, ended throttle windows, logout tokens past their time, single
     * sign-ins and one-time codes that expired unfinished, sign-ins awaiting a second factor and
     * passkey challenges past their time, in batches of `batchSize`, at most `maxBatches` of each,
     * so one call stays bounded however much has piled up (`signIns` counts the last three kinds).
     */
    async sweep({ batchSize = 500, maxBatches = 20 } = {}): Promise<{
      tokens: number
      throttle: number
      logoutTokens: number
      signIns: number
    }> {
      const drain = async (step: (limit: number) => Promise<number>) => {
        let total = 0
        for (let i = 0; i < maxBatches; i++) {
          const removed = await step(batchSize)
          total += removed
          if (removed < batchSize) break
        }
        return total
      }
      return {
        tokens: await drain(tokens.sweep),
        throttle: await drain(throttle.sweep),
        logoutTokens: await drain((limit) => ports.stores.sso.deleteExpired(clock.now(), limit)),
        signIns:
          (await drain((limit) => ports.stores.sso.deleteExpiredSignIns(clock.now(), limit))) +
          (await drain(signIn.sweep)) +
          (await drain(passkeys.sweep)),
      }
    },
  }
}

/** Whoever acts from the command line, on the store directly: every right, no user. */
export const operator: Principal = { kind: 'anonymous', permissions: ['*'] }

function callerOf(principal: Principal, address: string | null): InventoryCaller {
  return {
    username: principal.kind === 'user' ? principal.username : null,
    tokenId: principal.kind === 'user' ? principal.tokenId : null,
    permissions: principal.permissions,
    actor: actorOf(principal, address),
  }
}

/** The actor of an event, from a principal. */
export function actorOf(principal: Principal, address: string | null): Actor {
  return principal.kind === 'user'
    ? { username: principal.username, clientId: principal.clientId, address }
    : { username: null, clientId: null, address }
}

export type Core = ReturnType<typeof createCore>
