import { type DomainError, err, ok, type Result } from '../errors.js'
import type { Clock, EventSink, PasswordVerifier } from '../ports.js'
import type { IssuedToken, Tokens } from '../tokens/tokens.js'
import { addressScope } from './address-scope.js'
import { createKeyedQueue } from './keyed-queue.js'
import { grantScope, parseScope } from './scope.js'
import type { Throttle } from './throttle.js'

/** A configured user. `passwordHash` is whatever the verifier understands (argon2id in the server). */
export interface User {
  username: string
  passwordHash: string
  permissions: string[]
}

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
    code: 'invalid_request' | 'unsupported_grant_type' | 'invalid_scope' | 'invalid_credentials' | 'throttled'
  }
>

export interface LoginDeps {
  users: ReadonlyMap<string, User>
  clients: ReadonlySet<string>
  verifier: PasswordVerifier
  throttle: Throttle
  tokens: Tokens
  events: EventSink
  clock: Clock
}

/** Attempts from one address that may wait for the one in progress; more are throttled at once. */
export const MAX_WAITING_PER_ADDRESS = 16

const missing = (field: string): LoginError => ({
  code: 'invalid_request',
  message: `Missing required parameter: ${field}`,
})

export function createLogin({ users, clients, verifier, throttle, tokens, events, clock }: LoginDeps) {
  // Attempts from one address run one after another: the throttle is checked, the password
  // verified and a failure counted before the next attempt is checked, so attempts sent all at
  // once cannot slip past the limit together.
  const oneAtATime = createKeyedQueue(MAX_WAITING_PER_ADDRESS)

  /**
   * The OAuth2 password grant. Order matters: shape errors first (they reveal nothing), then the
   * throttle (a throttled attempt never reaches the verifier), then one verification whatever
   * the user, so unknown users, wrong passwords, unknown clients and too-wide scopes cost the
   * same and yield the same `invalid_credentials`.
   */
  async function login(request: LoginRequest, address: string): Promise<Result<IssuedToken, LoginError>> {
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
    const throttled = (retryAfter: number): Result<IssuedToken, LoginError> => {
      events.emit({ type: 'login.throttled', at: clock.now(), retryAfter, ...actor })
      return err({ code: 'throttled', retryAfter })
    }
    const outcome = await oneAtATime(addressScope(address), async () => {
      const wait = await throttle.retryAfter(username, address)
      return wait > 0 ? throttled(wait) : attempt(actor, password, requested.value)
    })
    return outcome ?? throttled(1)
  }

  /** One verification whatever the user; a failure is counted before the next attempt is checked. */
  async function attempt(
    actor: { username: string; clientId: string | null; address: string },
    password: string,
    scope: string[],
  ): Promise<Result<IssuedToken, LoginError>> {
    const { username, clientId, address } = actor
    const user = users.get(username)
    const passwordOk = await verifier.verify(user?.passwordHash ?? verifier.dummyHash, password)
    const granted = user && passwordOk ? grantScope(scope, user.permissions) : null
    if (!user || granted === null || clientId === null || !clients.has(clientId)) {
      await throttle.recordFailure(username, address)
      events.emit({ type: 'login.failed', at: clock.now(), ...actor })
      return err({ code: 'invalid_credentials' })
    }

    await throttle.recordSuccess(username, address)
    const issued = await tokens.issue(user, clientId, granted)
    events.emit({ type: 'login.succeeded', at: clock.now(), ...actor })
    return ok(issued)
  }

  return login
}
