import { type DomainError, err, ok, type Result } from '../errors.js'
import type { Actor, Clock, SignInMethod } from '../ports/index.js'
import { FLOWADMIN_AUDIENCE } from '../tokens/audience.js'
import type { FactorError, FactorStatus, Factors, TotpEnrolment } from './factors.js'
import type { PasskeyError, Passkeys, PasskeyView } from './passkeys.js'
import { hasPermission } from './permissions.js'
import { type AccessError, actorOf, type UserPrincipal } from './principal.js'

/**
 * Milliseconds a sign-in counts as recent: changing a second factor needs a session at most this
 * old, so a session taken from its person (a leaked token) cannot add or strip a factor.
 */
export const RECENT_SIGN_IN_MS = 10 * 60_000

/** How a session's person proved a second factor when signing in. */
const SECOND_FACTOR_SIGN_INS: ReadonlySet<SignInMethod | null> = new Set<SignInMethod>([
  'password_totp',
  'password_recovery_code',
  'passkey',
])

export type ReauthenticationError = Extract<DomainError, { code: 'reauthentication_required' }>
export type ProviderSignInError = Extract<DomainError, { code: 'provider_sign_in' }>

/** True when the principal is a person's own session for flowadmin: not an API token, not another audience's. */
const ownSession = (principal: UserPrincipal) =>
  principal.tokenKind === 'session' && principal.audience === FLOWADMIN_AUDIENCE

/**
 * True when the person signs in with the identity provider, which never asks for flowadmin's
 * factors. People of the directory sign in with their password on flowadmin's page, which does:
 * their sessions name the directory (`provider`) but say how they signed in (`signIn`). A session
 * saved before sessions recorded how they signed in is known by its provider alone.
 */
const ofProvider = (principal: UserPrincipal) =>
  principal.signIn === 'provider' || (principal.signIn === null && principal.provider !== undefined)

/** The refusal of what only a person's own session may do. */
const notOwnSession = err({ code: 'forbidden', permission: 'session' } as const)
const providerSignIn = err({ code: 'provider_sign_in' } as const)
const signInAgain = (action: ReauthenticationError['action']) =>
  err({ code: 'reauthentication_required', minutes: RECENT_SIGN_IN_MS / 60_000, action } as const)

/** The actor of a person acting on their own factors. */
const ownActor = (principal: UserPrincipal, address: string | null) => ({
  ...actorOf(principal, address),
  username: principal.username,
})

/**
 * Who may change factors. Adding one: only a person's own session (refused to an API token or a
 * token of another audience), begun recently, of a person flowadmin signs in (not the identity
 * provider's). Removing one: only a person's own session, begun recently, whose sign-in used a
 * second factor: whatever else a stolen session or an API token holds, it cannot strip one.
 */
function factorGuards(clock: Clock) {
  const recent = (principal: UserPrincipal) => clock.now() - principal.signedInAt <= RECENT_SIGN_IN_MS
  return {
    adding: <T>(principal: UserPrincipal, add: () => T) =>
      !ownSession(principal)
        ? notOwnSession
        : ofProvider(principal)
          ? providerSignIn
          : !recent(principal)
            ? signInAgain('add_factor')
            : add(),
    /** What an enrolment's second call (its answer) needs: the person's own session, not the provider's. */
    answering: <T>(principal: UserPrincipal, answer: () => T) =>
      !ownSession(principal) ? notOwnSession : ofProvider(principal) ? providerSignIn : answer(),
    removing: <T>(principal: UserPrincipal, remove: () => T) =>
      !ownSession(principal)
        ? notOwnSession
        : !recent(principal) || !SECOND_FACTOR_SIGN_INS.has(principal.signIn)
          ? signInAgain('remove_factor')
          : remove(),
  }
}

/**
 * People's second factors. A person manages their own (status, TOTP enrolment, removal); removing
 * another person's needs `*` too, or the command line (`reset`).
 */
export function createMfaFacade(factors: Factors, clock: Clock) {
  const { adding, answering, removing } = factorGuards(clock)
  return {
    available: factors.available,
    status: (principal: UserPrincipal): Promise<FactorStatus> => factors.status(principal.username),
    /** Enrolment is a person's own act: refused to an API token or a token of another audience. */
    startTotp: async (
      principal: UserPrincipal,
    ): Promise<
      Result<TotpEnrolment, FactorError | AccessError | ReauthenticationError | ProviderSignInError>
    > => adding(principal, () => factors.startTotp(principal.username)),
    confirmTotp: async (
      principal: UserPrincipal,
      code: string,
      address: string | null,
    ): Promise<Result<{ recoveryCodes: string[] }, FactorError | AccessError | ProviderSignInError>> =>
      answering(principal, () =>
        factors.confirmTotp(ownActor(principal, address), code, { session: principal.tokenId }),
      ),
    /** Checks a second factor's code of `username` (see Factors.verify). */
    verify: (username: string, code: string, actor: Omit<Actor, 'username'>) =>
      factors.verify({ ...actor, username }, code),
    /** Whether signing in as `username` asks for a second factor. */
    required: (username: string) => factors.required(username),
    /** Removes the caller's TOTP app and recovery codes (their passkeys stay); true when there was one. */
    removeTotp: async (
      principal: UserPrincipal,
      address: string | null,
    ): Promise<Result<boolean, AccessError | ReauthenticationError>> =>
      removing(principal, async () =>
        ok(await factors.removeTotp(ownActor(principal, address), principal.username, principal.tokenId)),
      ),
    /**
     * Removes every second factor of `username`: the caller's own, or, for a caller with `*`,
     * anyone's; true when there was any.
     */
    async remove(
      principal: UserPrincipal,
      username: string,
      address: string | null,
    ): Promise<Result<boolean, AccessError | ReauthenticationError>> {
      if (!ownSession(principal)) return notOwnSession
      if (username !== principal.username && !hasPermission(principal.permissions, '*'))
        return err({ code: 'forbidden', permission: '*' })
      const keep = principal.username === username ? principal.tokenId : null
      return removing(principal, async () =>
        ok(await factors.remove(actorOf(principal, address), username, keep)),
      )
    },
    /**
     * Removes every second factor of `username` from the command line, on the server (the person
     * lost them): true when there was any. Audited with no actor.
     */
    reset: (username: string): Promise<boolean> =>
      factors.remove({ username: null, clientId: null, address: null }, username, null),
  }
}

/**
 * People's passkeys. A person manages their own, with their own session for flowadmin (an API
 * token or a token of another audience is refused; see factorGuards); the sign-in page signs in
 * with one (`signInOptions`, then `signIn`, which says whose it is: the page issues the session).
 * Removing every factor of a person (`mfa.remove`) removes their passkeys too.
 */
export function createPasskeyFacade(passkeys: Passkeys, clock: Clock) {
  const { adding, answering, removing } = factorGuards(clock)
  return {
    available: passkeys.available,
    list: async (principal: UserPrincipal): Promise<Result<PasskeyView[], PasskeyError | AccessError>> =>
      ownSession(principal) ? passkeys.list(principal.username) : notOwnSession,
    registrationOptions: async (
      principal: UserPrincipal,
    ): Promise<
      Result<{ options: unknown }, PasskeyError | AccessError | ReauthenticationError | ProviderSignInError>
    > => adding(principal, () => passkeys.registrationOptions(principal.username, principal.tokenId)),
    register: async (
      principal: UserPrincipal,
      name: string,
      response: unknown,
      address: string | null,
    ): Promise<Result<PasskeyView, PasskeyError | AccessError | ProviderSignInError>> =>
      answering(principal, () =>
        passkeys.register(ownActor(principal, address), principal.tokenId, name, response),
      ),
    remove: async (
      principal: UserPrincipal,
      id: string,
      address: string | null,
    ): Promise<Result<void, PasskeyError | AccessError | ReauthenticationError>> => {
      const remove = () => passkeys.remove(ownActor(principal, address), id, principal.tokenId)
      // Where passkeys are not configured, that is the answer to any person's own session.
      if (!passkeys.available) return ownSession(principal) ? remove() : notOwnSession
      return removing(principal, remove)
    },
    signInOptions: passkeys.signInOptions,
    signIn: passkeys.signIn,
    /** Whether `username` has any passkey. */
    has: (username: string) => passkeys.has(username),
  }
}
