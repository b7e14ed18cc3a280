// Single sign-on with the organisation's OpenID provider: who gets which token. The protocol is the
// identity provider port's (a certified library in the adapter); here are the rules around it:
// a sign-in is carried by the browser that started it (nothing is stored until the provider's
// answer), its result is a one-time code (no token in a URL), the person's rights come from the
// provider's claims at each sign-in, and the provider may end a person's tokens (back-channel
// logout).
import { err, ok, type Result } from '../errors.js'
import type {
  AuthorizationRequest,
  Clock,
  Digest,
  EventSink,
  IdentityProvider,
  ProviderFailure,
  ProviderIdentity,
  RandomSource,
  SsoStore,
  WaitingSave,
} from '../ports/index.js'
import { base64url } from '../tokens/encoding.js'
import type { Tokens } from '../tokens/tokens.js'
import type { CarriedChallenges } from './carried-challenges.js'
import { type Handover, SIGN_IN_BOUNDS } from './handover.js'
import { type GroupRights, groupsOf, permissionsOfGroups } from './sso-groups.js'
import { ssoIdentities } from './sso-identity.js'
import { createSsoLogout } from './sso-logout.js'
import type { SsoRefusal } from './sso-refusal.js'
import { carriedStart, pendingSignIn, readStart, type SsoStart } from './sso-start.js'

/** `adminAuth.oidc` as the core needs it. */
export interface SsoOptions {
  /** What the sign-in button says, e.g. "Sign in with Example ID". */
  label: string
  /** The claim that names the person; default `preferred_username`. */
  usernameClaim?: string | undefined
  /** Which claim holds the person's groups, and what each group may do here. */
  permissions: { claim: string; map: Readonly<Record<string, GroupRights>> }
  /** Seconds a token of a signed-in person lives at most; default 28800 (eight hours). */
  maxSessionSeconds?: number | undefined
  /** Whether their API tokens may outlive the session they were created in; default false. */
  apiTokensOutliveSessions?: boolean | undefined
}

export const DEFAULT_SSO_SESSION = 28_800
export const DEFAULT_USERNAME_CLAIM = 'preferred_username'
/** Milliseconds a sign-in may take between its start and the provider's answer. */
export const SIGN_IN_MS = 10 * 60_000
/** 32 bytes: the browser binding. */
const SECRET_BYTES = 32

export interface SsoDeps {
  provider: IdentityProvider
  tokens: Tokens
  /**
   * Names bound to the identities that signed in with them, logout tokens seen and one-time codes:
   * shared by instances.
   */
  store: SsoStore
  /** Sign-ins under way, carried by their browsers (see carried-challenges). */
  challenges: CarriedChallenges
  /** Whether a name is a configured user's (settings `adminAuth.users`), read at each sign-in. */
  isConfiguredUser: (username: string) => boolean
  clock: Clock
  random: RandomSource
  digest: Digest
  events: EventSink
  options: SsoOptions
  /** Seconds a session lives (`sessionExpiryTime`); SSO sessions live the shorter of it and theirs. */
  lifetime: number
  /** The one-time codes a completed sign-in hands out, and their trade for sessions. */
  handover: Handover
}

/** Seconds a session of a person of the provider lives: the shorter of `sessionExpiryTime` and its own bound. */
export const ssoSessionSeconds = (options: SsoOptions, lifetime: number): number =>
  Math.min(lifetime, options.maxSessionSeconds ?? DEFAULT_SSO_SESSION)

export function createSso({
  provider,
  tokens,
  store,
  challenges,
  isConfiguredUser,
  clock,
  random,
  digest,
  events,
  options,
  lifetime,
  handover,
}: SsoDeps) {
  const label = options.label
  const usernameClaim = options.usernameClaim ?? DEFAULT_USERNAME_CLAIM
  const sessionSeconds = ssoSessionSeconds(options, lifetime)
  // A sign-in under way is carried by its browser, so it finishes at any instance sharing the
  // store (the key is the store's); it is spent there once, and its one-time code kept there.
  const secret = () => base64url(random.bytes(SECRET_BYTES))

  /** Why a one-time code could not wait in the store, as the person is told. */
  const overBound = (saved: Exclude<WaitingSave, 'saved'>, address: string | null) =>
    saved === 'address_full'
      ? refuse(
          'too_many',
          `Too many sign-ins from your address are waiting to finish (at most ${SIGN_IN_BOUNDS.perAddress} at once). Wait a minute and start again.`,
          { username: null, address },
        )
      : refuse(
          'busy',
          'Too many sign-ins are under way at flowadmin right now. Try again in a few minutes.',
          {
            username: null,
            address,
          },
        )
  const { identityOf, personPrefix, sessionSuffix } = ssoIdentities(digest, provider.issuer)

  function refuse(
    reason: SsoRefusal['reason'],
    message: string,
    actor: { username: string | null; address: string | null },
  ): { ok: false; error: SsoRefusal } {
    events.emit({
      type: 'sso.refused',
      at: clock.now(),
      provider: label,
      reason,
      detail: message,
      username: actor.username,
      clientId: null,
      address: actor.address,
    })
    return err({ reason, message })
  }

  const fromProvider = (failure: ProviderFailure, address: string | null) =>
    refuse(failure.kind, failure.message, { username: null, address })

  /** The provider's checked answer to a started sign-in, to a one-time code (see complete). */
  async function finish(
    start: SsoStart,
    bindingKey: string,
    identity: ProviderIdentity,
    address: string | null,
  ): Promise<
    Result<{ code: string; returnTo: string; authorization: AuthorizationRequest | null }, SsoRefusal>
  > {
    const { claims, subject, sessionId } = identity
    const username = claims[usernameClaim]
    if (typeof username !== 'string' || username === '') {
      return refuse('no_username', `The provider's answer has no ${usernameClaim} claim to name you by.`, {
        username: null,
        address,
      })
    }
    // A name is one person's: never a configured user's, and never another identity's once taken.
    const shown = JSON.stringify(username.slice(0, 64))
    if (isConfiguredUser(username)) {
      return refuse(
        'name_taken',
        `Your identity provider names you ${shown}, which is the name of a user configured in flowadmin itself, so you cannot sign in with it. Ask an administrator to rename one of the two.`,
        { username, address },
      )
    }
    const prefix = await personPrefix(subject)
    const existing = await tokens.withFingerprint(prefix)
    const permissions = permissionsOfGroups(claims[options.permissions.claim], options.permissions.map)
    if (permissions.length === 0) {
      // Worth nothing now: so are the tokens they hold.
      await tokens.deleteRecords(existing)
      const groups = groupsOf(claims[options.permissions.claim])
      return refuse(
        'no_permissions',
        `Signed in as ${username}, but your groups (${groups === '' ? 'none' : groups}) give no permission here. Ask an administrator to add you to a group that does.`,
        { username, address },
      )
    }
    const person = await identityOf(subject)
    if ((await store.claimName(username, person, clock.now())) !== person) {
      return refuse(
        'name_taken',
        `Your identity provider names you ${shown}, but another account of the provider signed in here with that name first, so you cannot sign in with it. Ask an administrator.`,
        { username, address },
      )
    }
    await tokens.narrow(existing, permissions)
    const session = sessionId === null ? '-' : (await sessionSuffix(sessionId)).slice(1)
    const { authorization } = start
    const minted = await handover.mint(
      { username, permissions, fingerprint: `${prefix}${session}` },
      authorization === null ? { bindingKey, authorization: null } : { bindingKey: null, authorization },
      address,
    )
    if (!minted.ok) return overBound(minted.error, address)
    const code = minted.value
    const now = clock.now()
    events.emit({
      type: 'sso.succeeded',
      at: now,
      provider: label,
      permissions,
      username,
      clientId: authorization?.clientId ?? null,
      address,
    })
    return ok({ code, returnTo: start.returnTo, authorization })
  }

  return {
    label,
    /** Seconds a signed-in person's session lives. */
    sessionSeconds,
    apiTokensOutliveSessions: options.apiTokensOutliveSessions ?? false,

    /**
     * Starts a sign-in: the provider's URL to send the browser to, the browser binding to set in
     * an HttpOnly cookie (the callback and the exchange must come from the same browser), and the
     * sign-in itself, `carried` by the browser (another HttpOnly cookie) until the provider sends
     * it back: nothing is stored, so no number of sign-ins never finished can stop anyone's.
     * `returnTo` is where the console wants to land afterwards: the adapter checked it.
     */
    async begin(
      redirectUri: string,
      returnTo: string,
      address: string | null,
      authorization: AuthorizationRequest | null = null,
    ): Promise<Result<{ url: string; binding: string; carried: string }, SsoRefusal>> {
      const binding = secret()
      const start: SsoStart = { redirectUri, returnTo, authorization }
      const carries = JSON.stringify(start)
      const issued = await challenges.issue('sso', { holder: binding, address }, SIGN_IN_MS, carries)
      const url = await provider.authorizationUrl(await pendingSignIn(challenges, issued.id, redirectUri))
      if (!url.ok) return fromProvider(url.error, address)
      return ok({ url: url.value, binding, carried: carriedStart(issued.carried, carries) })
    },

    /**
     * The provider sent the browser back: the sign-in it carries (`carried`, with its `binding`)
     * must be one this server started for this browser and address scope, within 10 minutes; the
     * provider's answer is checked (the port verifies the ID token), then the sign-in is spent (each
     * completes at most once, at any instance), the person's groups map to permissions, their
     * existing tokens narrow to those, and a one-time code is handed out: for the console, or, when
     * the sign-in began with a resource server's authorization request, for that client
     * (`authorization`: where to send it).
     */
    async complete(
      binding: string | null,
      carried: string | null,
      callbackUrl: string,
      address: string | null,
    ): Promise<
      Result<{ code: string; returnTo: string; authorization: AuthorizationRequest | null }, SsoRefusal>
    > {
      const invalid = () =>
        refuse(
          'invalid',
          'This sign-in was not started in this browser, was already used, or took longer than 10 minutes. Start again.',
          { username: null, address },
        )
      const read = carried === null ? null : readStart(carried)
      if (read === null || binding === null) return invalid()
      const checked = await challenges.check(
        'sso',
        read.challenge,
        { holder: binding, address },
        read.carries,
      )
      if (checked === null) return invalid()
      const { start } = read
      const identity = await provider.complete(
        callbackUrl,
        await pendingSignIn(challenges, checked.id, start.redirectUri),
      )
      // Spent once the provider's answer holds: a row is written for a real sign-in, never a guess.
      const done = !identity.ok
        ? fromProvider(identity.error, address)
        : !(await challenges.spend('sso', checked))
          ? invalid()
          : await finish(start, await digest.sha256(binding), identity.value, address)
      // A resource server's sign-in: its redirect URI is known, so the refusal goes back to it.
      return done.ok || start.authorization === null
        ? done
        : err({ ...done.error, authorization: start.authorization })
    },

    ...createSsoLogout({ provider, tokens, store, isConfiguredUser, digest, clock, events, label }),
  }
}

export type Sso = ReturnType<typeof createSso>
