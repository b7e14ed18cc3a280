// A single sign-on's start as its browser carries it (in an HttpOnly cookie) to the provider and
// back: its challenge (see carried-challenges) and where the sign-in goes, which the challenge
// authenticates. Its state, nonce and PKCE verifier are derived from the challenge with the
// server's key, so they never leave the server and nothing of them is stored.
import type { AuthorizationRequest, PendingSignIn } from '../ports/index.js'
import type { CarriedChallenges } from './carried-challenges.js'

/** What a started sign-in needs at its answer besides its challenge. */
export interface SsoStart {
  /** Where the provider sends the browser back (and the code exchange names). */
  redirectUri: string
  /** Where the console lands afterwards. */
  returnTo: string
  /** The resource server's request it began with, or null: the console's sign-in. */
  authorization: AuthorizationRequest | null
}

/** The start as the browser carries it: the challenge, a dot, and `carries` (the start's JSON). */
export const carriedStart = (challenge: string, carries: string): string => `${challenge}.${carries}`

const isText = (value: unknown): value is string => typeof value === 'string'

/** Whether `value` is an authorization request as a start carries one. */
const isAuthorization = (value: unknown): value is AuthorizationRequest => {
  const request = value as Partial<AuthorizationRequest> | null
  return (
    typeof request === 'object' &&
    request !== null &&
    isText(request.clientId) &&
    isText(request.redirectUri) &&
    isText(request.codeChallenge) &&
    (request.state === null || isText(request.state))
  )
}

/**
 * The parts of a carried start: its challenge, the text its challenge authenticates, and the
 * start read from that text; null when it is not of that form. Its challenge is not checked here.
 */
export function readStart(carried: string): { challenge: string; carries: string; start: SsoStart } | null {
  const dot = carried.indexOf('.')
  if (dot < 0 || carried.length > 8192) return null
  const carries = carried.slice(dot + 1)
  try {
    const start = JSON.parse(carries) as Partial<SsoStart> | null
    if (
      typeof start !== 'object' ||
      start === null ||
      !isText(start.redirectUri) ||
      !isText(start.returnTo) ||
      !(start.authorization === null || isAuthorization(start.authorization))
    )
      return null
    const { redirectUri, returnTo, authorization } = start
    return { challenge: carried.slice(0, dot), carries, start: { redirectUri, returnTo, authorization } }
  } catch {
    return null
  }
}

/** The secrets of the sign-in whose challenge is `id`, for the provider: derived, never stored. */
export async function pendingSignIn(
  challenges: CarriedChallenges,
  id: string,
  redirectUri: string,
): Promise<PendingSignIn> {
  return {
    redirectUri,
    state: await challenges.derive('sso-state', id),
    nonce: await challenges.derive('sso-nonce', id),
    codeVerifier: await challenges.derive('sso-pkce', id),
  }
}
