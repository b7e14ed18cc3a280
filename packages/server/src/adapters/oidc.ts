// The identity provider port over openid-client (certified OpenID Connect relying party): discovery,
// the authorization URL with PKCE (S256), the code exchange with the ID token's checks (signature
// against the provider's JWKS, fetched again when a key id is unknown, at most once a minute; iss,
// aud, exp, nonce; state),
// and the userinfo claims when the ID token lacks the ones the settings name. Logout tokens are
// verified with jose (the library openid-client verifies with) against the same JWKS, with the
// checks of OpenID Connect Back-Channel Logout 1.0 §2.6: its algorithm one the provider announces
// for ID tokens (never `none`), its type `logout+jwt` when it says one, iss, aud, iat, exp when
// given, the logout event, no nonce, a `jti`, and `sub` or `sid`.
import type {
  IdentityProvider,
  LogoutRequest,
  PendingSignIn,
  ProviderFailure,
  ProviderIdentity,
  ProviderResult,
} from '@flowadmin/core'
import { messageOf } from '@flowadmin/core'
import { createRemoteJWKSet, type JWTHeaderParameters, type JWTPayload, jwtVerify } from 'jose'
import * as client from 'openid-client'
import type { OidcSettings } from '../config/settings/oidc.js'

/** The events claim member that makes a JWT a back-channel logout token. */
const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout'
/** Seconds a request to the provider may take. */
const PROVIDER_TIMEOUT_SECONDS = 10
/** Seconds of clock difference with the provider tolerated in a logout token's times. */
const CLOCK_TOLERANCE_SECONDS = 30
/** Logout tokens older than this are refused (their `iat`). */
const LOGOUT_TOKEN_MAX_AGE_SECONDS = 300
/** ID tokens' algorithm when the provider announces none (OpenID Connect Core 1.0 §3.1.3.7). */
const DEFAULT_SIGNING_ALGORITHM = 'RS256'
/**
 * A logout token's `typ` when it gives one: `logout+jwt` (Back-Channel Logout 1.0 §2.4), with or
 * without `application/`, in any case (RFC 7515 §4.1.9); the generic `JWT` says nothing of what
 * the token is for and is taken as untyped (older providers, Keycloak before 25, send it). Any other
 * type is another kind of token.
 */
const LOGOUT_TYPES = new Set(['logout+jwt', 'application/logout+jwt', 'jwt', 'application/jwt'])

/**
 * The algorithms a logout token may be signed with: those the provider announces for ID tokens
 * (§2.6: validated as for ID tokens), RS256 when it announces none; never `none`, nor a MAC (the
 * keys are the provider's public ones).
 */
function logoutAlgorithms(announced: readonly string[] | undefined): string[] {
  const usable = (announced ?? [DEFAULT_SIGNING_ALGORITHM]).filter(
    (alg) => alg !== 'none' && !alg.startsWith('HS'),
  )
  return usable.length > 0 ? usable : [DEFAULT_SIGNING_ALGORITHM]
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]'])

const failure = (kind: ProviderFailure['kind'], message: string): { ok: false; error: ProviderFailure } => ({
  ok: false,
  error: { kind, message },
})

/** The library's message, with the check that failed when it wraps one ("invalid response encountered"). */
function detailOf(error: unknown): string {
  const cause = (error as { cause?: unknown }).cause
  return cause instanceof Error ? `${messageOf(error)}: ${messageOf(cause)}` : messageOf(error)
}

/**
 * How a failure of the library reads to the person and the log: the provider's own refusal (an
 * error in the callback), a server error or no answer (unavailable), or a check that failed.
 */
function classify(error: unknown): { ok: false; error: ProviderFailure } {
  if (error instanceof client.AuthorizationResponseError) {
    const description = error.error_description ? `: ${error.error_description}` : ''
    return failure('refused', `The identity provider refused the sign-in (${error.error}${description}).`)
  }
  if (error instanceof client.ResponseBodyError) {
    if (error.status >= 500) return failure('unavailable', `The identity provider answered ${error.status}.`)
    const description = error.error_description ? `: ${error.error_description}` : ''
    return failure('invalid', `The identity provider refused the code (${error.error}${description}).`)
  }
  // fetch's own failure (refused, reset, no such host) or a timeout, itself or as the cause the
  // library wraps: the provider is not there now.
  for (let seen: unknown = error, depth = 0; seen instanceof Error && depth < 4; depth++) {
    if (seen instanceof TypeError && seen.message === 'fetch failed') {
      return failure('unavailable', `The identity provider cannot be reached (${detailOf(seen)}).`)
    }
    if (seen.name === 'TimeoutError' || seen.name === 'AbortError') {
      return failure('unavailable', 'The identity provider did not answer in time.')
    }
    seen = seen.cause
  }
  if ((error as { code?: unknown }).code === 'OAUTH_RESPONSE_IS_NOT_CONFORM') {
    return failure('unavailable', `The identity provider gave an unusable answer (${messageOf(error)}).`)
  }
  return failure('invalid', `The identity provider's answer failed a check: ${detailOf(error)}.`)
}

/** The port over openid-client for `adminAuth.oidc`; nothing is fetched until the first sign-in. */
export function createOidcProvider(settings: OidcSettings): IdentityProvider {
  const issuer = new URL(settings.issuer)
  const insecure = issuer.protocol === 'http:' && LOOPBACK.has(issuer.hostname)
  const scope = settings.scope ?? 'openid profile email'
  let configuration: Promise<client.Configuration> | null = null
  let logoutKeys: { uri: string; keys: ReturnType<typeof createRemoteJWKSet> } | null = null

  /** The provider's configuration, discovered once; a failed discovery is tried again next time. */
  function discover(): Promise<client.Configuration> {
    configuration ??= client
      .discovery(issuer, settings.clientId, undefined, client.ClientSecretBasic(settings.clientSecret), {
        timeout: PROVIDER_TIMEOUT_SECONDS,
        // The ID token's signature is verified against the provider's keys even though it comes
        // straight from the token endpoint (OpenID Connect would let TLS stand in for it).
        execute: insecure
          ? [client.enableNonRepudiationChecks, client.allowInsecureRequests]
          : [client.enableNonRepudiationChecks],
      })
      .catch((error: unknown) => {
        configuration = null
        throw error
      })
    return configuration
  }

  /** The claims the settings need: the ID token's, completed from userinfo when one is missing. */
  async function claimsOf(
    config: client.Configuration,
    tokens: client.TokenEndpointResponse,
    idToken: client.IDToken,
  ): Promise<Record<string, unknown>> {
    const needed = [settings.usernameClaim ?? 'preferred_username', settings.permissions.claim]
    if (needed.every((claim) => claim in idToken)) return { ...idToken }
    if (config.serverMetadata().userinfo_endpoint === undefined) return { ...idToken }
    const userinfo = await client.fetchUserInfo(config, tokens.access_token, idToken.sub)
    return { ...userinfo, ...idToken }
  }

  return {
    issuer: settings.issuer,

    async authorizationUrl(pending: PendingSignIn): Promise<ProviderResult<string>> {
      try {
        const config = await discover()
        const url = client.buildAuthorizationUrl(config, {
          redirect_uri: pending.redirectUri,
          scope,
          state: pending.state,
          nonce: pending.nonce,
          code_challenge: await client.calculatePKCECodeChallenge(pending.codeVerifier),
          code_challenge_method: 'S256',
        })
        return { ok: true, value: url.href }
      } catch (error) {
        const classified = classify(error)
        return classified.error.kind === 'invalid'
          ? failure('unavailable', `The identity provider cannot be used: ${messageOf(error)}.`)
          : classified
      }
    },

    async complete(callbackUrl: string, pending: PendingSignIn): Promise<ProviderResult<ProviderIdentity>> {
      try {
        const config = await discover()
        const tokens = await client.authorizationCodeGrant(config, new URL(callbackUrl), {
          pkceCodeVerifier: pending.codeVerifier,
          expectedState: pending.state,
          expectedNonce: pending.nonce,
          idTokenExpected: true,
        })
        const idToken = tokens.claims()
        if (idToken === undefined) return failure('invalid', 'The identity provider sent no ID token.')
        const claims = await claimsOf(config, tokens, idToken)
        const sid = idToken.sid
        return {
          ok: true,
          value: { subject: idToken.sub, sessionId: typeof sid === 'string' ? sid : null, claims },
        }
      } catch (error) {
        return classify(error)
      }
    },

    async verifyLogoutToken(logoutToken: string): Promise<ProviderResult<LogoutRequest>> {
      let config: client.Configuration
      try {
        config = await discover()
      } catch (error) {
        return classify(error)
      }
      const metadata = config.serverMetadata()
      if (metadata.jwks_uri === undefined)
        return failure('unavailable', 'The identity provider has no jwks_uri.')
      if (logoutKeys?.uri !== metadata.jwks_uri) {
        logoutKeys = { uri: metadata.jwks_uri, keys: createRemoteJWKSet(new URL(metadata.jwks_uri)) }
      }
      let payload: JWTPayload
      let header: JWTHeaderParameters
      try {
        ;({ payload, protectedHeader: header } = await jwtVerify(logoutToken, logoutKeys.keys, {
          issuer: metadata.issuer,
          audience: settings.clientId,
          algorithms: logoutAlgorithms(metadata.id_token_signing_alg_values_supported),
          requiredClaims: ['iat'],
          maxTokenAge: LOGOUT_TOKEN_MAX_AGE_SECONDS,
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
        }))
      } catch (error) {
        const code = (error as { code?: unknown }).code
        if (
          code === 'ERR_JWKS_TIMEOUT' ||
          (error instanceof TypeError && messageOf(error) === 'fetch failed')
        )
          return failure(
            'unavailable',
            `The identity provider's keys cannot be fetched (${messageOf(error)}).`,
          )
        return failure('invalid', `The logout token failed a check: ${messageOf(error)}.`)
      }
      const events = payload.events
      if (
        typeof events !== 'object' ||
        events === null ||
        typeof (events as Record<string, unknown>)[BACKCHANNEL_LOGOUT_EVENT] !== 'object' ||
        (events as Record<string, unknown>)[BACKCHANNEL_LOGOUT_EVENT] === null
      ) {
        return failure(
          'invalid',
          `The logout token's events claim has no ${BACKCHANNEL_LOGOUT_EVENT} member.`,
        )
      }
      if (header.typ !== undefined && !LOGOUT_TYPES.has(header.typ.toLowerCase()))
        return failure(
          'invalid',
          `The logout token's type (typ) is ${JSON.stringify(header.typ.slice(0, 64))}, not logout+jwt.`,
        )
      if ('nonce' in payload) return failure('invalid', 'A logout token must not carry a nonce.')
      if (typeof payload.jti !== 'string' || payload.jti === '')
        return failure('invalid', 'The logout token has no jti (its unique identifier).')
      const subject = typeof payload.sub === 'string' ? payload.sub : null
      const sessionId = typeof payload.sid === 'string' ? payload.sid : null
      if (subject === null && sessionId === null)
        return failure('invalid', 'The logout token names neither a subject (sub) nor a session (sid).')
      // Accepted until its exp, and at most LOGOUT_TOKEN_MAX_AGE_SECONDS after its iat (give or take
      // the tolerance): its jti is remembered that long, so it is taken once.
      const iat = payload.iat as number
      const lastAccepted = Math.min(
        typeof payload.exp === 'number' ? payload.exp : Number.POSITIVE_INFINITY,
        iat + LOGOUT_TOKEN_MAX_AGE_SECONDS,
      )
      const expiresAt = (lastAccepted + CLOCK_TOLERANCE_SECONDS) * 1000
      return { ok: true, value: { subject, sessionId, tokenId: payload.jti, expiresAt } }
    },
  }
}
