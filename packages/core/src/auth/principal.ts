import type { DomainError } from '../errors.js'
import type { Actor, SignInMethod, TokenKind } from '../ports/index.js'

/** Whoever makes a request, once authenticated. */
export type Principal =
  | {
      kind: 'user'
      username: string
      clientId: string
      /** The token's scope ∩ the user's permissions now, at flowadmin (see access/rights.ts). */
      permissions: string[]
      /**
       * The token's scope as words (a ceiling of its rights anywhere): what a token it makes may
       * hold at most. Absent (a principal made by hand): its permissions.
       */
      scope?: string[] | undefined
      /** The public id of the token in use. */
      tokenId: string
      /** A session (a sign-in) or an API token. */
      tokenKind: TokenKind
      /**
       * Whom the token is for: `flowadmin`, except where a route takes a token of any audience
       * (ending itself at `POST /auth/revoke`).
       */
      audience: string
      /**
       * The identity provider or the directory the token's owner signed in with (its label);
       * absent for one of the settings' users.
       */
      provider?: string | undefined
      /** When the token was issued (ms since the epoch): for a session, when its person signed in. */
      signedInAt: number
      /**
       * How a session's person signed in (see SignInMethod); null for an API token and for a
       * session saved before sessions recorded it.
       */
      signIn: SignInMethod | null
    }
  | { kind: 'anonymous'; permissions: string[] }

/** A person signed in with a token. */
export type UserPrincipal = Extract<Principal, { kind: 'user' }>

export type AccessError = Extract<DomainError, { code: 'unauthenticated' | 'forbidden' }>

/** Which tokens a route takes. */
export interface AudienceOptions {
  /**
   * Tokens of any audience, not only flowadmin's: for `POST /auth/revoke`, where a token may end
   * itself whoever it is for. A principal whose token is not flowadmin's can do nothing else.
   */
  anyAudience?: boolean | undefined
}

/** Whoever acts from the command line, on the store directly: every right, no user. */
export const operator: Principal = { kind: 'anonymous', permissions: ['*'] }

/** The actor of an event, from a principal. */
export function actorOf(principal: Principal, address: string | null): Actor {
  return principal.kind === 'user'
    ? { username: principal.username, clientId: principal.clientId, address }
    : { username: null, clientId: null, address }
}
