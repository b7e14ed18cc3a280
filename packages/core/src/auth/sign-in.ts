import { ok, type Result } from '../errors.js'
import type {
  Clock,
  Digest,
  EventSink,
  FactorStore,
  IssuedCode,
  LocalSignInMethod,
  PasswordPassed,
  RandomSource,
} from '../ports/index.js'
import { base64url } from '../tokens/encoding.js'
import type { TokenOwner } from '../tokens/owner.js'
import type { FactorError, Factors, TotpEnrolment } from './factors.js'
import type { Granted, LoginError, LoginRequest } from './login.js'
import { hasPermission } from './permissions.js'
import type { User } from './users.js'

/** Seconds a person has to give their second factor once their password was right. */
export const SECOND_FACTOR_SECONDS = 300

/** Random bytes of a ticket: what holds a sign-in between its password and its code. */
const TICKET_BYTES = 32

/**
 * Who must have a second factor to sign in with a password (`adminAuth.mfa.require`): nobody
 * (`none`), everyone, or whoever holds any of these permissions (`["*"]`: the administrators).
 */
export type SecondFactorPolicy = 'none' | 'everyone' | readonly string[]

/** A person whose sign-in is complete: who (one of flowadmin's own users, or of the directory), and how they proved it. */
export interface VerifiedPerson {
  user: TokenOwner
  method: LocalSignInMethod
}

/**
 * Who the one-time code of a verified person names (see IssuedCode.owner): a configured user is
 * read again when the code is traded; a person of the directory carries their rights and identity.
 */
export const codeOwnerOf = ({ user, method }: VerifiedPerson): IssuedCode['owner'] => ({
  username: user.username,
  permissions: user.permissions,
  fingerprint: 'fingerprint' in user ? user.fingerprint : '',
  method,
})

/** What a sign-in waits with between two steps: the ticket its page holds, and the time left. */
interface Parked {
  ticket: string
  expiresIn: number
}

/** The first step: the person, or what they must do next. */
export type PasswordStep =
  | { step: 'verified'; person: VerifiedPerson }
  /** The person has a second factor: a code (`totp`), or a passkey instead (`passkey`). */
  | ({ step: 'second_factor'; totp: boolean; passkey: boolean } & Parked)
  /** The policy says the person must have a second factor and they have none: enrol one now. */
  | ({ step: 'enrol'; enrolment: TotpEnrolment } & Parked)

/** The second step. */
export type SecondFactorStep =
  | { step: 'verified'; person: VerifiedPerson }
  /** The code was refused (wrong, replayed, throttled): the same sign-in goes on with a new ticket. */
  | ({ step: 'retry'; error: FactorError } & Parked)
  /** No such sign-in now (unknown, used, past its time, or its user gone): start with the password again. */
  | { step: 'expired' }

/** The enrolment a sign-in asked for (see PasswordStep `enrol`). */
export type EnrolStep =
  /** Enrolled: the recovery codes to show once, and the ticket that finishes the sign-in. */
  | ({ step: 'enrolled'; recoveryCodes: string[] } & Parked)
  /** The code was refused: a new secret to scan, with a new ticket. */
  | ({ step: 'retry'; error: FactorError; enrolment: TotpEnrolment } & Parked)
  | { step: 'expired' }

/** What a ticket is for: a code, an enrolment's first code, or finishing after an enrolment. */
type TicketKind = 'code' | 'enrol' | 'enrolled'

export interface SignInDeps {
  /** The password grant's checks; `client` is accepted as the request's client. */
  checkPassword: (
    request: LoginRequest,
    address: string,
    client: string,
  ) => Promise<Result<Granted, LoginError>>
  users: ReadonlyMap<string, User>
  /**
   * A person who is not a configured user, as they are now (the directory's, asked again), or
   * null; absent: nobody else signs in here with a password.
   */
  findPerson?: ((username: string, address: string) => Promise<TokenOwner | null>) | undefined
  factors: Factors
  /** Whether the person has a passkey (they may then use it instead of a code). */
  hasPasskey: (username: string) => Promise<boolean>
  policy: SecondFactorPolicy
  /** Every permission a person's words may give (see AccessRights.anywhere); default: the words. */
  anywhere?: ((words: readonly string[]) => readonly string[]) | undefined
  store: FactorStore
  digest: Digest
  random: RandomSource
  clock: Clock
  events: EventSink
}

/**
 * Whether `policy` says a person with these permissions must have a second factor: any of them,
 * wherever it holds (`anywhere` reads the person's words, roles and scoped ones included).
 */
export const policyRequires = (
  policy: SecondFactorPolicy,
  user: Pick<User, 'permissions'>,
  anywhere: (words: readonly string[]) => readonly string[] = (words) => words,
): boolean =>
  policy === 'everyone' ||
  (policy !== 'none' && policy.some((permission) => hasPermission(anywhere(user.permissions), permission)))

/**
 * A person's sign-in on flowadmin's own page, in steps: the password, then, for a person with a
 * second factor, a code (or their passkey, which signs in alone), or, for a person the policy
 * says must have one and who has none, an enrolment. Between steps the sign-in waits in the store
 * under a hash of its ticket, for SECOND_FACTOR_SECONDS from the password, and each ticket is
 * taken once, so any instance sharing the store may take the next step and a ticket never serves
 * twice. The result is a verified person; the caller hands out the one-time code.
 */
export function createSignIn(deps: SignInDeps) {
  const { store, factors, digest, random, clock, events } = deps
  /**
   * A ticket's key in the store: a hash of its kind, the browser's binding (the sign-in cookie)
   * and the ticket, so a ticket serves only its kind, and only in the browser it was given to.
   */
  const keyOf = (kind: TicketKind, binding: string, ticket: string) =>
    digest.sha256(`sign-in:${kind}\n${binding}\n${ticket}`)

  const park = async (kind: TicketKind, binding: string, passed: PasswordPassed): Promise<Parked> => {
    const ticket = base64url(random.bytes(TICKET_BYTES))
    await store.savePendingSignIn(await keyOf(kind, binding, ticket), passed)
    return { ticket, expiresIn: Math.max(1, Math.ceil((passed.expiresAt - clock.now()) / 1000)) }
  }

  /**
   * The waiting sign-in of `ticket`, taken, with its person now (a person of the directory asked
   * of it again); null when there is none.
   */
  const take = async (
    kind: TicketKind,
    binding: string,
    ticket: string,
  ): Promise<{ passed: PasswordPassed; user: TokenOwner } | null> => {
    if (ticket.length === 0 || ticket.length > 64 || binding.length === 0 || binding.length > 64) return null
    const passed = await store.takePendingSignIn(await keyOf(kind, binding, ticket), clock.now())
    if (passed === null) return null
    const user =
      deps.users.get(passed.username) ?? (await deps.findPerson?.(passed.username, passed.address)) ?? null
    return user === null ? null : { passed, user }
  }

  const verified = (user: TokenOwner, clientId: string, address: string, method: LocalSignInMethod) => {
    events.emit({ type: 'login.succeeded', at: clock.now(), username: user.username, clientId, address })
    return { step: 'verified' as const, person: { user, method } }
  }

  /** A new TOTP secret for a person who must enrol; refused when none can be made here. */
  const enrolment = async (username: string): Promise<Result<TotpEnrolment, FactorError>> =>
    factors.startTotp(username)

  return {
    /**
     * The password, checked as the password grant checks it (throttle, queue, one verification),
     * for `clientId` (the resource server that asked for the sign-in, or the console's client).
     */
    async password(
      fields: { username: string; password: string; clientId: string },
      binding: string,
      address: string,
      agent: string | null = null,
    ): Promise<Result<PasswordStep, LoginError | FactorError>> {
      const checked = await deps.checkPassword(
        { grantType: 'password', scope: '', ...fields },
        address,
        fields.clientId,
      )
      if (!checked.ok) return checked
      const { user, clientId, scope } = checked.value
      const now = clock.now()
      const passed: PasswordPassed = {
        username: user.username,
        clientId,
        scope,
        address,
        agent,
        createdAt: now,
        expiresAt: now + SECOND_FACTOR_SECONDS * 1000,
      }
      const totp = await factors.required(user.username)
      const passkey = await deps.hasPasskey(user.username)
      if (totp || passkey)
        return ok({ step: 'second_factor', totp, passkey, ...(await park('code', binding, passed)) })
      if (!policyRequires(deps.policy, user, deps.anywhere))
        return ok(verified(user, clientId, address, 'password'))
      const started = await enrolment(user.username)
      if (!started.ok) return started
      return ok({ step: 'enrol', enrolment: started.value, ...(await park('enrol', binding, passed)) })
    },

    /**
     * The second factor of the sign-in `ticket` holds: a TOTP code or a recovery code (see
     * Factors.verify). The ticket is used up whatever the answer; a refused code gets a new one
     * with the time left.
     */
    async secondFactor(
      binding: string,
      ticket: string,
      code: string,
      address: string,
    ): Promise<SecondFactorStep> {
      const taken = await take('code', binding, ticket)
      if (taken === null) return { step: 'expired' }
      const { passed, user } = taken
      const checked = await factors.verify(
        { username: user.username, clientId: passed.clientId, address },
        code,
      )
      if (!checked.ok)
        return { step: 'retry', error: checked.error, ...(await park('code', binding, passed)) }
      const method = checked.value === 'totp' ? 'password_totp' : 'password_recovery_code'
      return verified(user, passed.clientId, address, method)
    },

    /**
     * The first code of the secret a sign-in's enrolment showed: confirms it (the person gets
     * their recovery codes, and their other sessions end), then the sign-in waits for the person
     * to have seen the codes (see finishEnrolment).
     */
    async enrol(binding: string, ticket: string, code: string, address: string): Promise<EnrolStep> {
      const taken = await take('enrol', binding, ticket)
      if (taken === null) return { step: 'expired' }
      const { passed, user } = taken
      const actor = { username: user.username, clientId: passed.clientId, address }
      const confirmed = await factors.confirmTotp(actor, code, 'sign_in')
      if (confirmed.ok)
        return {
          step: 'enrolled',
          recoveryCodes: confirmed.value.recoveryCodes,
          ...(await park('enrolled', binding, passed)),
        }
      // The secret shown may not have been scanned right: a new one, as at the start.
      const again = await enrolment(user.username)
      if (!again.ok) return { step: 'expired' }
      return {
        step: 'retry',
        error: confirmed.error,
        enrolment: again.value,
        ...(await park('enrol', binding, passed)),
      }
    },

    /** After an enrolment, once the recovery codes were shown: the person, signed in. */
    async finishEnrolment(binding: string, ticket: string, address: string): Promise<SecondFactorStep> {
      const taken = await take('enrolled', binding, ticket)
      if (taken === null) return { step: 'expired' }
      return verified(taken.user, taken.passed.clientId, address, 'password_totp')
    },

    /** Whether the person must give a second factor to sign in: they have one, or the policy says so. */
    async needsSecondFactor(user: TokenOwner): Promise<boolean> {
      return (
        policyRequires(deps.policy, user, deps.anywhere) ||
        (await factors.required(user.username)) ||
        (await deps.hasPasskey(user.username))
      )
    },

    /** Deletes up to `limit` sign-ins whose time ended. */
    sweep: (limit: number): Promise<number> => store.deleteExpiredSignIns(clock.now(), limit),
  }
}

export type SignIn = ReturnType<typeof createSignIn>
