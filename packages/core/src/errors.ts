import type { InstallFailure } from './ports/index.js'

/** The outcome of an operation whose failure is expected: a value, never a throw. */
export type Result<T, E = DomainError> = { ok: true; value: T } | { ok: false; error: E }

export const ok = <T>(value: T): { ok: true; value: T } => ({ ok: true, value })
export const err = <E>(error: E): { ok: false; error: E } => ({ ok: false, error })

/** A request the domain finds malformed, with the message its caller is shown. */
export const invalid = (message: string) => ({ code: 'invalid_request' as const, message })

/**
 * Every expected failure of the domain, keyed by `code`. Adapters map each code in one place
 * (an exhaustive record), so a new code does not compile until it is mapped.
 */
export type DomainError =
  /** A request that is malformed in a way the domain sees (the HTTP edge checks shapes first). */
  | { code: 'invalid_request'; message: string }
  /** `grant_type` is not `password`. */
  | { code: 'unsupported_grant_type'; message: string }
  /** A scope word other than `*` or `read`. */
  | { code: 'invalid_scope'; message: string }
  /**
   * Unknown user, wrong password, unknown client or a scope beyond the user's permissions.
   * Deliberately carries no detail: all of these must look alike to the caller.
   */
  | { code: 'invalid_credentials' }
  /** A resource server's id or secret was refused (RFC 6749 §5.2). Carries no detail. */
  | { code: 'invalid_client' }
  /** Too many failed logins; `retryAfter` is in whole seconds (at least 1). */
  | { code: 'throttled'; retryAfter: number }
  /**
   * A reporter sent more audit events than its allowance takes now; nothing of the report was
   * kept. `retryAfter` is in whole seconds (at least 1).
   */
  | { code: 'too_many_events'; retryAfter: number }
  /**
   * A login that could not be verified now (too many attempts in flight or waiting for
   * verification); nothing was recorded against it. `retryAfter` is in whole seconds (at least 1).
   */
  | { code: 'temporarily_unavailable'; retryAfter: number }
  /**
   * The person is not one of flowadmin's own users, and the directory that knows its people could
   * not be asked now (unreachable, or no answer within its bound): nothing was counted against the
   * client. `retryAfter` is in whole seconds (at least 1).
   */
  | { code: 'directory_unavailable'; retryAfter: number }
  /** No usable credentials: `missing` when none were sent, `invalid` for an unknown, expired or revoked token. */
  | { code: 'unauthenticated'; reason: 'missing' | 'invalid' }
  /** Authenticated, but the granted permissions do not cover `permission`. */
  | { code: 'forbidden'; permission: string }
  /** No token with that id that the caller may see. */
  | { code: 'token_not_found'; id: string }
  /** No installed module of that name. */
  | { code: 'module_not_found'; module: string }
  /** The module exists but has no node set of that name. */
  | { code: 'node_set_not_found'; module: string; set: string }
  /** Disabling would remove types the deployed flows use; nothing was changed. */
  | { code: 'type_in_use'; types: string[]; instances?: string[] }
  /**
   * A fleet instance's id is already another resource server's, or (`enrolled`) an instance
   * enrolled under it holds a credential that is not revoked.
   */
  | { code: 'instance_conflict'; instance: string; enrolled?: true | undefined }
  /**
   * An instance named another id than its own: at enrolment (`enrolment`: the token names
   * another), or in a request (`request`: the path names another than its credential's).
   */
  | { code: 'instance_mismatch'; instance: string; where: 'enrolment' | 'request' }
  /** No group of instances of this name is declared (`fleet.groups`). */
  | { code: 'group_not_found'; group: string }
  /** The instance is not in the group by an assignment (a rule of the settings may still hold it). */
  | { code: 'assignment_not_found'; group: string; instance: string }
  /** No snapshot of flows with that id. */
  | { code: 'snapshot_not_found'; id: string }
  /** An instance sent flows for a snapshot nobody asked it for (or asked for under another name). */
  | { code: 'snapshot_not_asked'; instance: string; name: string }
  /** A snapshot's file would have `bytes` bytes, past the bound (`fleet.snapshots.maxBytes`). */
  | { code: 'snapshot_too_large'; bytes: number; limit: number }
  /** No rollout with that id. */
  | { code: 'rollout_not_found'; id: string }
  /** The group has had no other snapshot rolled out before its latest: there is nothing to go back to. */
  | { code: 'no_previous_target'; group: string }
  /** No rollout reaches the instance: there are no flows for it to deploy. */
  | { code: 'no_target'; instance: string }
  /** An instance reported on a rollout that does not reach it. */
  | { code: 'not_targeted'; instance: string; rollout: string }
  /** No flow variable of that name in that scope. */
  | { code: 'variable_not_found'; scope: string; name: string }
  /** A secret variable cannot be set: no key to seal it with is configured. */
  | { code: 'sealing_not_configured' }
  /** An enrolment token unknown, spent, expired or cancelled. Carries no detail (the trail has it). */
  | { code: 'invalid_enrolment' }
  /** The resource server holds as many enrolled instances as `fleet.maxInstances` allows. */
  | { code: 'too_many_instances'; limit: number }
  /** The deployed flows cannot be read, so no disable can be checked; nothing was changed. */
  | { code: 'flows_unavailable' }
  /** A second factor cannot be enrolled: no key for TOTP secrets is configured. */
  | { code: 'mfa_not_configured' }
  /** The person has a confirmed second factor already; it must be removed before another is enrolled. */
  | { code: 'factor_exists' }
  /** No enrolment awaits a code (none began, or another one replaced it). */
  | { code: 'enrolment_not_found' }
  /**
   * The password was right, but the person must give a second factor, which the password grant
   * cannot ask for: people sign in on flowadmin's sign-in page, scripts use an API token.
   */
  | { code: 'mfa_required' }
  /**
   * Changing a person's second factors needs a recent sign-in, so the person signs in again
   * first: adding one (`add_factor`) a session begun within `minutes`, so a session taken from
   * them cannot add a factor of its own; removing one (`remove_factor`) a session begun within
   * `minutes` whose sign-in used a second factor, so less than a second factor cannot strip one.
   */
  | {
      code: 'reauthentication_required'
      minutes: number
      action: 'add_factor' | 'remove_factor' | 'fleet_install'
    }
  /**
   * The person signs in with the identity provider (single sign-on), where a second factor of
   * flowadmin's is never asked for: one cannot be set up for them here.
   */
  | { code: 'provider_sign_in' }
  /** A second factor's code was refused (wrong, expired or used already). Carries no detail. */
  | { code: 'invalid_code' }
  /** Passkeys cannot be used: no relying party is configured (`adminAuth.webauthn`). */
  | { code: 'passkeys_not_configured' }
  /** The person has as many passkeys as one may have (see MAX_PASSKEYS). */
  | { code: 'too_many_passkeys'; limit: number }
  /** No passkey with that id among the person's. */
  | { code: 'passkey_not_found'; id: string }
  /** A passkey's name is empty or longer than 64 characters. */
  | { code: 'invalid_passkey_name' }
  /**
   * The authenticator's answer was refused: its challenge unknown, used or past its time, the
   * passkey unknown or its person gone, a signature, origin or relying party that does not
   * verify, or a counter that did not grow. Carries no detail (the audit event has the reason).
   */
  | { code: 'passkey_refused' }
  /**
   * A sign-in could not end: too many wait to finish (their one-time codes) from the client's
   * address (`address`: an IPv6 /64 or the IPv4 address), or in all (`all`). Nothing was evicted
   * to make room.
   */
  | { code: 'too_many_sign_ins'; scope: 'address' | 'all' }
  /** An install or removal that did not happen. */
  | InstallFailure

export type DomainErrorCode = DomainError['code']
export type ErrorOf<C extends DomainErrorCode> = Extract<DomainError, { code: C }>

/** The `code` property of a thrown value (Node and driver errors carry one), or ''. */
export const codeOf = (error: unknown): string =>
  typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string'
    ? (error as { code: string }).code
    : ''

/**
 * The message of anything thrown, without a stack: an Error's message (the first inner error's
 * for an AggregateError, as a connection tried on several addresses fails), else the value as
 * text; an empty message falls back to the error's code, then to 'unknown error'.
 */
export function messageOf(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return messageOf(error.errors[0])
  const text = error instanceof Error ? error.message : String(error)
  return text === '' ? codeOf(error) || 'unknown error' : text
}
