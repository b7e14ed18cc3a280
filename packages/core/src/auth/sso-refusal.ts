import type { AuthorizationRequest, SsoRefusalReason } from '../ports/index.js'

/** Why a sign-in got no token (see the `sso.refused` event). */
export interface SsoRefusal {
  reason: SsoRefusalReason
  message: string
  /**
   * The resource server's authorization request the refused sign-in began with, when there is
   * one: the refusal goes back to its redirect URI (RFC 6749 §4.1.2.1).
   */
  authorization?: AuthorizationRequest
}
