import { equalInConstantTime } from '../auth/machine-secret.js'
import type { ClientError, ResourceServerOptions } from '../auth/resource-servers.js'
import { err, ok, type Result } from '../errors.js'
import type {
  Actor,
  Clock,
  Digest,
  EnrolmentStore,
  EventSink,
  FleetStore,
  InstanceCredential,
  RandomSource,
} from '../ports/index.js'
import {
  type ClientIdentity,
  INSTANCE_SECRET_PREFIX,
  instanceClientId,
  instanceOfClientId,
  MAX_SECRET_LENGTH,
  newSecret,
} from './identity-rules.js'

// Each enrolled instance's credential: how it authenticates (its id comes from it, never from what
// it says), its rotation, its revocation. A plain resource server's id and secret stay the
// resource server's business (see createResourceServers).

/** An instance's enrolment as `GET /fleet/instances` shows it (times in ms since the epoch). */
export interface EnrolmentState {
  at: number
  by: string | null
  rotatedAt: number | null
  revokedAt: number | null
}

export interface InstanceIdentityDeps {
  store: EnrolmentStore
  fleet: FleetStore
  /** The configured resource server `id`, or null. */
  server: (id: string) => ResourceServerOptions | null
  /** Counts a refused credential of client `id` (see ResourceServers.refuse). */
  refuse: (id: string, address: string) => Promise<Result<never, ClientError>>
  /** Remembers a call of resource server `id`. */
  called: (id: string) => void
  /** Ends the sessions issued through client `clientId`; how many. */
  endSessions: (clientId: string) => Promise<number>
  clock: Clock
  random: RandomSource
  digest: Digest
  events: EventSink
}

/** The audience of the tokens issued through an instance of `server`. */
export const audienceOfInstance = (server: ResourceServerOptions, instance: string) =>
  server.sharedAudience === true ? server.id : instanceClientId(server.id, instance)

/**
 * How long a proven credential is taken without reading the store again, in ms: an instance asks
 * about every request of its editors. A revocation or rotation here forgets it at once; another
 * flowadmin sharing the store sees it within this time.
 */
export const CREDENTIAL_CACHE_MS = 1000
/** Most proven credentials kept; past it they are read again. */
const MAX_CACHED = 10_000

/** Enrolled instances' credentials: see the file's first comment. */
export function createInstanceIdentities(deps: InstanceIdentityDeps) {
  const { store, clock, digest, events } = deps
  /** The secret digest last proven for each instance, and until when it is taken as it is. */
  const proven = new Map<string, { resourceServer: string; hash: string; until: number }>()
  const remember = (instance: string, resourceServer: string, hash: string) => {
    if (proven.size >= MAX_CACHED) proven.clear()
    proven.set(instance, { resourceServer, hash, until: clock.now() + CREDENTIAL_CACHE_MS })
  }
  const identityOf = (server: ResourceServerOptions, clientId: string, instance: string): ClientIdentity => ({
    clientId,
    resourceServer: server.id,
    instance,
    audience: audienceOfInstance(server, instance),
  })

  /** The live credential of this client id, when it is an enrolled instance's of a fleet server. */
  const liveCredential = async (resourceServer: string, instance: string) => {
    const server = deps.server(resourceServer)
    if (server === null || server.fleet !== true) return null
    const credential = await store.credential(instance)
    if (credential === null || credential.revokedAt !== null || credential.resourceServer !== resourceServer)
      return null
    return { server, credential }
  }

  return {
    /**
     * Authenticates an instance's own credential: `clientId` `<resource server>/<instance>` and its
     * secret. A rotation's new secret, used the first time, becomes the only one. Refused
     * (`invalid_client`, counted like a resource server's wrong secret) when the instance is not
     * enrolled, revoked, or its resource server not marked for the fleet.
     */
    async authenticate(
      clientId: string,
      secret: string,
      address: string,
    ): Promise<Result<ClientIdentity, ClientError>> {
      const named = instanceOfClientId(clientId)
      if (named === null || secret.length > MAX_SECRET_LENGTH) return deps.refuse(clientId, address)
      const presented = await digest.sha256(secret)
      const known = proven.get(named.instance)
      const configured = deps.server(named.resourceServer)
      if (
        known !== undefined &&
        known.until > clock.now() &&
        known.resourceServer === named.resourceServer &&
        configured?.fleet === true &&
        equalInConstantTime(known.hash, presented)
      ) {
        deps.called(configured.id)
        return ok(identityOf(configured, clientId, named.instance))
      }
      const live = await liveCredential(named.resourceServer, named.instance)
      if (live === null) return deps.refuse(clientId, address)
      const { server, credential } = live
      const current = equalInConstantTime(credential.secretHash, presented)
      const next = credential.nextHash !== null && equalInConstantTime(credential.nextHash, presented)
      if (!current && !next) return deps.refuse(clientId, address)
      if (next && (await store.promote(named.instance, presented, clock.now()))) {
        // The old secret stops here at once.
        proven.delete(named.instance)
        events.emit({
          type: 'fleet.credential_rotated',
          at: clock.now(),
          instance: named.instance,
          resourceServer: server.id,
          username: null,
          clientId,
          address,
        })
      }
      remember(named.instance, server.id, presented)
      deps.called(server.id)
      return ok(identityOf(server, clientId, named.instance))
    },

    /** The instance's credential (revoked or not), or null: a shared-secret instance has none. */
    credential: (instance: string): Promise<InstanceCredential | null> => store.credential(instance),

    /** Each instance's enrolment, by id. */
    async enrolments(): Promise<Map<string, EnrolmentState>> {
      return new Map(
        (await store.credentials()).map((credential) => [
          credential.instance,
          {
            at: credential.enrolledAt,
            by: credential.enrolledBy,
            rotatedAt: credential.rotatedAt,
            revokedAt: credential.revokedAt,
          },
        ]),
      )
    },

    /** An instance asks for a new secret (asked to or not): the old one works until the new one is used. */
    async renew(
      identity: ClientIdentity,
    ): Promise<Result<{ clientId: string; clientSecret: string }, ClientError>> {
      if (identity.instance === null) return err({ code: 'invalid_client' })
      const clientSecret = newSecret(deps.random, INSTANCE_SECRET_PREFIX)
      if (!(await store.setNext(identity.instance, await digest.sha256(clientSecret))))
        return err({ code: 'invalid_client' })
      return ok({ clientId: identity.clientId, clientSecret })
    },

    /** An operator asks an instance to rotate its credential: false when it holds none that is live. */
    async askRotate(instance: string, actor: Actor): Promise<boolean> {
      const credential = await store.credential(instance)
      if (credential === null || !(await store.askRotate(instance))) return false
      events.emit({
        type: 'fleet.rotation_asked',
        at: clock.now(),
        instance,
        resourceServer: credential.resourceServer,
        ...actor,
      })
      return true
    },

    /**
     * Revokes an instance (enrolled, or known to the fleet with the shared secret): its credential
     * is refused at once, the sessions issued through it end, and the shared secret may no longer
     * act as it. Returns its resource server, or null when there is no such instance.
     */
    async revoke(instance: string, actor: Actor): Promise<string | null> {
      const credential = await store.credential(instance)
      const resourceServer = credential?.resourceServer ?? (await deps.fleet.find(instance))?.resourceServer
      if (resourceServer === undefined) return null
      proven.delete(instance)
      const changed = await store.revoke(instance, resourceServer, clock.now())
      proven.delete(instance)
      const sessionsEnded = await deps.endSessions(instanceClientId(resourceServer, instance))
      if (changed || sessionsEnded > 0) {
        events.emit({
          type: 'fleet.instance_revoked',
          at: clock.now(),
          instance,
          resourceServer,
          sessionsEnded,
          ...actor,
        })
      }
      return resourceServer
    },
  }
}

export type InstanceIdentities = ReturnType<typeof createInstanceIdentities>
