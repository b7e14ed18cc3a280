// Waiting for something a test cannot be told about directly, always with a deadline, so a test
// whose event never comes fails saying what it waited for instead of hanging until its timeout.

/** How long a wait lasts by default: well within a test's timeout, far beyond any real wait. */
export const DEFAULT_WAIT_MS = 10_000

export interface WaitOptions {
  /** The deadline, in milliseconds from the start of the wait. */
  timeoutMs?: number
}

/** The failure of a wait that reached its deadline. */
function deadlineError(what: string | (() => string), timeoutMs: number): Error {
  return new Error(`Waited ${timeoutMs} ms for ${typeof what === 'string' ? what : what()}`)
}

/**
 * Polls `condition` every millisecond until it holds. Past the deadline it fails with `what`
 * (a function to describe the state seen last, say a count).
 */
export async function waitFor(
  condition: () => boolean,
  what: string | (() => string),
  { timeoutMs = DEFAULT_WAIT_MS }: WaitOptions = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() >= deadline) throw deadlineError(what, timeoutMs)
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
}

/** `promise`, or past the deadline a failure saying what it was waiting for. */
export function withDeadline<T>(
  promise: PromiseLike<T>,
  what: string,
  { timeoutMs = DEFAULT_WAIT_MS }: WaitOptions = {},
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(deadlineError(what, timeoutMs)), timeoutMs)
  })
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer))
}

/** A signal one part of a test gives and another waits for. */
export interface Signal {
  /** Resolves once `give()` has been called. */
  given: Promise<void>
  give: () => void
}

/** A new signal, not given yet; a wait on it has no deadline (see {@link withDeadline}). */
export function createSignal(): Signal {
  let give!: () => void
  const given = new Promise<void>((resolve) => {
    give = resolve
  })
  return { given, give }
}
