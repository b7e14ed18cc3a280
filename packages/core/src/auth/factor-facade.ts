import { type DomainError, err, ok, type Result } from '../errors.js'
import type { Actor, Clock } from '../ports/index.js'
import { FLOWADMIN_AUDIENCE } from '../tokens/audience.js'
import type { FactorError, Factors, TotpEnrolment } from './factors.js'
import type { PasskeyError, Passkeys, PasskeyView } from './passkeys.js'
import { hasPermission } from './permissions.js'
import { type AccessError, actorOf, type Principal, type UserPrincipal } from './principal.js'

/**
 * Milliseconds a sign-in counts as recent: adding a second factor needs a session at most this
 * old, so a session taken from its person (a leaked token) cannot add a factor of its own.
 */
export const RECENT_SIGN_IN_MS = 10 * 60_000

export type ReauthenticationError = Extract<DomainError, { code: 'reauthentication_required' }>

/** True when the principal is a person's own session for flowadmin: not an API token, not another audience's. */
const ownSession = (principal: UserPrincipal) =>
  principal.tokenKind === 'session' && principal.audience === FLOWADMIN_AUDIENCE

/** The refusal of what only a person's own session may do. */
const notOwnSession = err({ code: 'forbidden', permission: 'session' } as const)

const signInAgain = err({ code: 'reauthentication_required', minutes: RECENT_SIGN_IN_MS / 60_000 } as const)

/** The actor of a person acting on their own factors. */
const ownActor = (principal: UserPrincipal, address: string | null) => ({
  ...actorOf(principal, address),
  username: principal.username,
})

/**
 * What adds a factor: only a person's own session (refused to an API token or a token of another
 * audience), and only one that began recently.
 */
function whenAdding(clock: Clock) {
  const recent = (principal: UserPrincipal) => clock.now() - principal.signedInAt <= RECENT_SIGN_IN_MS
  return <T>(principal: UserPrincipal, add: () => T) =>
    !ownSession(principal) ? notOwnSession : !recent(principal) ? signInAgain : add()
}

/**
 * People's second factors. A person manages their own (status, TOTP enrolment); `remove` needs
 * the `*` permission for another person's (the command line acts as `operator`).
 */
export function createMfaFacade(factors: Factors, clock: Clock) {
  const adding = whenAdding(clock)
  return {
    available: factors.available,
    status: (principal: UserPrincipal) => factors.status(principal.username),
    /** Enrolment is a person's own act: refused to an API token or a token of another audience. */
    startTotp: async (
      principal: UserPrincipal,
    ): Promise<Result<TotpEnrolment, FactorError | AccessError | ReauthenticationError>> =>
      adding(principal, () => factors.startTotp(principal.username)),
    confirmTotp: async (
      principal: UserPrincipal,
      code: string,
      address: string | null,
    ): Promise<Result<{ recoveryCodes: string[] }, FactorError | AccessError>> =>
      ownSession(principal)
        ? factors.confirmTotp(ownActor(principal, address), code, principal.tokenId)
        : notOwnSession,
    /** Checks a second factor's code of `username` (see Factors.verify). */
    verify: (username: string, code: string, actor: Omit<Actor, 'username'>) =>
      factors.verify({ ...actor, username }, code),
    /** Whether signing in as `username` asks for a second factor. */
    required: (username: string) => factors.required(username),
    async remove(
      principal: Principal,
      username: string,
      address: string | null,
    ): Promise<Result<boolean, AccessError>> {
      if (!hasPermission(principal.permissions, '*')) return err({ code: 'forbidden', permission: '*' })
      const keep = principal.kind === 'user' && principal.username === username ? principal.tokenId : null
      return ok(await factors.remove(actorOf(principal, address), username, keep))
    },
  }
}

/**
 * People's passkeys. A person manages their own, with their own session for flowadmin (an API
 * token or a token of another audience is refused); the sign-in page signs in with one
 * (`signInOptions`, then `signIn`, which says whose it is: the page issues the session).
 * Removing every factor of a person (`mfa.remove`) removes their passkeys too.
 */
export function createPasskeyFacade(passkeys: Passkeys, clock: Clock) {
  const adding = whenAdding(clock)
  return {
    available: passkeys.available,
    list: async (principal: UserPrincipal): Promise<Result<PasskeyView[], PasskeyError | AccessError>> =>
      ownSession(principal) ? passkeys.list(principal.username) : notOwnSession,
    registrationOptions: async (
      principal: UserPrincipal,
    ): Promise<Result<{ options: unknown }, PasskeyError | AccessError | ReauthenticationError>> =>
      adding(principal, () => passkeys.registrationOptions(principal.username)),
    register: async (
      principal: UserPrincipal,
      name: string,
      response: unknown,
      address: string | null,
    ): Promise<Result<PasskeyView, PasskeyError | AccessError>> =>
      ownSession(principal)
        ? passkeys.register(ownActor(principal, address), name, response, principal.tokenId)
        : notOwnSession,
    remove: async (
      principal: UserPrincipal,
      id: string,
      address: string | null,
    ): Promise<Result<void, PasskeyError | AccessError>> =>
      ownSession(principal)
        ? passkeys.remove(ownActor(principal, address), id, principal.tokenId)
        : notOwnSession,
    signInOptions: passkeys.signInOptions,
    signIn: passkeys.signIn,
    /** Whether `username` has any passkey. */
    has: (username: string) => passkeys.has(username),
  }
}
