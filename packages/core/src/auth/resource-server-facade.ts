import type { AccessAudit } from '../access/audit.js'
import type { Place } from '../access/rights.js'
import { err, ok, type Result } from '../errors.js'
import { type ClientIdentity, type InstanceMismatch, instanceOfClientId } from '../fleet/identity-rules.js'
import type { InstanceIdentities } from '../fleet/instance-identities.js'
import type { Clock, CoreObserver, EventSink, TokenKind } from '../ports/index.js'
import type { Audiences } from '../tokens/audience.js'
import type { IssuedToken, Tokens } from '../tokens/tokens.js'
import type { TooManyEvents, Trail, TrailReport } from '../trail/trail.js'
import type { Handover, SsoExchangeError } from './handover.js'
import type { Login, LoginError, LoginRequest } from './login.js'
import type {
  ClientError,
  ResourceServerActivity,
  ResourceServerOptions,
  ResourceServers,
} from './resource-servers.js'

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
      /**
       * The token's rights now at the asking instance: its scope ∩ its user's rights there (the
       * grants whose scope holds that instance). Never empty: without any it is not active.
       */
      permissions: string[]
      clientId: string
      /**
       * The token's audience: the resource server that asked, or the enrolled instance that asked
       * (or its resource server's, a token for all its instances). Any other is not active.
       */
      audience: string
      kind: TokenKind
      /** Milliseconds since the epoch. */
      issuedAt: number
      /** Milliseconds since the epoch; null: never expires. */
      expiresAt: number | null
    }

export interface ResourceServerFacadeDeps {
  /** false when `adminAuth` is not configured: no resource server is then known. */
  authEnabled: boolean
  servers: ResourceServers
  /** The resource servers' ids as audiences of tokens, replaced with the servers. */
  audiences: Audiences
  login: Login
  handover: Handover
  tokens: Tokens
  trail: Trail
  /** Enrolled instances' own credentials (client id `<resource server>/<instance>`). */
  identities: InstanceIdentities
  /** Where a report naming another instance than its credential's is told. */
  events: EventSink
  clock: Clock
  observer?: CoreObserver | undefined
  /** Where a live token refused for want of a grant at the asking place is written. */
  accessAudit?: AccessAudit | undefined
}

/** What resource servers (a fleet's Node-RED instances) call, each once its credentials are proven. */
export function createResourceServerFacade(deps: ResourceServerFacadeDeps) {
  const { servers } = deps
  /** The resource server a client id belongs to: its own id, or an instance's server. */
  const serverOf = (clientId: string) => instanceOfClientId(clientId)?.resourceServer ?? clientId
  /**
   * Authenticates a resource server with its own id and secret, or one of its enrolled instances
   * with its credential (`<resource server>/<instance>`): who it is, or `invalid_client`.
   */
  async function authenticateClient(
    client: ClientCredentials | null,
    address: string,
  ): Promise<Result<ClientIdentity, ClientError>> {
    if (!deps.authEnabled || client === null) return err({ code: 'invalid_client' })
    // Resource server ids never hold "/": a client id that does is an instance's.
    if (client.id.includes('/')) return deps.identities.authenticate(client.id, client.secret, address)
    const authenticated = await servers.authenticate(client.id, client.secret, address)
    if (!authenticated.ok) return authenticated
    return ok({ clientId: client.id, resourceServer: client.id, instance: null, audience: client.id })
  }

  /**
   * As authenticateClient; besides, a `client_id` in the request must be the authenticated one
   * (an instance's, or its resource server's id).
   */
  async function requestingClient(
    client: ClientCredentials | null,
    requested: string | undefined,
    address: string,
  ): Promise<Result<ClientIdentity, ClientError>> {
    const authenticated = await authenticateClient(client, address)
    if (!authenticated.ok) return authenticated
    const { clientId, resourceServer } = authenticated.value
    return requested !== undefined && requested !== clientId && requested !== resourceServer
      ? err({ code: 'invalid_client' })
      : authenticated
  }

  /**
   * What resource server `audience` learns of `token`: its state now, through the same rules as
   * every request (expired, revoked, user removed, password changed, or no rights left: not
   * active). Asking is not a use of the token: its last use stays as its own requests wrote it.
   */
  async function introspectFor(
    asker: ClientIdentity,
    token: string,
    address: string | null,
  ): Promise<Introspection> {
    // Only the token's own audience learns that it is live; to any other it is as unknown. An
    // enrolled instance is its own audience, and one of its resource server's instances: a token
    // for all of them (an API token, a session of the shared secret) is live there too. Its rights
    // are those at the asking instance (known from its credential); a resource server asking with
    // its shared secret could be any of its instances: only grants everywhere count.
    const audiences =
      asker.audience === asker.resourceServer ? asker.audience : [asker.audience, asker.resourceServer]
    const place: Place =
      asker.instance === null ? { kind: 'fleet' } : { kind: 'instance', instance: asker.instance }
    const live = await deps.tokens.authenticate(token, null, audiences, place)
    const active = live !== null && live.permissions.length > 0
    deps.observer?.introspection?.(active ? 'active' : 'inactive')
    // Live, but its person holds no grant here: a refusal because of scope, for the trail.
    if (live !== null && !active)
      deps.accessAudit?.refused({
        tokenId: live.record.id,
        username: live.record.username,
        clientId: asker.clientId,
        resourceServer: asker.resourceServer,
        instance: asker.instance,
        address,
      })
    if (!active) return { active: false }
    const { record } = live
    return {
      active: true,
      username: record.username,
      permissions: live.permissions,
      clientId: record.clientId,
      audience: record.audience ?? asker.audience,
      kind: record.kind,
      issuedAt: record.createdAt,
      expiresAt: record.expiresAt,
    }
  }

  const calls = {
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
      const id = await requestingClient(client, request.clientId, address)
      if (!id.ok) return id
      const { clientId, audience } = id.value
      return deps.login({ ...request, clientId }, address, agent, clientId, audience)
    },

    /**
     * Whether a resource server may be sent a person's authorization code at `redirectUri`: the
     * server exists and registered exactly that URI. Checked before a sign-in begins, so an
     * unregistered URI never receives anything.
     */
    redirectRegistered: (clientId: string, redirectUri: string): boolean =>
      servers.redirects(serverOf(clientId), redirectUri),

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
      const id = await requestingClient(client, request.clientId, address)
      if (!id.ok) return id
      const { code, redirectUri, codeVerifier } = request
      const { clientId, audience } = id.value
      return deps.handover.redeem(clientId, code, redirectUri, codeVerifier, address, agent, audience)
    },

    /**
     * Token introspection (RFC 7662) for a resource server: refused (`invalid_client`) unless its
     * credentials hold; then `introspect(token)` answers the token's state now. Authenticating
     * first lets the caller read the request's body only for a proven client.
     */
    async introspector(
      client: ClientCredentials | null,
      address: string,
    ): Promise<Result<{ introspect(token: string): Promise<Introspection> }, ClientError>> {
      const id = await authenticateClient(client, address)
      if (!id.ok) {
        const { code } = id.error
        deps.observer?.introspection?.(code === 'temporarily_unavailable' ? 'shed' : code)
        return id
      }
      return ok({ introspect: (token: string) => introspectFor(id.value, token, address) })
    },

    /** Token introspection in one call: see `introspector`. */
    async introspect(
      client: ClientCredentials | null,
      token: string,
      address: string,
    ): Promise<Result<Introspection, ClientError>> {
      const introspector = await calls.introspector(client, address)
      return introspector.ok ? ok(await introspector.value.introspect(token)) : introspector
    },

    /**
     * A resource server's way to report its instances' events, once its credentials are proven
     * and its allowance, as far as this process knows, takes more: `report` appends them to the
     * trail under that server (never one the reports name), when its allowance takes them, and
     * returns how many were kept. Authenticating first lets the caller read a report only from a
     * proven client, and one not told to wait.
     */
    async reporter(
      client: ClientCredentials | null,
      address: string,
    ): Promise<
      Result<
        {
          report(reports: readonly TrailReport[]): Promise<Result<number, TooManyEvents | InstanceMismatch>>
        },
        ClientError | TooManyEvents
      >
    > {
      const id = await authenticateClient(client, address)
      if (!id.ok) return id
      // A resource server with its shared secret reports for its instances, and answers for
      // them; an enrolled instance reports for itself alone, under its own id.
      const { clientId, resourceServer, instance } = id.value
      const source = { reporter: clientId, server: resourceServer, instance }
      const wait = deps.trail.waitOf(source.reporter)
      if (wait !== null) return err({ code: 'too_many_events', retryAfter: wait })
      return ok({
        report: async (reports: readonly TrailReport[]) => {
          // An enrolled instance reports its own events only: one naming another is refused whole.
          const other = instance === null ? undefined : reports.find((report) => report.instance !== instance)
          if (other === undefined) return deps.trail.ingest(source, reports)
          deps.events.emit({
            type: 'fleet.instance_mismatch',
            at: deps.clock.now(),
            instance: instance as string,
            resourceServer,
            requested: other.instance,
            username: null,
            clientId,
            address,
          })
          return err({
            code: 'instance_mismatch' as const,
            instance: other.instance,
            where: 'request' as const,
          })
        },
      })
    },
  }

  return {
    authenticateClient,
    calls,
    /** The configured resource servers and when each last called (since start or reload). */
    resourceServers: {
      activity: (): ResourceServerActivity[] => servers.activity(),
      /** Replaces them (a reload): every secret is verified again on its next use. */
      set: (list: readonly ResourceServerOptions[]) => {
        deps.audiences.set(list)
        servers.set(list)
      },
    },
  }
}
