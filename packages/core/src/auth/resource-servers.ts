import { type DomainError, err, ok, type Result } from '../errors.js'
import type { AttemptOutcome, Clock, Digest, EventSink, PasswordVerifier } from '../ports/index.js'
import { addressScope } from './address-scope.js'
import type { LoginQueue } from './login-queue.js'
import { equalInConstantTime, isSecretDigest } from './machine-secret.js'
import type { Throttle } from './throttle.js'

/**
 * A resource server: a program that asks flowadmin about the tokens its callers present (a
 * Node-RED instance through `@flowadmin/node-red`), authenticated by its id and a machine secret
 * whose digest is in the settings (`adminAuth.resourceServers`).
 */
export interface ResourceServerOptions {
  id: string
  /**
   * The secret's digest, `sha256:<hex>` (`flowadmin secret`), or, from before machine secrets, a
   * hash the password verifier understands (`flowadmin hash-pw`); never the secret itself.
   */
  secret: string
  /**
   * Where `GET /auth/authorize` may send a person back with an authorization code (a Node-RED
   * editor's sign-in): absolute URLs, compared exactly. None: the server cannot sign people in.
   */
  redirectUris?: readonly string[] | undefined
  /**
   * Its instances may join the fleet (poll, report) and enrol with credentials of their own.
   * Without it the fleet's routes refuse it.
   */
  fleet?: boolean | undefined
  /**
   * The tokens issued through any of its instances are for all of them (the resource server's
   * audience), as before instances had identities: the weaker choice. Default false: a token
   * issued through an instance is for that instance alone.
   */
  sharedAudience?: boolean | undefined
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
  /**
   * What its settings hold: a machine secret's digest (`flowadmin secret`), or a password hash from
   * before them, which wrong secrets can lock out for a while after each start or reload.
   */
  secret: 'digest' | 'password_hash'
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
  /** The login queue: a hashed secret costs one password verification, and waits its turn like a login. */
  queue: LoginQueue
  throttle: Throttle
  digest: Digest
  events: EventSink
  clock: Clock
}

/** A configured server and the hex SHA-256 of its secret when the settings hold that digest. */
interface Configured {
  options: ResourceServerOptions
  digest: string | null
}

/**
 * Authenticates resource servers (RFC 6749 §2.3.1, HTTP Basic). Their secrets are machine
 * secrets: the right one is never throttled. A secret whose digest is configured costs one
 * SHA-256, compared in constant time. A secret configured as a password hash (argon2 or bcrypt,
 * from before machine secrets) costs one verification the first time; once verified, its SHA-256
 * is kept in memory until the servers are set again (a reload), so later calls cost one hash: a
 * fleet asks about every request. Wrong secrets and unknown ids are counted and throttled like
 * logins (and audited), under keys of their own. A throttled call is refused without a
 * verification: so a hashed secret not verified yet is throttled like a password (its digest
 * format is the cure), and guesses of it cost nothing once throttled.
 */
export function createResourceServers(
  deps: ResourceServerDeps,
  configured: readonly ResourceServerOptions[],
) {
  const { verifier, queue, throttle, digest, events, clock } = deps
  let servers = new Map<string, Configured>()
  /** Whether any secret is a password hash: unknown ids then cost a verification, like those. */
  let hashed = false
  /** SHA-256 of the secret accepted for each id; cleared whenever the servers are set. */
  let verified = new Map<string, string>()
  const lastCall = new Map<string, number>()

  const set = (list: readonly ResourceServerOptions[]) => {
    servers = new Map(
      list.map((options) => [
        options.id,
        { options, digest: isSecretDigest(options.secret) ? options.secret.slice('sha256:'.length) : null },
      ]),
    )
    hashed = [...servers.values()].some((server) => server.digest === null)
    verified = new Map()
    for (const id of lastCall.keys()) if (!servers.has(id)) lastCall.delete(id)
  }
  set(configured)

  const actorOf = (id: string, address: string) => ({ username: null, clientId: id, address })

  /** Accepts `id`: audited the first time after a start or reload, remembered as its last call. */
  const accept = (id: string, presented: string, address: string): Result<AuthenticatedClient, never> => {
    if (!verified.has(id)) {
      verified.set(id, presented)
      events.emit({ type: 'client.authenticated', at: clock.now(), ...actorOf(id, address) })
    }
    lastCall.set(id, clock.now())
    return ok({ id })
  }

  /**
   * One password verification of a hashed secret (or of the dummy hash, for an unknown id), unless
   * the login queue is full: true when it is the configured server's secret and no reload replaced
   * it meanwhile.
   */
  async function verify(
    id: string,
    secret: string,
    address: string,
    lane: 'known' | 'general',
  ): Promise<Result<boolean, ClientError>> {
    const server = servers.get(id)
    const verification = queue.run(lane, () =>
      verifier.verify(server?.options.secret ?? verifier.dummyHash, secret),
    )
    if (verification === null) {
      events.emit({
        type: 'client.shed',
        at: clock.now(),
        retryAfter: BUSY_RETRY_AFTER,
        ...actorOf(id, address),
      })
      return err({ code: 'temporarily_unavailable', retryAfter: BUSY_RETRY_AFTER })
    }
    // A reload while the secret was checked (servers set again) decides against the old secret.
    const right = await verification
    return ok(right && server !== undefined && servers.get(id) === server)
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
      const server = servers.get(id)
      const presented = await digest.sha256(secret)
      // The configured digest, or the hashed secret verified since the servers were set. Looked up
      // after the hash: a reload in between forgets the secret verified for the old servers.
      const expected = server?.digest ?? verified.get(id)
      if (expected !== undefined && servers.get(id) === server && equalInConstantTime(expected, presented)) {
        return accept(id, presented, address)
      }
      const actor = actorOf(id, address)
      // Counted apart from the logins of the same address (a Node-RED instance's users reach
      // flowadmin from the instance's address): their wrong passwords never lock the instance out.
      // Throttled, a call is refused unverified like a login: the right digest secret and a hashed
      // one verified since the servers were set were accepted above; a hashed one not verified yet
      // is throttled like a password.
      const decision = await throttle.begin(throttleName(id), clientAddressKey(address))
      if (decision.outcome === 'throttled') {
        events.emit({ type: 'client.throttled', at: clock.now(), retryAfter: decision.retryAfter, ...actor })
        return err({ code: 'throttled', retryAfter: decision.retryAfter })
      }
      if (decision.outcome !== 'proceed')
        return err({ code: 'temporarily_unavailable', retryAfter: BUSY_RETRY_AFTER })
      let outcome: AttemptOutcome = 'abandoned'
      try {
        // A configured digest was compared above: what reaches here is wrong. An unknown id costs
        // what a wrong secret of a configured one costs (a verification while any is hashed).
        let result: Result<boolean, ClientError> = ok(false)
        if (server === undefined ? hashed : server.digest === null)
          result = await verify(id, secret, address, decision.known ? 'known' : 'general')
        if (!result.ok) return result
        if (result.value) {
          outcome = 'succeeded'
          return accept(id, presented, address)
        }
        outcome = 'failed'
        events.emit({ type: 'client.failed', at: clock.now(), ...actor })
        return err({ code: 'invalid_client' })
      } finally {
        await throttle.finish(decision.attempt, outcome)
      }
    },

    /** The configured server `id`'s options, or null. */
    find(id: string): ResourceServerOptions | null {
      return servers.get(id)?.options ?? null
    },

    /**
     * Counts a refused credential presented as client `id` (an enrolled instance's wrong or
     * revoked secret) like a resource server's wrong secret: `client.failed`, then
     * `invalid_client`; `throttled` while too many were refused from its address.
     */
    async refuse(id: string, address: string): Promise<Result<never, ClientError>> {
      const actor = actorOf(id, address)
      const decision = await throttle.begin(throttleName(id), clientAddressKey(address))
      if (decision.outcome === 'throttled') {
        events.emit({ type: 'client.throttled', at: clock.now(), retryAfter: decision.retryAfter, ...actor })
        return err({ code: 'throttled', retryAfter: decision.retryAfter })
      }
      if (decision.outcome !== 'proceed')
        return err({ code: 'temporarily_unavailable', retryAfter: BUSY_RETRY_AFTER })
      await throttle.finish(decision.attempt, 'failed')
      events.emit({ type: 'client.failed', at: clock.now(), ...actor })
      return err({ code: 'invalid_client' })
    },

    /** Remembers a call of server `id` (one of its instances), for `activity`. */
    called(id: string): void {
      if (servers.has(id)) lastCall.set(id, clock.now())
    },

    /**
     * Whether `redirectUri` is registered for the server `id`: exactly one of its `redirectUris`,
     * character for character (RFC 6749 §3.1.2.3; no prefix, pattern or normalisation).
     */
    redirects(id: string, redirectUri: string): boolean {
      return servers.get(id)?.options.redirectUris?.includes(redirectUri) ?? false
    },

    /** Every configured server with its last call in this process, by id. */
    activity(): ResourceServerActivity[] {
      return [...servers.entries()]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([id, configured]) => ({
          id,
          lastCallAt: lastCall.get(id) ?? null,
          secret: configured.digest === null ? 'password_hash' : 'digest',
        }))
    },
  }
}

export type ResourceServers = ReturnType<typeof createResourceServers>
