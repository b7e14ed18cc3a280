import { type DomainError, err, ok, type Result } from '../errors.js'
import type { AttemptOutcome, Clock, Digest, EventSink, PasswordVerifier } from '../ports/index.js'
import { addressScope } from './address-scope.js'
import type { LoginQueue } from './login-queue.js'
import type { Throttle } from './throttle.js'

/**
 * A resource server: a program that asks flowadmin about the tokens its callers present (a
 * Node-RED instance through `@flowadmin/node-red`), authenticated by its id and a secret whose
 * hash is in the settings (`adminAuth.resourceServers`).
 */
export interface ResourceServerOptions {
  id: string
  /** A hash the password verifier understands (`flowadmin hash-pw`), never the secret itself. */
  secret: string
  /**
   * Where `GET /auth/authorize` may send a person back with an authorization code (a Node-RED
   * editor's sign-in): absolute URLs, compared exactly. None: the server cannot sign people in.
   */
  redirectUris?: readonly string[] | undefined
}

export type ClientError = Extract<
  DomainError,
  { code: 'invalid_client' | 'throttled' | 'temporarily_unavailable' }
>

/** What an id and secret were found to be. */
export interface AuthenticatedClient {
  id: string
}

/** How a resource server last called, for people who look after the fleet. */
export interface ResourceServerActivity {
  id: string
  /** When it last authenticated (ms since the epoch), or null when not since start or reload. */
  lastCallAt: number | null
}

/** Seconds a call shed because too many attempts of its key are in flight is told to wait. */
const BUSY_RETRY_AFTER = 1

/**
 * The address a resource server's attempts count under: the client's own, in a namespace of its
 * own, so the wrong passwords of users logging in through that client (from the same address) and
 * its own secret never share a counter.
 */
const clientAddressKey = (address: string) => `resource-server ${addressScope(address)}`

/**
 * Throttle keys of resource servers: a prefix no username can carry (settings refuse control
 * characters), so a server and a user of the same name never share a counter.
 */
const throttleName = (id: string) => `\u0000resource-server\u0000${id}`

export interface ResourceServerDeps {
  verifier: PasswordVerifier
  /** The login queue: a secret costs one password verification, and waits its turn like a login. */
  queue: LoginQueue
  throttle: Throttle
  digest: Digest
  events: EventSink
  clock: Clock
}

/**
 * Authenticates resource servers (RFC 6749 §2.3.1, HTTP Basic). The first call with a secret
 * costs one verification, throttled and audited like a login; once a secret is verified, its
 * SHA-256 is kept in memory until the servers are set again (a reload), so later calls with it
 * cost one hash: a fleet asks about every request.
 */
export function createResourceServers(
  deps: ResourceServerDeps,
  configured: readonly ResourceServerOptions[],
) {
  const { verifier, queue, throttle, digest, events, clock } = deps
  let servers = new Map<string, ResourceServerOptions>()
  /** SHA-256 of the secret verified for each id; cleared whenever the servers are set. */
  let verified = new Map<string, string>()
  const lastCall = new Map<string, number>()

  const set = (list: readonly ResourceServerOptions[]) => {
    servers = new Map(list.map((server) => [server.id, server]))
    verified = new Map()
    for (const id of lastCall.keys()) if (!servers.has(id)) lastCall.delete(id)
  }
  set(configured)

  /** One verification, whatever the id, unless the login queue is full. */
  async function verify(
    id: string,
    secret: string,
    address: string,
    known: boolean,
  ): Promise<Result<AuthenticatedClient, ClientError>> {
    const server = servers.get(id)
    const verification = queue.run(known ? 'known' : 'general', () =>
      verifier.verify(server?.secret ?? verifier.dummyHash, secret),
    )
    const actor = { username: null, clientId: id, address }
    if (verification === null) {
      events.emit({ type: 'client.shed', at: clock.now(), retryAfter: BUSY_RETRY_AFTER, ...actor })
      return err({ code: 'temporarily_unavailable', retryAfter: BUSY_RETRY_AFTER })
    }
    // A reload while the secret was checked (servers set again) decides against the old secret.
    if (!(await verification) || server === undefined || servers.get(id) !== server) {
      events.emit({ type: 'client.failed', at: clock.now(), ...actor })
      return err({ code: 'invalid_client' })
    }
    // Remembered under the secret it was verified for: a reload (set) forgets it.
    verified.set(id, await digest.sha256(secret))
    events.emit({ type: 'client.authenticated', at: clock.now(), ...actor })
    return ok({ id })
  }

  return {
    /** Replaces the configured servers; every secret is verified again on its next use. */
    set,

    /** Authenticates `id` and `secret` presented from `address`. */
    async authenticate(
      id: string,
      secret: string,
      address: string,
    ): Promise<Result<AuthenticatedClient, ClientError>> {
      const known = verified.get(id)
      // Checked again after the hash: a reload in between forgets the secret it was verified for.
      if (known !== undefined && known === (await digest.sha256(secret)) && verified.get(id) === known) {
        lastCall.set(id, clock.now())
        return ok({ id })
      }
      // Counted apart from the logins of the same address (a Node-RED instance's users reach
      // flowadmin from the instance's address): their wrong passwords never lock the instance out.
      const decision = await throttle.begin(throttleName(id), clientAddressKey(address))
      if (decision.outcome === 'throttled') {
        events.emit({
          type: 'client.throttled',
          at: clock.now(),
          retryAfter: decision.retryAfter,
          username: null,
          clientId: id,
          address,
        })
        return err({ code: 'throttled', retryAfter: decision.retryAfter })
      }
      if (decision.outcome === 'busy')
        return err({ code: 'temporarily_unavailable', retryAfter: BUSY_RETRY_AFTER })
      let outcome: AttemptOutcome = 'abandoned'
      try {
        const result = await verify(id, secret, address, decision.known)
        outcome = result.ok ? 'succeeded' : result.error.code === 'invalid_client' ? 'failed' : 'abandoned'
        if (result.ok) lastCall.set(id, clock.now())
        return result
      } finally {
        await throttle.finish(decision.attempt, outcome)
      }
    },

    /**
     * Whether `redirectUri` is registered for the server `id`: exactly one of its `redirectUris`,
     * character for character (RFC 6749 §3.1.2.3; no prefix, pattern or normalisation).
     */
    redirects(id: string, redirectUri: string): boolean {
      return servers.get(id)?.redirectUris?.includes(redirectUri) ?? false
    },

    /** Every configured server with its last call in this process, by id. */
    activity(): ResourceServerActivity[] {
      return [...servers.keys()].sort().map((id) => ({ id, lastCallAt: lastCall.get(id) ?? null }))
    },
  }
}

export type ResourceServers = ReturnType<typeof createResourceServers>
