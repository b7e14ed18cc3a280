import { ok, type Result } from '../errors.js'
import type { Clock, Digest, EventSink, FactorStore, RandomSource, SignInMethod } from '../ports/index.js'
import { base64url } from '../tokens/encoding.js'
import type { IssuedToken, Tokens } from '../tokens/tokens.js'
import type { FactorError, Factors } from './factors.js'
import type { Granted, LoginError, LoginRequest, User } from './login.js'

/** Seconds a person has to give their second factor once their password was right. */
export const SECOND_FACTOR_SECONDS = 300

/** Random bytes of a ticket: what holds a sign-in between its password and its code. */
const TICKET_BYTES = 32

/** The first step: a token, or a ticket for the second factor the person has. */
export type PasswordStep =
  | { step: 'signed_in'; token: IssuedToken }
  | { step: 'second_factor'; ticket: string; expiresIn: number }

/** The second step. */
export type SecondFactorStep =
  | { step: 'signed_in'; token: IssuedToken }
  /** The code was refused (wrong, replayed, throttled): the same sign-in goes on with a new ticket. */
  | { step: 'retry'; ticket: string; expiresIn: number; error: FactorError }
  /** No such sign-in now (unknown, used, past its time, or its user gone): start with the password again. */
  | { step: 'expired' }

export interface SignInDeps {
  checkPassword: (request: LoginRequest, address: string) => Promise<Result<Granted, LoginError>>
  users: ReadonlyMap<string, User>
  factors: Factors
  store: FactorStore
  tokens: Tokens
  digest: Digest
  random: RandomSource
  clock: Clock
  events: EventSink
}

/**
 * A person's sign-in in two steps, for flowadmin's own sign-in page: the password, then, for a
 * person with a second factor, a code. Between them the sign-in waits in the store under a hash
 * of its ticket, for SECOND_FACTOR_SECONDS, and each ticket is taken once, so any instance sharing
 * the store may take the second step, and a ticket never serves twice.
 */
export function createSignIn(deps: SignInDeps) {
  const { store, tokens, digest, random, clock, events } = deps
  const keyOf = (ticket: string) => digest.sha256(`sign-in\n${ticket}`)

  const park = async (
    granted: Omit<Granted, 'user'> & { username: string },
    address: string,
    agent: string | null,
    createdAt: number,
    expiresAt: number,
  ) => {
    const ticket = base64url(random.bytes(TICKET_BYTES))
    await store.savePendingSignIn(await keyOf(ticket), {
      username: granted.username,
      clientId: granted.clientId,
      scope: granted.scope,
      address,
      agent,
      createdAt,
      expiresAt,
    })
    return { ticket, expiresIn: Math.max(1, Math.ceil((expiresAt - clock.now()) / 1000)) }
  }

  const issue = async (
    user: User,
    clientId: string,
    scope: string[],
    address: string,
    agent: string | null,
    signIn: SignInMethod,
  ) => {
    const token = await tokens.issue(user, clientId, scope, address, agent, undefined, undefined, signIn)
    events.emit({ type: 'login.succeeded', at: clock.now(), username: user.username, clientId, address })
    return token
  }

  return {
    /**
     * The password, checked as the password grant checks it (throttle, queue, one verification).
     * A person with a confirmed second factor gets a ticket instead of a token.
     */
    async password(
      request: LoginRequest,
      address: string,
      agent: string | null = null,
    ): Promise<Result<PasswordStep, LoginError>> {
      const verified = await deps.checkPassword(request, address)
      if (!verified.ok) return verified
      const { user, clientId, scope } = verified.value
      if (!(await deps.factors.required(user.username))) {
        return ok({
          step: 'signed_in',
          token: await issue(user, clientId, scope, address, agent, 'password'),
        })
      }
      const now = clock.now()
      const parked = await park(
        { username: user.username, clientId, scope },
        address,
        agent,
        now,
        now + SECOND_FACTOR_SECONDS * 1000,
      )
      return ok({ step: 'second_factor', ...parked })
    },

    /**
     * The second factor of the sign-in `ticket` holds: a TOTP code or a recovery code (see
     * Factors.verify). The ticket is used up whatever the answer; a refused code gets a new one
     * with the time left.
     */
    async secondFactor(
      ticket: string,
      code: string,
      address: string,
      agent: string | null = null,
    ): Promise<SecondFactorStep> {
      if (ticket.length === 0 || ticket.length > 64) return { step: 'expired' }
      const pending = await store.takePendingSignIn(await keyOf(ticket), clock.now())
      if (pending === null) return { step: 'expired' }
      const user = deps.users.get(pending.username)
      if (user === undefined) return { step: 'expired' }
      const checked = await deps.factors.verify(
        { username: user.username, clientId: pending.clientId, address },
        code,
      )
      if (!checked.ok) {
        const parked = await park(
          pending,
          pending.address,
          pending.agent,
          pending.createdAt,
          pending.expiresAt,
        )
        return { step: 'retry', ...parked, error: checked.error }
      }
      return {
        step: 'signed_in',
        token: await issue(
          user,
          pending.clientId,
          pending.scope,
          address,
          agent ?? pending.agent,
          checked.value === 'totp' ? 'password_totp' : 'password_recovery_code',
        ),
      }
    },

    /** Deletes up to `limit` sign-ins whose time ended. */
    sweep: (limit: number): Promise<number> => store.deleteExpiredSignIns(clock.now(), limit),
  }
}

export type SignIn = ReturnType<typeof createSignIn>
