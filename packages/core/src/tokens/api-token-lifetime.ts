import { type DomainError, err, invalid, ok, type Result } from '../errors.js'

type LifetimeError = Extract<DomainError, { code: 'invalid_request' }>

/** Seconds in a day. */
const DAY = 86_400

/** Lifetimes of named API tokens, in seconds. */
export interface ApiTokenOptions {
  /** When a request names none; default 90 days. */
  expiryTime: number
  /** The longest a request may ask for; default 365 days. */
  maxExpiryTime: number
  /** Whether a request may ask for a token that never expires (`expiresIn: null`); default false. */
  allowNoExpiry: boolean
}

export const DEFAULT_API_TOKENS: ApiTokenOptions = {
  expiryTime: 90 * DAY,
  maxExpiryTime: 365 * DAY,
  allowNoExpiry: false,
}

/**
 * The lifetime of an API token of a signed-in person, which ends with their session: the default
 * is cut to the session's remaining seconds, a longer one asked for is refused.
 */
export function withinSession(
  lifetime: number | null,
  asked: number | null | undefined,
  remainingMs: number,
): Result<number | null, LifetimeError> {
  const remaining = Math.max(1, Math.floor(remainingMs / 1000))
  if (lifetime !== null && lifetime <= remaining) return ok(lifetime)
  if (asked === undefined) return ok(remaining)
  return err(
    invalid(
      `expires_in must be at most ${remaining} seconds: a token of a single sign-on ends with the session it was created in`,
    ),
  )
}

/** Checks API token lifetimes from settings; throws a RangeError naming the field. */
export function checkApiTokenOptions(options: ApiTokenOptions): void {
  for (const field of ['expiryTime', 'maxExpiryTime'] as const) {
    const value = options[field]
    if (!Number.isSafeInteger(value) || value <= 0) {
      throw new RangeError(`apiTokens.${field} must be a positive whole number of seconds`)
    }
  }
  if (options.expiryTime > options.maxExpiryTime) {
    throw new RangeError('apiTokens.expiryTime must not exceed apiTokens.maxExpiryTime')
  }
}

/** The lifetime an API token request asks for (`expiresIn`, seconds) as the settings allow it. */
export function lifetimeOf(
  options: ApiTokenOptions,
  expiresIn: number | null | undefined,
): Result<number | null, LifetimeError> {
  if (expiresIn === undefined) return ok(options.expiryTime)
  if (expiresIn === null) {
    return options.allowNoExpiry
      ? ok(null)
      : err(
          invalid(
            'Tokens that never expire are not allowed here: set adminAuth.apiTokens.allowNoExpiry to true to allow them',
          ),
        )
  }
  if (!Number.isSafeInteger(expiresIn) || expiresIn <= 0) {
    return err(invalid('expires_in must be a positive whole number of seconds'))
  }
  if (expiresIn > options.maxExpiryTime) {
    return err(invalid(`expires_in must be at most ${options.maxExpiryTime} seconds`))
  }
  return ok(expiresIn)
}
