import { type DomainError, err, ok, type Result } from '../errors.js'
import type {
  Actor,
  Clock,
  Digest,
  EventSink,
  FactorStore,
  NewTotpSecret,
  PasskeyStore,
  RandomSource,
  TotpVerifier,
} from '../ports/index.js'
import type { Tokens } from '../tokens/tokens.js'
import { endOtherSessions } from './sessions.js'
import type { Throttle } from './throttle.js'

/** Recovery codes a person gets at enrolment: each used once, all replaced at the next enrolment. */
export const RECOVERY_CODE_COUNT = 10

/** Characters of a recovery code (Crockford's base32: no i, l, o, u), 5 bits each. */
const RECOVERY_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'
/** Characters of a recovery code, shown as two groups of five: 50 random bits. */
const RECOVERY_LENGTH = 10

/** Longest code looked at: anything longer is wrong without further work. */
const MAX_CODE_LENGTH = 64

export type FactorError = Extract<
  DomainError,
  {
    code:
      | 'mfa_not_configured'
      | 'factor_exists'
      | 'enrolment_not_found'
      | 'invalid_code'
      | 'throttled'
      | 'temporarily_unavailable'
  }
>

/** A person's second factors, as they may see them (never a secret). */
export interface FactorStatus {
  /** `none`, an enrolment awaiting its first code, or a confirmed factor. */
  totp: 'none' | 'pending' | 'enrolled'
  /** Unused recovery codes left. */
  recoveryCodes: number
  /** When the TOTP factor was confirmed; null while there is none confirmed. */
  enrolledAt: number | null
  /**
   * Whether it was set up during a sign-in, with the password alone (the policy asked for it
   * there), rather than from a session of the person's: worth the person's notice.
   */
  enrolledAtSignIn: boolean
}

/** What a person enrolling sees once: the secret, its URI and QR code. */
export type TotpEnrolment = Omit<NewTotpSecret, 'sealed'>

/** How a second factor was proven. */
export type FactorKind = 'totp' | 'recovery_code'

export interface FactorDeps {
  store: FactorStore
  /** People's passkeys: removed with their other factors. */
  passkeys: PasskeyStore
  /** Absent when no key for TOTP secrets is configured: enrolment is then refused. */
  totp: TotpVerifier | null
  throttle: Throttle
  tokens: Tokens
  digest: Digest
  random: RandomSource
  clock: Clock
  events: EventSink
}

/** What a person typed as a recovery code, in the form it was issued: lowercase, no separators. */
const normalizeRecoveryCode = (code: string): string =>
  code.toLowerCase().replace(/[\s-]/g, '').replace(/[il]/g, '1').replace(/o/g, '0')

const isTotpCode = (code: string) => /^\d{6}$/.test(code)

/**
 * People's second factors: TOTP enrolment (a secret, confirmed by one code, then ten recovery
 * codes shown once) and the check of a code at sign-in. Codes are throttled per user in the
 * throttle's factor lane; a step or a recovery code is accepted once, by the store.
 */
export function createFactors(deps: FactorDeps) {
  const { store, throttle, tokens, digest, random, clock, events } = deps

  const hashRecoveryCode = (username: string, normalized: string) =>
    digest.sha256(`recovery-code\n${username}\n${normalized}`)

  const newRecoveryCodes = (): string[] =>
    Array.from({ length: RECOVERY_CODE_COUNT }, () => {
      const chars = Array.from(random.bytes(RECOVERY_LENGTH), (byte) => RECOVERY_ALPHABET[byte & 31]).join('')
      return `${chars.slice(0, 5)}-${chars.slice(5)}`
    })

  const endSessions = (username: string, keep: string | null) => endOtherSessions(tokens, username, keep)

  /** After factors of `username` were removed: their other sessions end, audited; true. */
  const removed = async (actor: Actor, username: string, keep: string | null, factors: 'totp' | 'all') => {
    const sessionsEnded = await endSessions(username, keep)
    events.emit({ type: 'mfa.removed', at: clock.now(), owner: username, factors, sessionsEnded, ...actor })
    return true
  }

  /**
   * Runs one code attempt in the throttle's factor lane: `check` says whether the code holds and
   * why not. Failures are recorded and audited; a throttled attempt checks nothing.
   */
  const attempt = async <T>(
    actor: Actor & { username: string },
    factor: FactorKind,
    check: () => Promise<{ ok: true; value: T } | { ok: false; reason: 'wrong' | 'replayed' }>,
  ): Promise<Result<T, FactorError>> => {
    const decision = await throttle.begin(actor.username, actor.address ?? '', 'factor')
    if (decision.outcome === 'throttled') {
      events.emit({ type: 'mfa.throttled', at: clock.now(), retryAfter: decision.retryAfter, ...actor })
      return err({ code: 'throttled', retryAfter: decision.retryAfter })
    }
    if (decision.outcome === 'busy') return err({ code: 'temporarily_unavailable', retryAfter: 1 })
    let outcome: 'failed' | 'succeeded' | 'abandoned' = 'abandoned'
    try {
      const checked = await check()
      outcome = checked.ok ? 'succeeded' : 'failed'
      if (!checked.ok) {
        events.emit({ type: 'mfa.failed', at: clock.now(), factor, reason: checked.reason, ...actor })
        return err({ code: 'invalid_code' })
      }
      return ok(checked.value)
    } finally {
      await throttle.finish(decision.attempt, outcome)
    }
  }

  return {
    /** Whether TOTP can be enrolled here (a key for its secrets is configured). */
    available: deps.totp !== null,

    async status(username: string): Promise<FactorStatus> {
      const factor = await store.findTotp(username)
      const enrolledAt = factor?.confirmedAt ?? null
      return {
        totp: factor === null ? 'none' : enrolledAt === null ? 'pending' : 'enrolled',
        recoveryCodes: enrolledAt === null ? 0 : await store.countRecoveryCodes(username),
        enrolledAt,
        enrolledAtSignIn: enrolledAt !== null && factor?.confirmedAtSignIn === true,
      }
    },

    /** True when the person has a confirmed second factor, so that a sign-in must ask for it. */
    async required(username: string): Promise<boolean> {
      return (await store.findTotp(username))?.confirmedAt != null
    },

    /**
     * Begins a TOTP enrolment for the person: a new secret (replacing an enrolment not yet
     * confirmed), shown once. Refused when the person has a confirmed factor already.
     */
    async startTotp(username: string): Promise<Result<TotpEnrolment, FactorError>> {
      if (deps.totp === null) return err({ code: 'mfa_not_configured' })
      const { sealed, ...shown } = await deps.totp.create(username)
      if (!(await store.startTotp(username, sealed, clock.now()))) return err({ code: 'factor_exists' })
      return ok(shown)
    },

    /**
     * Confirms the person's enrolment with one code of the new secret; then the person gets ten
     * recovery codes (shown once: only their hashes are kept), and their sessions end but the one
     * confirming (`from`), or all of them when it is confirmed during a sign-in (`sign_in`).
     */
    async confirmTotp(
      actor: Actor & { username: string },
      code: string,
      from: { session: string } | 'sign_in',
    ): Promise<Result<{ recoveryCodes: string[] }, FactorError>> {
      const verifier = deps.totp
      if (verifier === null) return err({ code: 'mfa_not_configured' })
      const { username } = actor
      const factor = await store.findTotp(username)
      if (factor === null) return err({ code: 'enrolment_not_found' })
      if (factor.confirmedAt !== null) return err({ code: 'factor_exists' })
      const checked = await attempt<number>(actor, 'totp', async () => {
        const step =
          code.length > MAX_CODE_LENGTH
            ? null
            : await verifier.check(username, factor.secret, code, clock.now())
        return step === null ? { ok: false, reason: 'wrong' } : { ok: true, value: step }
      })
      if (!checked.ok) return checked
      // Another enrolment began meanwhile (its secret is not the one this code was checked against).
      const atSignIn = from === 'sign_in'
      if (!(await store.confirmTotp(username, factor.secret, checked.value, clock.now(), atSignIn)))
        return err({ code: 'enrolment_not_found' })
      const recoveryCodes = newRecoveryCodes()
      const hashes = await Promise.all(
        recoveryCodes.map((shown) => hashRecoveryCode(username, normalizeRecoveryCode(shown))),
      )
      await store.replaceRecoveryCodes(username, hashes, clock.now())
      const sessionsEnded = await endSessions(username, atSignIn ? null : from.session)
      events.emit({
        type: 'mfa.enrolled',
        at: clock.now(),
        factor: 'totp',
        atSignIn,
        sessionsEnded,
        ...actor,
      })
      return ok({ recoveryCodes })
    },

    /**
     * Checks a person's second factor at sign-in: a TOTP code (six digits) or, otherwise, one of
     * their recovery codes, used up. A code whose step was used already is refused (replayed).
     */
    async verify(
      actor: Actor & { username: string },
      typed: string,
    ): Promise<Result<FactorKind, FactorError>> {
      const { username } = actor
      const code = typed.replace(/\s/g, '')
      const factor = await store.findTotp(username)
      const confirmed = factor !== null && factor.confirmedAt !== null
      const kind: FactorKind = isTotpCode(code) ? 'totp' : 'recovery_code'
      const checked = await attempt<FactorKind>(actor, kind, async () => {
        if (!confirmed || code.length > MAX_CODE_LENGTH) return { ok: false, reason: 'wrong' }
        if (kind === 'totp') {
          if (deps.totp === null) return { ok: false, reason: 'wrong' }
          const step = await deps.totp.check(username, factor.secret, code, clock.now())
          if (step === null) return { ok: false, reason: 'wrong' }
          return (await store.useTotpStep(username, step))
            ? { ok: true, value: kind }
            : { ok: false, reason: 'replayed' }
        }
        const hash = await hashRecoveryCode(username, normalizeRecoveryCode(code))
        if (!(await store.useRecoveryCode(username, hash))) return { ok: false, reason: 'wrong' }
        const remaining = await store.countRecoveryCodes(username)
        events.emit({ type: 'mfa.recovery_used', at: clock.now(), remaining, ...actor })
        return { ok: true, value: kind }
      })
      if (checked.ok) events.emit({ type: 'mfa.succeeded', at: clock.now(), factor: checked.value, ...actor })
      return checked
    },

    /**
     * Removes every second factor of `username` (TOTP, recovery codes, passkeys) and ends their
     * sessions other than `keepToken`; true when there was any factor. The caller checked it may.
     */
    async remove(actor: Actor, username: string, keepToken: string | null): Promise<boolean> {
      const hadTotp = await store.deleteFactors(username)
      const passkeys = await deps.passkeys.deleteAll(username)
      return (hadTotp || passkeys > 0) && removed(actor, username, keepToken, 'all')
    },

    /**
     * Removes the TOTP factor (and recovery codes) of `username`, their passkeys kept, and ends
     * their sessions other than `keepToken`; true when there was one. The caller checked it may.
     */
    async removeTotp(actor: Actor, username: string, keepToken: string | null): Promise<boolean> {
      return (await store.deleteFactors(username)) && removed(actor, username, keepToken, 'totp')
    },
  }
}

export type Factors = ReturnType<typeof createFactors>
