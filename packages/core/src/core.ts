import { createGroupAssignments } from './access/assignments.js'
import { createAccessAudit } from './access/audit.js'
import { createRightChecks } from './access/checks.js'
import { type Holding, holdingsOf } from './access/holders.js'
import { createAccessRights } from './access/rights.js'
import { type AccessView, accessView } from './access/view.js'
import { createAccess } from './auth/access.js'
import { createCarriedChallenges } from './auth/carried-challenges.js'
import { createDirectoryPeople, directoryThrottleOptions } from './auth/directory.js'
import { createMfaFacade, createPasskeyFacade } from './auth/factor-facade.js'
import { createFactors } from './auth/factors.js'
import { createHandover } from './auth/handover.js'
import { createLogin, type LoginRequest } from './auth/login.js'
import {
  createLoginQueue,
  DEFAULT_LOGIN_QUEUE,
  type LoginQueueBounds,
  type LoginQueueLoad,
} from './auth/login-queue.js'
import { type LoginScheme, loginSchemeOf } from './auth/login-scheme.js'
import { createPasskeys } from './auth/passkeys.js'
import { hasPermission } from './auth/permissions.js'
import type { AccessError, Principal, UserPrincipal } from './auth/principal.js'
import { createResourceServerFacade } from './auth/resource-server-facade.js'
import { createResourceServers } from './auth/resource-servers.js'
import { createSignIn } from './auth/sign-in.js'
import { createSignInFacade } from './auth/sign-in-facade.js'
import { createSso, ssoSessionSeconds } from './auth/sso.js'
import { createThrottle, DEFAULT_THROTTLE } from './auth/throttle.js'
import { createUsers, type UserOptions } from './auth/users.js'
import { type CoreOptions, type CorePorts, DEFAULT_CLIENTS, DEFAULT_SESSION_EXPIRY } from './core-options.js'
import { err, ok, type Result } from './errors.js'
import { createEnrolments } from './fleet/enrolments.js'
import { createFleet } from './fleet/fleet.js'
import { createFleetIdentities } from './fleet/fleet-identities.js'
import { fleetInstaller } from './fleet/fleet-installer.js'
import { DEFAULT_MAX_INSTANCES } from './fleet/identity-rules.js'
import { createInstanceIdentities } from './fleet/instance-identities.js'
import { leaving } from './flows/rollout-upkeep.js'
import { createRollouts } from './flows/rollouts.js'
import { createSnapshots, DEFAULT_SNAPSHOT_MAX_BYTES } from './flows/snapshots.js'
import { createFlowVariables } from './flows/variables.js'
import { createModules } from './modules/modules.js'
import type { EventSink } from './ports/index.js'
import { createSweep } from './sweep.js'
import { systemClock, systemRandom, webDigest } from './system.js'
import { checkApiTokenOptions, DEFAULT_API_TOKENS } from './tokens/api-token-lifetime.js'
import { createAudiences } from './tokens/audience.js'
import { createTokenInventory } from './tokens/inventory.js'
import { createInventoryFacade } from './tokens/inventory-facade.js'
import { createTokens } from './tokens/tokens.js'
import { createTrail } from './trail/trail.js'

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

  const { users, replace: replaceUsers } = createUsers(ports.verifier, auth?.users ?? [])
  const ssoOptions = auth?.oidc ?? null
  const identityProvider = ports.identityProvider ?? null
  if (ssoOptions !== null && identityProvider === null) {
    throw new Error('adminAuth.oidc needs the identityProvider port')
  }
  const directoryOptions = auth?.ldap ?? null
  const directoryPort = ports.directory ?? null
  if (directoryOptions !== null && directoryPort === null) {
    throw new Error('adminAuth.ldap needs the directory port')
  }
  const clients = new Set([...DEFAULT_CLIENTS, ...(auth?.clients ?? [])])
  const audiences = createAudiences(auth?.resourceServers ?? [])
  const apiTokenOptions = { ...DEFAULT_API_TOKENS, ...auth?.apiTokens }
  checkApiTokenOptions(apiTokenOptions)
  const digest = ports.digest ?? webDigest
  const random = ports.random ?? systemRandom
  const rights = createAccessRights(options.access)
  const accessAudit = createAccessAudit({ events, clock })
  const tokens = createTokens({
    store: ports.stores.tokens,
    clock,
    random,
    digest,
    events,
    users,
    lifetime,
    sso: ssoOptions !== null,
    directory:
      directoryOptions === null
        ? undefined
        : { recheck: async (record) => (directory === null ? record : directory.recheck(record)) },
    isResourceServer: audiences.isResourceServer,
    rights,
  })
  const handover = createHandover({
    store: ports.stores.sso,
    tokens,
    users,
    clients,
    clock,
    random,
    digest,
    events,
    providerSessionSeconds: ssoOptions === null ? null : ssoSessionSeconds(ssoOptions, lifetime),
    directory: directoryOptions !== null,
  })
  const challenges = createCarriedChallenges({ store: ports.stores.sso, digest, random, clock })
  const sso =
    ssoOptions === null || identityProvider === null
      ? null
      : createSso({
          provider: identityProvider,
          tokens,
          store: ports.stores.sso,
          challenges,
          isConfiguredUser: (username) => users.has(username),
          clock,
          random,
          digest,
          events,
          options: ssoOptions,
          lifetime,
          handover,
        })
  const directory =
    directoryOptions === null || directoryPort === null
      ? null
      : createDirectoryPeople({
          directory: directoryPort,
          tokens,
          store: ports.stores.sso,
          isConfiguredUser: (username) => users.has(username),
          digest,
          clock,
          events,
          observer: ports.observer,
          options: directoryOptions,
        })
  const providers = { sso: sso?.label ?? null, directory: directory?.label ?? null }
  const findPerson =
    directory === null ? undefined : (username: string, address: string) => directory.find(username, address)
  const inventory = createTokenInventory({
    tokens,
    users,
    events,
    clock,
    options: apiTokenOptions,
    sso: sso && { label: sso.label, apiTokensOutliveSessions: sso.apiTokensOutliveSessions },
    directory: directory && { label: directory.label },
    isResourceServer: audiences.isResourceServer,
  })
  const throttle = createThrottle(ports.stores.throttle, clock, digest, {
    ...DEFAULT_THROTTLE,
    ...auth?.throttle,
  })
  const directoryThrottle = createThrottle(
    ports.stores.throttle,
    clock,
    digest,
    directoryThrottleOptions({ ...DEFAULT_THROTTLE, ...auth?.throttle }, directoryOptions?.throttle),
  )
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
    directory: directory === null ? undefined : { ...directory, throttle: directoryThrottle },
  })
  const trail = createTrail(ports.stores.trail, clock, options.trail)
  const fleet =
    options.fleet === null || options.fleet === undefined
      ? null
      : createFleet({ store: ports.stores.modules, fleet: ports.stores.fleet, clock, events }, options.fleet)
  const factors = createFactors({
    store: ports.stores.factors,
    passkeys: ports.stores.passkeys,
    totp: ports.totp ?? null,
    throttle,
    tokens,
    digest,
    random,
    clock,
    events,
  })
  const passkeys = createPasskeys({
    store: ports.stores.passkeys,
    webauthn: ports.webauthn ?? null,
    users,
    findPerson,
    tokens,
    challenges,
    clock,
    events,
  })
  const signIn = createSignIn({
    checkPassword: (request, address, client) => login.checkPassword(request, address, client),
    users,
    findPerson,
    factors,
    hasPasskey: (username) => passkeys.has(username),
    policy: auth?.secondFactor?.require ?? 'none',
    anywhere: rights.anywhere,
    store: ports.stores.factors,
    digest,
    random,
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
    reported: fleet?.undecided,
  })
  const access = createAccess({
    authEnabled: auth !== null,
    anonymous: auth?.default,
    tokens,
    providers,
    events,
    clock,
  })
  const identityDeps = {
    store: ports.stores.enrolments,
    fleet: ports.stores.fleet,
    server: (id: string) => resourceServers.find(id),
    clock,
    random,
    digest,
    events,
  }
  const identities = createInstanceIdentities({
    ...identityDeps,
    refuse: resourceServers.refuse,
    called: resourceServers.called,
    async endSessions(clientId) {
      const issued = (await tokens.list(null)).filter((record) => record.clientId === clientId)
      return tokens.deleteRecords(issued)
    },
  })
  const resourceServerFacade = createResourceServerFacade({
    authEnabled: auth !== null,
    servers: resourceServers,
    audiences,
    login,
    handover,
    tokens,
    trail,
    identities,
    events,
    clock,
    observer: ports.observer,
    accessAudit,
  })
  const fleetIdentities =
    fleet === null
      ? null
      : createFleetIdentities({
          fleet,
          identities,
          enrolments: createEnrolments({
            ...identityDeps,
            throttle,
            maxInstances: options.fleet?.maxInstances ?? DEFAULT_MAX_INSTANCES,
          }),
          authenticateClient: resourceServerFacade.authenticateClient,
          server: identityDeps.server,
          called: resourceServers.called,
          clock,
          events,
        })
  const snapshots = createSnapshots({
    store: ports.stores.snapshots,
    modules: ports.stores.modules,
    fleet: ports.stores.fleet,
    clock,
    random,
    events,
    maxBytes: options.fleet?.snapshots?.maxBytes ?? DEFAULT_SNAPSHOT_MAX_BYTES,
    versionProblem: ports.versionProblem,
  })
  const variables = createFlowVariables({
    store: ports.stores.rollouts,
    sealer: ports.variableSealer ?? null,
    hasGroup: (group) => rights.membership.has(group),
    clock,
    events,
  })
  const rollouts = createRollouts({
    store: ports.stores.rollouts,
    snapshots: ports.stores.snapshots,
    fleet: ports.stores.fleet,
    enrolments: ports.stores.enrolments,
    membership: rights.membership,
    variables,
    clock,
    random,
    events,
  })

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
    loginScheme: (): LoginScheme =>
      loginSchemeOf(auth !== null, sso?.label ?? null, users.size > 0 || directory !== null),

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

    /** What resource servers call: password grant, authorization code, introspection, reports. */
    ...resourceServerFacade.calls,

    /** The trail: search, export and retention, each reporter at its pace (see createTrail). */
    trail,

    /** The configured resource servers and when each last called (since start or reload). */
    resourceServers: resourceServerFacade.resourceServers,

    /** Who makes a request (authenticate, authorize) and the revocation of a token (see createAccess). */
    ...access,

    /**
     * The session inventory and named API tokens. The command line acts with `operator`:
     * every right, no user.
     */
    tokens: createInventoryFacade(inventory, tokens),

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
      return replaceUsers(list, (kept) => inventory.purgeRemovedUsers(kept))
    },

    modules,

    /**
     * The roles and groups of instances that make a person's rights at each place: `set` takes
     * new ones (a reload), `setAssignments` the groups' assignments; `membership` says which
     * groups an instance is in (see createAccessRights).
     */
    rights,

    /**
     * Writes `access.reloaded`, naming what changed, when a reload of the settings changed any
     * role, group or user's grants (`before` and `after`: the settings' readings); says whether.
     */
    accessReloaded: accessAudit.reloaded,

    /**
     * The groups of instances: the settings' with the assignments over the API (`assign`,
     * `unassign`: `*` on flowadmin, audited), read from the store at `refresh` (at start, then now
     * and again, for the changes of other flowadmins sharing it).
     */
    groups: createGroupAssignments({
      store: ports.stores.groups,
      rights,
      events,
      clock,
      // Which rollout an instance's flows should be follows its groups.
      changed: fleet === null ? undefined : () => rollouts.settle(),
    }),

    /**
     * What `person` sees of their own access: their grants (a configured user's now; a person
     * signed in elsewhere, those of their token), the roles named, and what the token in use may
     * do on each scope.
     */
    accessOf(person: UserPrincipal): AccessView {
      const scope = person.scope ?? person.permissions
      const owner = users.get(person.username)?.permissions ?? scope
      return accessView(rights, person.username, owner, scope, clock.now() - person.signedInAt)
    },

    /**
     * Who holds which role where (see holdingsOf): the settings' grants and the API tokens'. Only
     * for `*` on flowadmin, as it shows everyone's.
     */
    async holdings(
      principal: Principal,
    ): Promise<Result<Holding[], Extract<AccessError, { code: 'forbidden' }>>> {
      if (!hasPermission(principal.permissions, '*')) return err({ code: 'forbidden', permission: '*' })
      const records = await tokens.list(null)
      return ok(
        holdingsOf(rights, {
          users: users.values(),
          identityProvider: ssoOptions?.permissions.map ?? null,
          directory: directoryOptions?.permissions.map ?? null,
          apiTokens: records.filter((record) => record.kind === 'api'),
        }),
      )
    },

    /** Rights where a request acts: at an instance, a group, anywhere (see createRightChecks). */
    ...createRightChecks({ rights, users, clock, events }),

    /**
     * Fleet mode (the `fleet` option), or null when it is off: the desired state the instances
     * poll, their reports and drift; `identities` who may act as which instance, enrolment,
     * rotation and revocation (see createFleetIdentities); `snapshots` the snapshots of flows
     * (see createSnapshots).
     */
    fleet:
      fleet === null || fleetIdentities === null
        ? null
        : { ...leaving(fleet, fleetIdentities, rollouts), snapshots, rollouts, variables },

    /** A person's sign-in on flowadmin's own page (see createSignInFacade). */
    signIn: createSignInFacade({
      signIn,
      handover,
      users,
      authEnabled: auth !== null,
      directory: directory !== null,
      clock,
      events,
    }),

    /** People's second factors (see createMfaFacade). */
    mfa: createMfaFacade(factors, clock),

    /** People's passkeys (see createPasskeyFacade). */
    passkeys: createPasskeyFacade(passkeys, clock),

    /** Deletes what has expired, in bounded batches (see createSweep). */
    sweep: createSweep({
      tokens,
      throttle,
      sso: ports.stores.sso,
      signIn,
      enrolments: ports.stores.enrolments,
      clock,
    }),
  }
}

export type Core = ReturnType<typeof createCore>
