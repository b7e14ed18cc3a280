// People of the organisation's directory (LDAP, Active Directory): one more source of people beside
// flowadmin's own users and the identity provider. The protocol is the directory port's; here are
// the rules around it. A person is known by the entry's lasting identity (never a display name):
// their tokens carry a keyed hash of it, and their name is bound to it for good, as single sign-on
// binds a provider's names; a name of a configured user is never a directory person's. Their
// rights come from their groups at each sign-in and at each re-check of a live token (at most every
// `recheckMinutes`), and every token of theirs is narrowed to them, or ends with them.
import { type DomainError, err, ok, type Result } from '../errors.js'
import type {
  Actor,
  Clock,
  CoreObserver,
  Digest,
  Directory,
  DirectoryAnswer,
  DirectoryOutcome,
  DirectoryPerson,
  DirectoryRefusalReason,
  EventSink,
  SsoStore,
  TokenRecord,
} from '../ports/index.js'
import { DIRECTORY_FINGERPRINT_PREFIX, directoryPersonOf, type SsoUser } from '../tokens/owner.js'
import type { Tokens } from '../tokens/tokens.js'
import { type GroupRights, permissionsOfGroups } from './sso-groups.js'
import type { ThrottleOptions } from './throttle.js'

/** `adminAuth.ldap` as the core needs it. */
export interface DirectoryOptions {
  /** How sessions and the audit name the directory, e.g. "Example AD"; default "the directory". */
  label?: string | undefined
  /** What each group (its DN or its name, matched without regard to case or spacing) may do here. */
  permissions: { map: Readonly<Record<string, GroupRights>> }
  /** Minutes between two re-checks of a person with live tokens; 0: only at sign-in. Default 15. */
  recheckMinutes?: number | undefined
  /** The throttle of passwords the directory checks, counted per account from any address. */
  throttle?: Partial<DirectoryThrottleOptions> | undefined
}

/** How many wrong passwords of one directory account, from anywhere, before it must wait. */
export interface DirectoryThrottleOptions {
  /** Failures of one account before it must wait. Default 3. */
  maxFailures: number
  /** Seconds a window lasts. Default 1800 (30 minutes). */
  windowSeconds: number
}

export const DEFAULT_DIRECTORY_THROTTLE: DirectoryThrottleOptions = { maxFailures: 3, windowSeconds: 1800 }
/**
 * Attempts of one account that may be in flight beyond its remaining failures: one, so the
 * directory sees at most `maxFailures + 1` wrong passwords of an account per window.
 */
export const DIRECTORY_IN_FLIGHT_ALLOWANCE = 1
/**
 * The directory's throttle, on the same store as the passwords' (`base`, whose address limit and
 * known-client days it keeps): `maxFailures` per account from any address, per `windowSeconds`,
 * one attempt in flight beyond them.
 */
export const directoryThrottleOptions = (
  base: ThrottleOptions,
  options: Partial<DirectoryThrottleOptions> | undefined,
): ThrottleOptions => ({
  ...base,
  maxFailuresPerUser: options?.maxFailures ?? DEFAULT_DIRECTORY_THROTTLE.maxFailures,
  windowSeconds: options?.windowSeconds ?? DEFAULT_DIRECTORY_THROTTLE.windowSeconds,
  inFlightAllowance: DIRECTORY_IN_FLIGHT_ALLOWANCE,
})

export const DEFAULT_DIRECTORY_LABEL = 'the directory'
export const DEFAULT_RECHECK_MINUTES = 15
/** Milliseconds before a re-check that found the directory silent is tried again. */
export const RECHECK_RETRY_MS = 60_000
/** Seconds a directory person is told to wait when the directory cannot be asked. */
export const DIRECTORY_RETRY_AFTER = 10
/** People whose last re-check is remembered before the oldest are forgotten (re-checked sooner, never later). */
const MAX_REMEMBERED_CHECKS = 10_000
/** The key of the directory identities' keyed hashes: a name of its own, apart from any issuer's. */
const IDENTITY_KEY = 'flowadmin directory'

/**
 * A group's DN or name as the map is matched: lowercase, Unicode-normalized, without the spaces
 * around `,`, `=` and `+` that directories ignore in DNs.
 */
export const directoryGroupKey = (name: string): string =>
  name
    .normalize('NFKC')
    .toLowerCase()
    .replace(/\s*([,=+])\s*/g, '$1')
    .trim()

/**
 * The account a typed name counts against in the throttle: the name as a directory compares it
 * (case, Unicode form and runs of spaces ignored), so `Alice` and ` alice ` are one account.
 */
export const directoryAccountKey = (username: string): string =>
  username.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim()

/**
 * The password grant's outcome of a directory person: who, or null (refused; `refusal` says when
 * the account is disabled, for the audit), or why the directory was not asked.
 */
export type DirectoryVerification = Result<
  { user: SsoUser | null; refusal?: 'disabled' },
  Extract<DomainError, { code: 'directory_unavailable' }>
>

export interface DirectoryPeopleDeps {
  directory: Directory
  tokens: Tokens
  /** Names bound to identities, shared with single sign-on: one name, one person, whatever the source. */
  store: SsoStore
  /** Whether a name is a configured user's (settings `adminAuth.users`), read at each use. */
  isConfiguredUser: (username: string) => boolean
  digest: Digest
  clock: Clock
  events: EventSink
  observer?: CoreObserver | undefined
  options: DirectoryOptions
}

export function createDirectoryPeople(deps: DirectoryPeopleDeps) {
  const { directory, tokens, store, digest, clock, events, observer, options } = deps
  const label = options.label ?? DEFAULT_DIRECTORY_LABEL
  const map: Record<string, GroupRights> = {}
  for (const [group, permissions] of Object.entries(options.permissions.map))
    map[directoryGroupKey(group)] = permissions
  const interval = (options.recheckMinutes ?? DEFAULT_RECHECK_MINUTES) * 60_000
  // When each person (by `dir:<identity>:`) was last checked here, and the re-checks under way.
  const checkedAt = new Map<string, number>()
  const running = new Map<string, Promise<void>>()

  /** `dir:<identity>:`: the fingerprint prefix of one person's tokens. */
  const prefixOf = async (identity: string) =>
    `${DIRECTORY_FINGERPRINT_PREFIX}${await digest.hmacSha256(IDENTITY_KEY, `entry:${identity}`)}:`

  const refuse = (reason: DirectoryRefusalReason, detail: string, actor: Actor) =>
    events.emit({ type: 'directory.refused', at: clock.now(), directory: label, reason, detail, ...actor })

  /** The port's answer, timed and reported to the observer. */
  async function ask(
    question: () => Promise<DirectoryAnswer<DirectoryPerson | null>>,
  ): Promise<DirectoryAnswer<DirectoryPerson | null>> {
    const started = clock.now()
    const answer = await question()
    const outcome: DirectoryOutcome = !answer.ok
      ? 'unavailable'
      : answer.value === null || answer.value.disabled
        ? 'refused'
        : 'verified'
    observer?.directory?.(outcome, clock.now() - started)
    return answer
  }

  /**
   * The live tokens of the person `prefix` names under `username` (their tokens carry the name
   * they signed in with: one user's records are read, not the whole table), or under any name.
   */
  const tokensOf = async (prefix: string, username: string | null) =>
    username === null
      ? tokens.withFingerprint(prefix)
      : (await tokens.list(username)).filter((record) => record.fingerprint.startsWith(prefix))

  /**
   * Ends the tokens of the person `prefix` names, under `username` or (null) every name they had
   * (audited one by one, `user_removed`); how many.
   */
  async function endAll(
    prefix: string,
    address: string | null,
    username: string | null = null,
  ): Promise<number> {
    let ended = 0
    for (const record of await tokensOf(prefix, username))
      if (await tokens.invalidate(record, 'user_removed', address)) ended++
    return ended
  }

  const remember = (prefix: string, at: number) => {
    if (checkedAt.size >= MAX_REMEMBERED_CHECKS) {
      for (const [key, time] of checkedAt) if (time <= at - interval) checkedAt.delete(key)
      if (checkedAt.size >= MAX_REMEMBERED_CHECKS) checkedAt.clear()
    }
    checkedAt.set(prefix, at)
  }

  /**
   * The person an entry names, as their tokens carry them, with their rights now; every token of
   * theirs is narrowed to those. null, audited, when the account is disabled (then its tokens end
   * too), its groups give nothing (then its tokens end), or the name is a configured user's or
   * another identity's.
   */
  async function admit(entry: DirectoryPerson, actor: Actor): Promise<SsoUser | null> {
    const prefix = await prefixOf(entry.identity)
    const who = { ...actor, username: entry.username }
    const shown = JSON.stringify(entry.username.slice(0, 64))
    if (entry.disabled) {
      const ended = await endAll(prefix, actor.address)
      refuse('disabled', `The directory marks the account ${shown} disabled (${ended} tokens ended).`, who)
      return null
    }
    if (deps.isConfiguredUser(entry.username)) {
      refuse(
        'name_taken',
        `The directory names this person ${shown}, which is the name of a user configured in flowadmin itself, so they cannot sign in with it. Rename one of the two.`,
        who,
      )
      return null
    }
    const permissions = permissionsOfGroups(entry.groups.map(directoryGroupKey), map)
    if (permissions.length === 0) {
      const ended = await endAll(prefix, actor.address)
      refuse(
        'no_permissions',
        `${shown}'s groups in the directory give no permission here (${ended} tokens ended).`,
        who,
      )
      return null
    }
    const identity = prefix.slice(0, -1)
    if ((await store.claimName(entry.username, identity, clock.now())) !== identity) {
      refuse(
        'name_taken',
        `The directory names this person ${shown}, but another identity signed in here with that name first, so they cannot sign in with it.`,
        who,
      )
      return null
    }
    await tokens.narrow(await tokensOf(prefix, entry.username), permissions)
    remember(prefix, clock.now())
    return { username: entry.username, permissions, fingerprint: prefix }
  }

  const unavailable = (message: string, actor: Actor) => {
    refuse('unavailable', message, actor)
    return err({ code: 'directory_unavailable' as const, retryAfter: DIRECTORY_RETRY_AFTER })
  }

  /** A person's re-check: their tokens narrowed to their groups now, or ended when they are gone. */
  async function recheckPerson(username: string, prefix: string): Promise<void> {
    const actor: Actor = { username, clientId: null, address: null }
    const answer = await ask(() => directory.find(username))
    if (!answer.ok) {
      // Their tokens keep the rights of the last check; asked again in a minute, not at each request.
      remember(prefix, clock.now() - interval + RECHECK_RETRY_MS)
      return
    }
    const entry = answer.value
    // The name no longer names this person: their tokens under it end (under another name, a
    // renamed person's stay theirs, checked under that name).
    if (entry === null || (await prefixOf(entry.identity)) !== prefix) {
      const ended = await endAll(prefix, null, username)
      refuse(
        'gone',
        `The directory no longer has ${JSON.stringify(username.slice(0, 64))} (or gives the name to another entry): ${ended} tokens ended.`,
        actor,
      )
      return
    }
    // Disabled, or no permission any more: admit ends their tokens.
    await admit(entry, actor)
  }

  return {
    label,

    /** The account a typed name counts against in the directory's throttle (see directoryAccountKey). */
    accountKey: directoryAccountKey,

    /**
     * A password the directory checks (the password grant and the sign-in page): the person it
     * proves, with their rights now; null when refused (unknown, wrong password, disabled, several
     * entries, no permission, a name that is not theirs); or `directory_unavailable` when the
     * directory could not be asked in time (audited, nothing counted against the client).
     */
    async verify(actor: Actor & { username: string }, password: string): Promise<DirectoryVerification> {
      const answer = await ask(() => directory.authenticate(actor.username, password))
      if (!answer.ok) return unavailable(answer.error.message, actor)
      const entry = answer.value
      // A disabled account costs what a wrong password costs, nothing more: no event of its own
      // (the caller's login.failed says why), its tokens end at their re-check.
      if (entry?.disabled === true) return ok({ user: null, refusal: 'disabled' })
      return ok({ user: entry === null ? null : await admit(entry, actor) })
    },

    /**
     * The person of the directory named `username` now, without a password (a second step of the
     * sign-in page, a passkey): null when the directory does not have them, refuses them, or
     * cannot be asked.
     */
    async find(username: string, address: string | null): Promise<SsoUser | null> {
      const actor: Actor = { username, clientId: null, address }
      const answer = await ask(() => directory.find(username))
      if (!answer.ok) {
        unavailable(answer.error.message, actor)
        return null
      }
      return answer.value === null || answer.value.username !== username ? null : admit(answer.value, actor)
    },

    /**
     * The record of a live token of a person of the directory, once their re-check is done when it
     * is due (at most every `recheckMinutes` per person, one at a time): as it is now (narrowed),
     * or null when it ended. A directory that does not answer leaves it as it was.
     */
    async recheck(record: TokenRecord): Promise<TokenRecord | null> {
      if (interval === 0) return record
      const prefix = directoryPersonOf(record)
      if (clock.now() - (checkedAt.get(prefix) ?? record.createdAt) < interval) return record
      let pending = running.get(prefix)
      if (pending === undefined) {
        pending = recheckPerson(record.username, prefix).finally(() => running.delete(prefix))
        running.set(prefix, pending)
      }
      await pending
      return tokens.findById(record.id)
    },
  }
}

export type DirectoryPeople = ReturnType<typeof createDirectoryPeople>
