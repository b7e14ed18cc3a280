import { type DomainError, err, ok, type Result } from '../errors.js'
import type {
  Actor,
  Clock,
  EventSink,
  PasskeyCredential,
  PasskeyFailure,
  PasskeyStore,
  WebAuthn,
} from '../ports/index.js'
import { fromBase64url } from '../tokens/encoding.js'
import type { TokenOwner } from '../tokens/owner.js'
import type { Tokens } from '../tokens/tokens.js'
import type { CarriedChallenges, ChallengeBinding, ChallengePurpose } from './carried-challenges.js'
import { endOtherSessions } from './sessions.js'
import type { User } from './users.js'

/** Most passkeys one person may have. */
export const MAX_PASSKEYS = 10
/** Longest name of a passkey, in characters (UTF-16 code units, as JSON Schema's `maxLength` counts them). */
export const MAX_PASSKEY_NAME = 64
/** Seconds a ceremony's challenge waits for the authenticator's answer. */
export const PASSKEY_CHALLENGE_SECONDS = 300

/** Longest credential id or client data looked at: anything longer is refused unread. */
const MAX_CREDENTIAL_ID = 1024
const MAX_CLIENT_DATA = 8192

export type PasskeyError = Extract<
  DomainError,
  {
    code:
      | 'passkeys_not_configured'
      | 'too_many_passkeys'
      | 'passkey_not_found'
      | 'invalid_passkey_name'
      | 'passkey_refused'
  }
>

/** A passkey as its owner sees it: never its public key. */
export interface PasskeyView {
  id: string
  name: string
  createdAt: number
  lastUsedAt: number | null
  backedUp: boolean
}

export interface PasskeyDeps {
  store: PasskeyStore
  /** Absent when no relying party is configured: passkeys are then refused. */
  webauthn: WebAuthn | null
  /** The configured users, as the core keeps them (a reload refills the same map). */
  users: ReadonlyMap<string, User>
  /** A person who is not a configured user, as they are now (the directory's), or null; absent: none. */
  findPerson?: ((username: string, address: string) => Promise<TokenOwner | null>) | undefined
  tokens: Tokens
  /** The ceremonies' challenges, carried by the browser (see carried-challenges). */
  challenges: CarriedChallenges
  clock: Clock
  events: EventSink
}

/** What a registration's challenge is bound to: the person, and the session that asked. */
const registering = (username: string, session: string): ChallengeBinding => ({
  holder: JSON.stringify([username, session]),
  address: null,
})

const viewOf = (credential: PasskeyCredential): PasskeyView => ({
  id: credential.id,
  name: credential.name,
  createdAt: credential.createdAt,
  lastUsedAt: credential.lastUsedAt,
  backedUp: credential.backedUp,
})

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** The challenge a browser's answer carries back (in its client data), or null. Never throws. */
export function challengeOf(response: unknown): string | null {
  if (!isRecord(response) || !isRecord(response.response)) return null
  const clientData = response.response.clientDataJSON
  if (typeof clientData !== 'string' || clientData.length > MAX_CLIENT_DATA) return null
  const bytes = fromBase64url(clientData)
  if (bytes === null) return null
  // Read byte by byte: the challenge is ASCII (base64url), whatever else the JSON holds.
  const text = String.fromCharCode(...bytes)
  try {
    const parsed: unknown = JSON.parse(text)
    return isRecord(parsed) && typeof parsed.challenge === 'string' && parsed.challenge !== ''
      ? parsed.challenge
      : null
  } catch {
    return null
  }
}

/** The credential id a browser's answer names, or null. */
const credentialIdOf = (response: unknown): string | null =>
  isRecord(response) &&
  typeof response.id === 'string' &&
  response.id !== '' &&
  response.id.length <= MAX_CREDENTIAL_ID
    ? response.id
    : null

/**
 * People's passkeys: registration by the person (their own session), and sign-in with one, for
 * flowadmin's sign-in page. A ceremony's challenge is carried by the browser (nothing is stored
 * until its answer), bound to what asked for it (the session registering, or the sign-in page's
 * cookie and the client's address scope), good for PASSKEY_CHALLENGE_SECONDS, and spent once its
 * answer verified; a passkey's counter only grows, decided by the store once for every instance,
 * so an answer replayed or made by a cloned authenticator is refused.
 */
export function createPasskeys(deps: PasskeyDeps) {
  const { store, users, tokens, challenges, clock, events } = deps
  const notConfigured = err({ code: 'passkeys_not_configured' } as const)
  const refused = err({ code: 'passkey_refused' } as const)
  const challengeMs = PASSKEY_CHALLENGE_SECONDS * 1000

  /** The challenge of `response` when this server issued it for `purpose` to `bound`, in time; else null. */
  const checkedChallenge = async (purpose: ChallengePurpose, response: unknown, bound: ChallengeBinding) => {
    const challenge = challengeOf(response)
    if (challenge === null) return null
    const checked = await challenges.check(purpose, challenge, bound)
    return checked === null ? null : { ...checked, challenge }
  }

  const failed = (actor: Actor, id: string | null, reason: PasskeyFailure) => {
    events.emit({ type: 'passkey.failed', at: clock.now(), id, reason, ...actor })
    return refused
  }

  return {
    /** Whether passkeys can be used here (a relying party is configured). */
    available: deps.webauthn !== null,

    /** The person's passkeys, oldest first. */
    async list(username: string): Promise<Result<PasskeyView[], PasskeyError>> {
      if (deps.webauthn === null) return notConfigured
      return ok((await store.list(username)).map(viewOf))
    },

    /** Whether the person has any passkey. */
    async has(username: string): Promise<boolean> {
      return (await store.list(username)).length > 0
    },

    /**
     * Options for the browser to create a passkey for `username`, their challenge bound to the
     * session asking (`session`, its token id); refused at MAX_PASSKEYS. Nothing is stored: any
     * number of them costs nothing.
     */
    async registrationOptions(
      username: string,
      session: string,
    ): Promise<Result<{ options: unknown }, PasskeyError>> {
      if (deps.webauthn === null) return notConfigured
      const existing = await store.list(username)
      if (existing.length >= MAX_PASSKEYS) return err({ code: 'too_many_passkeys', limit: MAX_PASSKEYS })
      const { carried } = await challenges.issue(
        'passkey-register',
        registering(username, session),
        challengeMs,
      )
      return ok(await deps.webauthn.registrationOptions(username, existing, carried))
    },

    /**
     * Registers the passkey the browser made with options from registrationOptions (their
     * challenge, once, given to this session), named `name`; then the person's other sessions end.
     */
    async register(
      actor: Actor & { username: string },
      session: string,
      name: string,
      response: unknown,
    ): Promise<Result<PasskeyView, PasskeyError>> {
      const verifier = deps.webauthn
      if (verifier === null) return notConfigured
      if (name.trim() === '' || name.length > MAX_PASSKEY_NAME) return err({ code: 'invalid_passkey_name' })
      const { username } = actor
      const checked = await checkedChallenge('passkey-register', response, registering(username, session))
      if (checked === null) return refused
      if ((await store.list(username)).length >= MAX_PASSKEYS)
        return err({ code: 'too_many_passkeys', limit: MAX_PASSKEYS })
      const registered = await verifier.verifyRegistration(response, checked.challenge)
      // A credential id known already (anyone's) is not registered again over it.
      if (registered === null || (await store.find(registered.id)) !== null) return refused
      if (!(await challenges.spend('passkey-register', checked))) return refused
      const credential: PasskeyCredential = {
        ...registered,
        username,
        name,
        createdAt: clock.now(),
        lastUsedAt: null,
      }
      await store.save(credential)
      const sessionsEnded = await endOtherSessions(tokens, username, session)
      events.emit({
        type: 'passkey.registered',
        at: clock.now(),
        id: credential.id,
        name,
        sessionsEnded,
        ...actor,
      })
      return ok(viewOf(credential))
    },

    /** Removes one of the person's passkeys; then their other sessions end. */
    async remove(
      actor: Actor & { username: string },
      id: string,
      keepToken: string | null,
    ): Promise<Result<void, PasskeyError>> {
      if (deps.webauthn === null) return notConfigured
      const { username } = actor
      if (!(await store.delete(username, id))) return err({ code: 'passkey_not_found', id })
      const sessionsEnded = await endOtherSessions(tokens, username, keepToken)
      events.emit({ type: 'passkey.removed', at: clock.now(), owner: username, id, sessionsEnded, ...actor })
      return ok(undefined)
    },

    /**
     * Options for the browser to sign in with a passkey: no credential listed, so it offers the
     * person's passkeys for this site (discoverable credentials). Their challenge is bound to the
     * browser (`binding`, the sign-in page's cookie) and the scope of `address`, and serves once.
     * Nothing is stored: no number of unanswered options can stop anyone's sign-in.
     */
    async signInOptions(
      binding: string,
      address: string,
    ): Promise<Result<{ options: unknown }, PasskeyError>> {
      if (deps.webauthn === null) return notConfigured
      const { carried } = await challenges.issue('passkey-sign-in', { holder: binding, address }, challengeMs)
      return ok(await deps.webauthn.authenticationOptions(carried))
    },

    /**
     * Signs in with a passkey: the answer's challenge must be one of signInOptions' for this browser
     * (`binding`) and address scope, in time; its passkey must be known and its person still
     * configured, the answer must verify (signature, origin, relying party, user verification); the
     * challenge is then spent (once, for every instance), and the passkey's counter must grow
     * unless it keeps none. Every refusal is `passkey_refused`, audited as `passkey.failed` with its
     * reason.
     */
    async signIn(
      response: unknown,
      binding: string,
      address: string,
    ): Promise<Result<{ user: TokenOwner }, PasskeyError>> {
      const verifier = deps.webauthn
      if (verifier === null) return notConfigured
      const anonymous: Actor = { username: null, clientId: null, address }
      const checked = await checkedChallenge('passkey-sign-in', response, { holder: binding, address })
      const id = credentialIdOf(response)
      if (checked === null) return failed(anonymous, id, 'unknown_challenge')
      const credential = id === null ? null : await store.find(id)
      if (credential === null) return failed(anonymous, id, 'unknown_credential')
      const actor: Actor = { username: credential.username, clientId: null, address }
      const configured = users.get(credential.username)
      if (configured === undefined && deps.findPerson === undefined)
        return failed(actor, credential.id, 'user_gone')
      const verified = await verifier.verifyAuthentication(response, checked.challenge, credential)
      if (verified === null) return failed(actor, credential.id, 'verification_failed')
      // Spent only now: a row is written for an answer its passkey signed, never for a guess.
      if (!(await challenges.spend('passkey-sign-in', checked)))
        return failed(actor, credential.id, 'unknown_challenge')
      if (!(await store.updateUse(credential.id, verified.counter, verified.backedUp, clock.now())))
        return failed(actor, credential.id, 'counter')
      // A person of the directory is asked of it only once their passkey has proven them.
      const user = configured ?? (await deps.findPerson?.(credential.username, address)) ?? undefined
      if (user === undefined) return failed(actor, credential.id, 'user_gone')
      events.emit({ type: 'passkey.succeeded', at: clock.now(), id: credential.id, ...actor })
      return ok({ user })
    },

    /** Deletes every passkey of the person; how many. */
    removeAll: (username: string) => store.deleteAll(username),
  }
}

export type Passkeys = ReturnType<typeof createPasskeys>
