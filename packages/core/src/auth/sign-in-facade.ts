import { err, type Result } from '../errors.js'
import type { AuthorizationRequest, Clock, EventSink, IssuedCode, WaitingSave } from '../ports/index.js'
import type { Handover } from './handover.js'
import type { SignIn } from './sign-in.js'
import type { User } from './users.js'

export interface SignInFacadeDeps {
  signIn: SignIn
  handover: Handover
  users: ReadonlyMap<string, User>
  /** false when `adminAuth` is not configured: there is no session to trade a code for. */
  authEnabled: boolean
  /** Whether people of the directory sign in here with their passwords. */
  directory: boolean
  clock: Clock
  events: EventSink
}

/**
 * A person's sign-in on flowadmin's own page: the password, then the second factor when the
 * person has one (see createSignIn), ended with a one-time code the console trades for a session.
 */
export function createSignInFacade({
  signIn,
  handover,
  users,
  authEnabled,
  directory,
  clock,
  events,
}: SignInFacadeDeps) {
  return {
    password: signIn.password,
    secondFactor: signIn.secondFactor,
    enrol: signIn.enrol,
    finishEnrolment: signIn.finishEnrolment,
    /** True when people may sign in with a password here (flowadmin has users of its own, or a directory). */
    hasUsers: () => users.size > 0 || directory,
    /**
     * Ends a sign-in with the person's one-time code (see Handover.handOver). A passkey's sign-in
     * that cannot end (too many codes wait) is audited as `passkey.failed`, as its other refusals
     * are, so that whoever watches the trail sees it.
     */
    async handOver(
      owner: IssuedCode['owner'],
      target:
        | { binding: string; authorization: null }
        | { binding: null; authorization: AuthorizationRequest },
      address: string | null,
    ): Promise<Result<string, Exclude<WaitingSave, 'saved'>>> {
      const handed = await handover.handOver(owner, target, address)
      if (!handed.ok && owner.method === 'passkey') {
        events.emit({
          type: 'passkey.failed',
          at: clock.now(),
          id: null,
          reason: 'too_many_sign_ins',
          username: owner.username,
          clientId: target.authorization?.clientId ?? null,
          address,
        })
        return err(handed.error)
      }
      return handed
    },
    /** A console's one-time code traded for a session (see Handover.exchange). */
    exchange: authEnabled ? handover.exchange : null,
  }
}
