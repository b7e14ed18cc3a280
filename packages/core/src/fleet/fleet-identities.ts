import { equalInConstantTime } from '../auth/machine-secret.js'
import type { ClientCredentials } from '../auth/resource-server-facade.js'
import type { ClientError, ResourceServerOptions } from '../auth/resource-servers.js'
import { err, ok, type Result } from '../errors.js'
import type { Actor, Clock, EventSink } from '../ports/index.js'
import type { DesiredState } from './desired-state.js'
import type { Enrolments } from './enrolments.js'
import type { Fleet, InstanceConflict, InstanceView } from './fleet.js'
import type { ClientIdentity, InstanceMismatch } from './identity-rules.js'
import type { EnrolmentState, InstanceIdentities } from './instance-identities.js'

// The fleet's routes and its identities together: who may act as which instance, the instances'
// enrolment in the fleet's view, rotation and revocation.

/** An instance as the fleet view shows it, with its enrolment (null: it uses the shared secret). */
export type IdentifiedInstanceView = InstanceView & { revoked: boolean; enrolment: EnrolmentState | null }

/** The instance a request acts as, once its credential and the id it names agree. */
export interface InstanceCaller {
  id: string
  resourceServer: string
  /** Its own credential proved it (not the resource server's shared secret). */
  enrolled: boolean
  identity: ClientIdentity
}

export interface FleetIdentityDeps {
  fleet: Fleet
  identities: InstanceIdentities
  enrolments: Enrolments
  authenticateClient: (
    client: ClientCredentials | null,
    address: string,
  ) => Promise<Result<ClientIdentity, ClientError>>
  server: (id: string) => ResourceServerOptions | null
  /** Notes a call of resource server `id` (see ResourceServers.called). */
  called: (id: string) => void
  clock: Clock
  events: EventSink
}

/**
 * How long a resource server's shared secret, once accepted, is taken again without hashing it,
 * in ms: every poll of each of its instances presents it. A reload that changes the server
 * forgets it at once.
 */
export const SHARED_SECRET_CACHE_MS = 1000

/** The fleet with its instances' identities: see the file's first comment. */
export function createFleetIdentities(deps: FleetIdentityDeps) {
  const { fleet, identities, clock, events } = deps
  /** Each resource server's shared secret last accepted, with its options then, until when. */
  const accepted = new Map<
    string,
    { secret: string; options: ResourceServerOptions; identity: ClientIdentity; until: number }
  >()

  /**
   * Authenticates a caller of the fleet's routes: a resource server marked for the fleet (its
   * shared secret) or one of its enrolled instances; any other is `invalid_client`.
   */
  async function authenticateClient(
    client: ClientCredentials | null,
    address: string,
  ): Promise<Result<ClientIdentity, ClientError>> {
    const known = client === null ? undefined : accepted.get(client.id)
    if (known !== undefined) {
      if (
        known.until > clock.now() &&
        deps.server(known.identity.resourceServer) === known.options &&
        equalInConstantTime(known.secret, (client as ClientCredentials).secret)
      ) {
        deps.called(known.identity.resourceServer)
        return ok(known.identity)
      }
      // Ended, reloaded or another secret: forgotten, and checked the whole way below.
      accepted.delete((client as ClientCredentials).id)
    }
    // The settings as they are when the secret is checked: a reload meanwhile is not cached as them.
    const before = client === null ? null : deps.server(client.id)
    const identity = await deps.authenticateClient(client, address)
    if (!identity.ok) return identity
    const options = deps.server(identity.value.resourceServer)
    if (options?.fleet !== true) return err({ code: 'invalid_client' })
    // A shared secret (an enrolled instance's credential has its own, shorter-lived proof).
    if (client !== null && identity.value.instance === null && options === before) {
      const until = clock.now() + SHARED_SECRET_CACHE_MS
      accepted.set(client.id, { secret: client.secret, options, identity: identity.value, until })
    }
    return identity
  }

  /**
   * The instance a request of `identity` acts as when it names `id`: an enrolled instance only as
   * itself, the shared secret only as an instance that holds no credential (enrolled or revoked).
   * Anything else is `instance_mismatch`, audited.
   */
  async function callerOf(
    identity: ClientIdentity,
    id: string,
    address: string,
  ): Promise<Result<InstanceCaller, InstanceMismatch>> {
    const own = identity.instance
    const allowed = own !== null ? own === id : (await identities.credential(id)) === null
    if (allowed) return ok({ id, resourceServer: identity.resourceServer, enrolled: own !== null, identity })
    events.emit({
      type: 'fleet.instance_mismatch',
      at: clock.now(),
      instance: own ?? identity.resourceServer,
      resourceServer: identity.resourceServer,
      requested: id,
      username: null,
      clientId: identity.clientId,
      address,
    })
    return err({ code: 'instance_mismatch', instance: id, where: 'request' })
  }

  return {
    authenticateClient,
    callerOf,

    /**
     * A poll's desired state, and whether the instance is asked to rotate its credential.
     * `current`: see Fleet.poll.
     */
    async poll(
      caller: InstanceCaller,
      current?: string,
    ): Promise<Result<{ state: DesiredState; rotate: boolean }, InstanceConflict>> {
      const state = await fleet.poll(caller.id, caller.resourceServer, current)
      if (!state.ok) return state
      const rotate = caller.enrolled && (await identities.credential(caller.id))?.rotateAsked === true
      return ok({ state: state.value, rotate })
    },

    /** Every instance with its drift and enrolment; a revoked one is never connected. */
    async instances(): Promise<IdentifiedInstanceView[]> {
      const [views, enrolled] = await Promise.all([fleet.instances(), identities.enrolments()])
      const listed = views.map((view) => {
        const enrolment = enrolled.get(view.id) ?? null
        const revoked = enrolment?.revokedAt != null
        return { ...view, connected: view.connected && !revoked, revoked, enrolment }
      })
      return listed
    },

    /** See InstanceIdentities.revoke; its lease ends too. Null when there is no such instance. */
    async revoke(id: string, actor: Actor): Promise<string | null> {
      const resourceServer = await identities.revoke(id, actor)
      if (resourceServer !== null) await fleet.release(id, resourceServer)
      return resourceServer
    },

    askRotate: identities.askRotate,
    renew: identities.renew,
    enrolments: deps.enrolments,
  }
}

export type FleetIdentities = ReturnType<typeof createFleetIdentities>

export type { InstanceMismatch }
