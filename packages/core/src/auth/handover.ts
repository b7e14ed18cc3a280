// The handover at the end of a sign-in: whoever signed in (with the identity provider, or on
// flowadmin's own page) gets a one-time code, never a token, and the code is traded once for a
// session: by the console, from the browser that began the sign-in, or by the resource server
// whose authorization request began it (with its redirect URI and PKCE verifier).
import { err, ok, type Result } from '../errors.js'
import type {
  AuthorizationRequest,
  Clock,
  Digest,
  EventSink,
  IssuedCode,
  LocalSignInMethod,
  RandomSource,
  SsoStore,
  WaitingBounds,
  WaitingSave,
} from '../ports/index.js'
import { FLOWADMIN_AUDIENCE } from '../tokens/audience.js'
import { base64url } from '../tokens/encoding.js'
import { isDirectoryRecord } from '../tokens/owner.js'
import type { IssuedToken, Tokens } from '../tokens/tokens.js'
import { addressScope } from './address-scope.js'
import type { User } from './users.js'

/** Milliseconds a one-time code is good for. */
export const ONE_TIME_CODE_MS = 30_000
/**
 * Most one-time codes waiting to be traded at once for one client address (an IPv6 /64), and in
 * the store: beyond either, a new one is refused and none is dropped, so one client cannot push
 * out the sign-ins of others. A code is handed out only to someone who signed in, and lives 30 s.
 * (Sign-ins under way are not bounded: they are carried by their browsers, see carried-challenges.)
 */
export const SIGN_IN_BOUNDS: WaitingBounds = { perAddress: 100, total: 10_000 }
/** 32 bytes: each code. */
const SECRET_BYTES = 32

/**
 * Why a one-time code was not exchanged: RFC 6749's `invalid_grant`, with a description, or
 * `invalid_request` for a malformed PKCE verifier.
 */
export type SsoExchangeError =
  | { code: 'invalid_grant'; message: string }
  | { code: 'invalid_request'; message: string }

/** A PKCE verifier's form (RFC 7636 §4.1): 43 to 128 unreserved characters. */
const CODE_VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/

/** What an unknown, spent or expired code is told. */
const SPENT = 'The code is unknown, used or expired: sign in again'
const invalidGrant = (message: string) => err<SsoExchangeError>({ code: 'invalid_grant', message })

/** `ab12…` (hex) → base64url of those bytes. */
function hexToBase64url(hex: string): string {
  const bytes = new Uint8Array(hex.length / 2)
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16)
  return base64url(bytes)
}

export interface HandoverDeps {
  store: SsoStore
  tokens: Tokens
  /** The configured users now: a code of one of them is worth what the user is worth when traded. */
  users: ReadonlyMap<string, User>
  /** Client ids a console's code may be traded by. */
  clients: ReadonlySet<string>
  clock: Clock
  random: RandomSource
  digest: Digest
  events: EventSink
  /** Seconds a session of a person of the identity provider lives (see createSso); null without one. */
  providerSessionSeconds: number | null
  /** Whether people of the directory sign in here: a code of one of them is worth their rights at its sign-in. */
  directory: boolean
}

/**
 * Where a code goes: the console of the browser bound to the sign-in (the SHA-256 of its binding,
 * as the started sign-in keeps it), or a resource server.
 */
export type HandoverTarget =
  | { bindingKey: string; authorization: null }
  | { bindingKey: null; authorization: AuthorizationRequest }

export function createHandover(deps: HandoverDeps) {
  const { store, tokens, users, clients, clock, random, digest } = deps
  const secret = () => base64url(random.bytes(SECRET_BYTES))

  /** A session of the code's owner, for flowadmin (the console's exchange) or a resource server. */
  function issueFor(
    owner: IssuedCode['owner'],
    clientId: string,
    address: string,
    agent: string | null,
    audience: string,
  ): Promise<Result<IssuedToken, SsoExchangeError>> | Result<IssuedToken, SsoExchangeError> {
    // A person of the directory, as the directory said at the sign-in moments ago.
    if (isDirectoryRecord(owner)) {
      if (!deps.directory || owner.permissions.length === 0) return invalidGrant(SPENT)
      return tokens
        .issue(
          owner,
          clientId,
          owner.permissions,
          address,
          agent,
          undefined,
          audience,
          owner.method ?? 'password',
        )
        .then((token) => ok(token))
    }
    if (owner.method === undefined) {
      const seconds = deps.providerSessionSeconds
      if (seconds === null) return invalidGrant(SPENT)
      return tokens
        .issue(owner, clientId, owner.permissions, address, agent, seconds, audience, 'provider')
        .then((token) => ok(token))
    }
    // One of flowadmin's own users: as they are now (removed meanwhile: nothing).
    const user = users.get(owner.username)
    if (user === undefined || user.permissions.length === 0) return invalidGrant(SPENT)
    return tokens
      .issue(user, clientId, user.permissions, address, agent, undefined, audience, owner.method)
      .then((token) => ok(token))
  }

  /**
   * Hands out a one-time code for `owner`, good for 30 s, kept under its hash, within the bounds
   * of waiting codes: the code, or why it could not wait.
   */
  async function mint(
    owner: IssuedCode['owner'],
    target: HandoverTarget,
    address: string | null,
  ): Promise<Result<string, Exclude<WaitingSave, 'saved'>>> {
    const code = secret()
    const now = clock.now()
    const saved = await store.saveCode(
      {
        key: await digest.sha256(code),
        address: addressScope(address ?? 'unknown'),
        binding: target.bindingKey,
        owner,
        authorization: target.authorization,
        expiresAt: now + ONE_TIME_CODE_MS,
      },
      SIGN_IN_BOUNDS,
      now,
    )
    return saved === 'saved' ? ok(code) : err(saved)
  }

  return {
    mint,

    /**
     * Ends a sign-in on flowadmin's page for the person who proved who they are: their one-time
     * code, for the console of the browser bound by `binding` (the page's cookie; only its hash is
     * kept with the code), or for the resource server whose authorization request the page carried
     * (checked by the caller). Or why the code could not wait.
     */
    async handOver(
      owner: IssuedCode['owner'],
      target:
        | { binding: string; authorization: null }
        | { binding: null; authorization: AuthorizationRequest },
      address: string | null,
    ): Promise<Result<string, Exclude<WaitingSave, 'saved'>>> {
      return mint(
        owner,
        target.authorization === null
          ? { bindingKey: await digest.sha256(target.binding), authorization: null }
          : { bindingKey: null, authorization: target.authorization },
        address,
      )
    },

    /**
     * Trades a console's one-time code for a session (RFC 6749's authorization code grant, without
     * a redirect URI: the code never left flowadmin's origin): once, within 30 s, from the browser
     * that began the sign-in, by a known client.
     */
    async exchange(
      binding: string | null,
      code: string,
      clientId: string,
      address: string,
      agent: string | null,
    ): Promise<Result<IssuedToken, SsoExchangeError>> {
      // Only a console code is taken here: a resource server's is not the console's to spend.
      const entry = await store.takeCode(await digest.sha256(code), null, clock.now())
      if (entry === null) return invalidGrant(SPENT)
      if (entry.binding !== (binding === null ? null : await digest.sha256(binding)))
        return invalidGrant('The code was not issued to this browser: sign in again')
      if (!clients.has(clientId)) return invalidGrant(`Unknown client_id: ${clientId.slice(0, 64)}`)
      return issueFor(entry.owner, clientId, address, agent, FLOWADMIN_AUDIENCE)
    },

    /**
     * Trades a resource server's authorization code for a session of the person who signed in
     * (RFC 6749 §4.1.3 with PKCE, RFC 7636): once, within 30 s, by the client it was issued to
     * (authenticated by the caller), with the same redirect URI and the verifier of its challenge.
     * The token's client is the resource server; it ends like the person's other tokens.
     */
    async redeem(
      clientId: string,
      code: string,
      redirectUri: string,
      codeVerifier: string,
      address: string,
      agent: string | null,
      /** Whom the token is for: default the client. */
      audience: string = clientId,
    ): Promise<Result<IssuedToken, SsoExchangeError>> {
      const key = await digest.sha256(code)
      const found = await store.findCode(key, clock.now())
      const request = found?.authorization
      if (request == null) return invalidGrant(SPENT)
      if (request.clientId !== clientId) return invalidGrant('The code was not issued to this client')
      // A malformed request guesses nothing: the code stays for the client's well-formed one.
      if (!CODE_VERIFIER.test(codeVerifier))
        return err<SsoExchangeError>({
          code: 'invalid_request',
          message:
            'code_verifier must be 43 to 128 characters of A-Z, a-z, 0-9, "-", ".", "_" and "~" (RFC 7636)',
        })
      // Spent by any well-formed attempt of its own client: a guess at the verifier gets one try.
      // Of attempts at once (at this instance or others), one takes it; the rest find it spent.
      const entry = await store.takeCode(key, clientId, clock.now())
      if (entry === null) return invalidGrant(SPENT)
      if (request.redirectUri !== redirectUri)
        return invalidGrant('redirect_uri is not the one the code was issued for')
      if (hexToBase64url(await digest.sha256(codeVerifier)) !== request.codeChallenge)
        return invalidGrant('code_verifier does not match the code_challenge')
      return issueFor(entry.owner, clientId, address, agent, audience)
    },
  }
}

export type Handover = ReturnType<typeof createHandover>
export type { LocalSignInMethod }
