import { type DomainError, err, ok, type Result } from '../errors.js'
import type { AttemptOutcome, Clock, CoreObserver, EventSink, PasswordVerifier } from '../ports/index.js'
import { FLOWADMIN_AUDIENCE } from '../tokens/audience.js'
import type { TokenOwner } from '../tokens/owner.js'
import type { IssuedToken, Tokens } from '../tokens/tokens.js'
import type { DirectoryPeople } from './directory.js'
import type { Lane, LoginQueue } from './login-queue.js'
import { grantScope, parseScope } from './scope.js'
import type { Throttle } from './throttle.js'
import type { User } from './users.js'

/** The fields of a password-grant token request, as strings; absent ones are undefined. */
export interface LoginRequest {
  clientId?: string | undefined
  grantType?: string | undefined
  scope?: string | undefined
  username?: string | undefined
  password?: string | undefined
}

export type LoginError = Extract<
  DomainError,
  {
    code:
      | 'invalid_request'
      | 'unsupported_grant_type'
      | 'invalid_scope'
      | 'invalid_credentials'
      | 'mfa_required'
      | 'throttled'
      | 'temporarily_unavailable'
      | 'directory_unavailable'
  }
>

export interface LoginDeps {
  users: ReadonlyMap<string, User>
  clients: ReadonlySet<string>
  verifier: PasswordVerifier
  queue: LoginQueue
  throttle: Throttle
  tokens: Tokens
  events: EventSink
  clock: Clock
  observer?: CoreObserver | undefined
  /**
   * Whether the person must give a second factor (they have one, or the policy says so): the
   * password grant, which cannot ask for it, then issues nothing.
   */
  needsSecondFactor?: ((user: TokenOwner) => Promise<boolean>) | undefined
  /**
   * The organisation's directory, when configured: a name that is not a configured user's is its
   * to check, throttled per account from any address by its own throttle, never by the verifier.
   */
  directory?: (Pick<DirectoryPeople, 'verify' | 'accountKey'> & { throttle: Throttle }) | undefined
}

/** What a verified login is granted: its session is issued once the attempt has ended. */
export interface Granted {
  /** One of flowadmin's own users, or a person of the directory. */
  user: TokenOwner
  clientId: string
  scope: string[]
}

/** Seconds an attempt shed because too many attempts of its key are in flight is told to wait. */
export const BUSY_RETRY_AFTER = 1

const missing = (field: string): LoginError => ({
  code: 'invalid_request',
  message: `Missing required parameter: ${field}`,
})

export function createLogin({
  users,
  clients,
  verifier,
  queue,
  throttle,
  tokens,
  events,
  clock,
  observer,
  needsSecondFactor,
  directory,
}: LoginDeps) {
  /**
   * The OAuth2 password grant. Order matters: shape errors first (they reveal nothing), then the
   * throttle, decided in the store (a throttled attempt never reaches the verifier), then the
   * verifier queue (a full lane answers at once), then one verification whatever the user, so
   * unknown users, wrong passwords, unknown clients and too-wide scopes cost the same and yield
   * the same `invalid_credentials`; last, once the throttle store has ended the attempt, the
   * session is saved.
   */
  async function login(
    request: LoginRequest,
    address: string,
    agent: string | null = null,
    /** A client that proved its secret (a resource server): accepted as `client_id` besides the configured ones. */
    authenticatedClient: string | null = null,
    /** Whom the token is for; default that client, else flowadmin. */
    audience: string | null = null,
  ): Promise<Result<IssuedToken, LoginError>> {
    const verified = await checkPassword(request, address, authenticatedClient)
    if (!verified.ok) return verified
    const { user, clientId: client, scope: granted } = verified.value
    if (needsSecondFactor !== undefined && (await needsSecondFactor(user))) {
      events.emit({
        type: 'login.mfa_required',
        at: clock.now(),
        username: user.username,
        clientId: client,
        address,
      })
      return err({ code: 'mfa_required' })
    }
    // A resource server's login gives a token for that server alone; any other, for flowadmin.
    const issued = await tokens.issue(
      user,
      client,
      granted,
      address,
      agent,
      undefined,
      audience ?? authenticatedClient ?? FLOWADMIN_AUDIENCE,
      'password',
    )
    events.emit({
      type: 'login.succeeded',
      at: clock.now(),
      username: user.username,
      clientId: client,
      address,
    })
    return ok(issued)
  }

  /**
   * The checks of the password grant, up to a verified password (see login); issues nothing and
   * emits nothing on success.
   */
  async function checkPassword(
    request: LoginRequest,
    address: string,
    authenticatedClient: string | null = null,
  ): Promise<Result<Granted, LoginError>> {
    const { clientId, grantType, scope, username, password } = request
    if (grantType === undefined || grantType === '') return err(missing('grant_type'))
    if (grantType !== 'password') {
      return err({
        code: 'unsupported_grant_type',
        message: `Unsupported grant type: ${grantType.slice(0, 64)}`,
      })
    }
    if (username === undefined || username === '') return err(missing('username'))
    if (password === undefined || password === '') return err(missing('password'))
    if (scope === undefined) return err(missing('scope'))
    const requested = parseScope(scope)
    if (!requested.ok) return requested

    const actor = { username, clientId: clientId ?? null, address }
    // A name that is not a configured user's is the directory's, when there is one: its throttle
    // counts the account (as the directory compares names) from anywhere, before the directory is asked.
    const viaDirectory = directory !== undefined && !users.has(username)
    const decision = viaDirectory
      ? await directory.throttle.begin(directory.accountKey(username), address, 'directory')
      : await throttle.begin(username, address)
    if (decision.outcome === 'throttled') {
      events.emit({ type: 'login.throttled', at: clock.now(), retryAfter: decision.retryAfter, ...actor })
      return err({ code: 'throttled', retryAfter: decision.retryAfter })
    }
    if (decision.outcome === 'busy') {
      events.emit({ type: 'login.shed', at: clock.now(), retryAfter: BUSY_RETRY_AFTER, ...actor })
      return err({ code: 'temporarily_unavailable', retryAfter: BUSY_RETRY_AFTER })
    }
    // The attempt ends in the throttle store before any session is saved: a store that fails to
    // record it answers the error with no token saved, so a client never gets an error while a
    // session it was never given lives on.
    let outcome: AttemptOutcome = 'abandoned'
    let verified: Result<Granted, LoginError>
    try {
      const lane = decision.known ? 'known' : 'general'
      verified = await attempt(actor, password, requested.value, lane, authenticatedClient, viaDirectory)
      outcome = verified.ok
        ? 'succeeded'
        : verified.error.code === 'invalid_credentials'
          ? 'failed'
          : 'abandoned'
    } finally {
      await (viaDirectory && directory !== undefined ? directory.throttle : throttle).finish(
        decision.attempt,
        outcome,
      )
    }
    return verified
  }

  /**
   * One verification of one of flowadmin's own users, whatever the user (unless its lane of the
   * verifier queue is full): the user when the password is theirs, else null.
   */
  async function verifyLocal(
    actor: { username: string; clientId: string | null; address: string },
    password: string,
    lane: Lane,
  ): Promise<Result<{ user: User | null }, LoginError>> {
    const user = users.get(actor.username)
    const queued = clock.now()
    const verification = queue.run(lane, () => {
      observer?.verifierWait?.(clock.now() - queued)
      return verifier.verify(user?.passwordHash ?? verifier.dummyHash, password)
    })
    if (verification === null) {
      events.emit({ type: 'login.shed', at: clock.now(), retryAfter: queue.retryAfter, ...actor })
      return err({ code: 'temporarily_unavailable', retryAfter: queue.retryAfter })
    }
    // Awaited whoever the user is: an unknown one costs the same verification (the dummy hash).
    const passwordOk = await verification
    return ok({ user: user !== undefined && passwordOk ? user : null })
  }

  /** One verification (by the verifier or the directory), then the scope and the client. */
  async function attempt(
    actor: { username: string; clientId: string | null; address: string },
    password: string,
    scope: string[],
    lane: Lane,
    authenticatedClient: string | null,
    viaDirectory: boolean,
  ): Promise<Result<Granted, LoginError>> {
    const { clientId } = actor
    const verified =
      viaDirectory && directory !== undefined
        ? await directory.verify(actor, password)
        : await verifyLocal(actor, password, lane)
    if (!verified.ok) return verified
    const { user } = verified.value
    const refusal = 'refusal' in verified.value ? verified.value.refusal : undefined
    const granted = user === null ? null : grantScope(scope, user.permissions, tokens.rights.covers)
    const knownClient = clientId !== null && (clients.has(clientId) || clientId === authenticatedClient)
    if (user === null || granted === null || !knownClient) {
      events.emit({ type: 'login.failed', at: clock.now(), ...actor, ...(refusal && { reason: refusal }) })
      return err({ code: 'invalid_credentials' })
    }
    return ok({ user, clientId, scope: granted })
  }

  return Object.assign(login, { checkPassword })
}

export type Login = ReturnType<typeof createLogin>
