/**
 * What a store adapter throws when its backing service cannot answer now (a database that went
 * away, a connection that timed out). It is an infrastructure failure, not a domain outcome, so it
 * travels as a throw; the HTTP edge answers it with 503 and `Retry-After` instead of a 500.
 * Recognised by its `code`, never by `instanceof`, so it crosses package and realm boundaries.
 */
export interface StoreUnavailable extends Error {
  readonly code: 'storage_unavailable'
  /** Whole seconds after which a retry may succeed (at least 1). */
  readonly retryAfter: number
}

/** A StoreUnavailable error; `cause` keeps the driver's error for the server log. */
export function storeUnavailable(message: string, retryAfter: number, cause?: unknown): StoreUnavailable {
  const error = new Error(message, cause === undefined ? undefined : { cause }) as Error & {
    code: 'storage_unavailable'
    retryAfter: number
  }
  error.name = 'StoreUnavailable'
  error.code = 'storage_unavailable'
  error.retryAfter = Math.max(1, Math.ceil(retryAfter))
  return error
}

/** True for an error a store threw because its backing service cannot answer now. */
export function isStoreUnavailable(error: unknown): error is StoreUnavailable {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { code?: unknown }).code === 'storage_unavailable' &&
    typeof (error as { retryAfter?: unknown }).retryAfter === 'number'
  )
}
