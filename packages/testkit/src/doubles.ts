import type {
  Clock,
  DomainEvent,
  EventSink,
  IdentityProvider,
  InstalledArtifact,
  InstallFailure,
  InstallRequest,
  LoadOutcome,
  LogoutRequest,
  ModuleDescriptor,
  ModuleInstaller,
  NodeSetLoader,
  NodeSetRef,
  PasswordVerifier,
  ProviderIdentity,
  ProviderResult,
  RandomSource,
  TotpVerifier,
  TypeUsage,
} from '@flowadmin/core'
import { createSignal, type WaitOptions, withDeadline } from './waiting.js'

/** A clock that only moves when told. Starts at 2026-01-01T00:00:00Z unless given a time. */
export function createFixedClock(start = Date.UTC(2026, 0, 1)) {
  let now = start
  return {
    now: () => now,
    /** Moves time forward by `ms` milliseconds. */
    advance(ms: number) {
      now += ms
    },
    set(time: number) {
      now = time
    },
  } satisfies Clock & Record<string, unknown>
}
export type FixedClock = ReturnType<typeof createFixedClock>

/** mulberry32: a small seeded generator of 32-bit unsigned integers. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return (t ^ (t >>> 14)) >>> 0
  }
}

/** Deterministic numbers in [0, 1): the same seed gives the same sequence, in any process. */
export function createSeededNumbers(seed = 1): () => number {
  const next = mulberry32(seed)
  return () => next() / 4_294_967_296
}

/** A deterministic random source: the same seed gives the same bytes. */
export function createSeededRandom(seed = 1): RandomSource {
  const next = mulberry32(seed)
  return {
    bytes(length) {
      const bytes = new Uint8Array(length)
      for (let i = 0; i < length; i++) bytes[i] = next() & 0xff
      return bytes
    },
  }
}

/**
 * A password "hasher" for tests: the hash of `pw` is `plain:pw`. It counts verifications and
 * remembers which hashes it was asked about, so tests can see that the dummy hash was used.
 */
export function createPlainHasher() {
  const verified: string[] = []
  const inUse: string[][] = []
  return {
    dummyHash: 'plain:\u0000dummy\u0000',
    hash: (password: string) => `plain:${password}`,
    async verify(hash: string, password: string) {
      verified.push(hash)
      return hash === `plain:${password}`
    },
    useHashes(hashes: readonly string[]) {
      inUse.push([...hashes])
    },
    /** The hashes verified so far, in order. */
    verified,
    /** The users' hashes the core gave, each time it gave them. */
    inUse,
  } satisfies PasswordVerifier & Record<string, unknown>
}
export type PlainHasher = ReturnType<typeof createPlainHasher>

/**
 * Holds every verification of `hasher` until `release()`: `started` resolves once the first one
 * has begun (and fails, saying so, if none has within the deadline), and `restore()` puts the
 * hasher's own verify back.
 */
export function holdVerifications(hasher: PlainHasher, deadline: WaitOptions = {}) {
  const verify = hasher.verify
  const released = createSignal()
  const started = createSignal()
  hasher.verify = async (hash, password) => {
    started.give()
    await released.given
    return verify.call(hasher, hash, password)
  }
  return {
    /** A deadline starts with each look, so a test that never awaits this leaves no timer behind. */
    get started(): Promise<void> {
      return withDeadline(started.given, 'a held verification to begin', deadline)
    },
    release: released.give,
    restore() {
      released.give()
      hasher.verify = verify
    },
  }
}

/** A loader that succeeds unless told that a set fails; it records what it loaded. */
export function createFakeLoader(failures: Record<string, string> = {}) {
  const loads: string[] = []
  return {
    loads,
    failures,
    async load(set: NodeSetRef): Promise<LoadOutcome> {
      loads.push(set.id)
      const message = failures[set.id]
      return message === undefined ? { ok: true } : { ok: false, message }
    },
  } satisfies NodeSetLoader & Record<string, unknown>
}

/** Type usage as a mutable set, standing in for the deployed flows; `unreadable` makes it answer null. */
export function createFakeTypeUsage(types: Iterable<string> = []) {
  const inUse = new Set(types)
  const usage = {
    inUse,
    /** When true, the flows "cannot be read". */
    unreadable: false,
    async typesInUse(): Promise<ReadonlySet<string> | null> {
      return usage.unreadable ? null : new Set(inUse)
    },
  }
  return usage satisfies TypeUsage & Record<string, unknown>
}

/** An event sink that keeps every event. */
export function createEventRecorder() {
  const events: DomainEvent[] = []
  return {
    events,
    emit(event: DomainEvent) {
      events.push(event)
    },
    /** The events of one type. */
    ofType<T extends DomainEvent['type']>(type: T) {
      return events.filter((event): event is Extract<DomainEvent, { type: T }> => event.type === type)
    },
  } satisfies EventSink & Record<string, unknown>
}

/**
 * An installer over a pretend registry: `publish` puts a module in it (with the tarball an install
 * of it says it fetched, when given), `failNext` makes the next install or removal fail with that
 * failure. It records each call as `install <spec>` or `remove <name>`.
 */
export function createFakeInstaller() {
  const registry = new Map<string, ModuleDescriptor>()
  const artifacts = new Map<string, InstalledArtifact>()
  const calls: string[] = []
  let failure: InstallFailure | null = null
  const takeFailure = () => {
    const next = failure
    failure = null
    return next
  }
  return {
    calls,
    publish(module: ModuleDescriptor, artifact?: InstalledArtifact) {
      registry.set(module.name, module)
      if (artifact === undefined) artifacts.delete(module.name)
      else artifacts.set(module.name, artifact)
    },
    failNext(next: InstallFailure) {
      failure = next
    },
    async install(request: InstallRequest) {
      const spec =
        request.tarball !== undefined
          ? `upload of ${request.tarball.byteLength} bytes`
          : (request.url ?? `${request.module}@${request.version ?? 'latest'}`)
      calls.push(`install ${spec}`)
      const failed = takeFailure()
      if (failed !== null) return { ok: false as const, error: failed }
      // An upload's bytes are the name of a published module, standing in for its tarball.
      const name = request.module ?? String.fromCharCode(...request.tarball)
      const module = registry.get(name)
      if (module === undefined) {
        return {
          ok: false as const,
          error: { code: 'install_failed' as const, message: `${name} is not in the registry` },
        }
      }
      const artifact = request.tarball === undefined ? artifacts.get(name) : undefined
      return { ok: true as const, module, ...(artifact !== undefined && { artifact }) }
    },
    async remove(name: string) {
      calls.push(`remove ${name}`)
      const failed = takeFailure()
      return failed === null ? { ok: true as const } : { ok: false as const, error: failed }
    },
  } satisfies ModuleInstaller & Record<string, unknown>
}

const UNSET = { ok: false, error: { kind: 'invalid', message: 'unset' } } as const
/** A time no test's clock reaches. */
const FAR_AHEAD = Date.UTC(2100, 0, 1)

/**
 * An OpenID provider whose answers the test sets. It checks a callback's `state` the way the real
 * library does, records the redirect URI of each sign-in it is asked to start, and can be down.
 */
export function createFakeIdentityProvider(issuer = 'https://id.example') {
  let next: ProviderResult<ProviderIdentity> = UNSET
  let logout: ProviderResult<LogoutRequest> | Error = UNSET
  let down = false
  let logouts = 0
  const redirectUris: string[] = []
  const provider: IdentityProvider = {
    issuer,
    async authorizationUrl(pending) {
      redirectUris.push(pending.redirectUri)
      if (down)
        return {
          ok: false,
          error: { kind: 'unavailable', message: 'The identity provider cannot be reached.' },
        }
      return { ok: true, value: `https://id.example/authorize?state=${pending.state}` }
    },
    async complete(callbackUrl, pending) {
      if (new URL(callbackUrl).searchParams.get('state') !== pending.state)
        return { ok: false, error: { kind: 'invalid', message: 'state mismatch' } }
      return next
    },
    async verifyLogoutToken() {
      if (logout instanceof Error) throw logout
      return logout
    },
  }
  return {
    provider,
    /** The redirect URI of every sign-in started, in order. */
    redirectUris,
    /** What the next callback completes to. */
    answer(result: ProviderResult<ProviderIdentity>) {
      next = result
    },
    /** The next callback signs `subject` in with these claims. */
    signsIn(subject: string, claims: Record<string, unknown>, sessionId: string | null = 's1') {
      next = { ok: true, value: { subject, sessionId, claims } }
    },
    /** What the next logout token verifies to, or throws. */
    logout(result: ProviderResult<LogoutRequest> | Error) {
      logout = result
    },
    /**
     * The next logout token ends this subject's (or session's) sessions; its `jti` is new unless
     * given, and it would be accepted until `expiresAt` (default: far ahead).
     */
    logsOut(
      subject: string | null,
      sessionId: string | null,
      {
        tokenId = `logout-${++logouts}`,
        expiresAt = FAR_AHEAD,
      }: { tokenId?: string; expiresAt?: number } = {},
    ) {
      logout = { ok: true, value: { subject, sessionId, tokenId, expiresAt } }
    },
    /** Whether starting a sign-in finds the provider unreachable. */
    down(value: boolean) {
      down = value
    },
  }
}

/**
 * A TOTP port for core tests: 30-second steps, a window of one step, and a code anyone can
 * compute with `codeAt` (the step's number mixed with the secret, six digits). A sealed secret is
 * `sealed:<username>:<secret>`, so one sealed for another person does not open.
 */
export function createFakeTotp() {
  let made = 0
  const period = 30_000
  const codeOf = (secret: string, step: number) => {
    let mixed = step
    for (const char of secret) mixed = (mixed * 31 + char.charCodeAt(0)) % 1_000_000
    return String(mixed).padStart(6, '0')
  }
  return {
    async create(username: string) {
      const secret = `SECRET${++made}`
      const uri = `otpauth://totp/test:${encodeURIComponent(username)}?secret=${secret}`
      return { sealed: `sealed:${username}:${secret}`, secret, uri, qrSvg: '<svg/>' }
    },
    async check(username: string, sealed: string, code: string, now: number) {
      const prefix = `sealed:${username}:`
      if (!sealed.startsWith(prefix)) return null
      const secret = sealed.slice(prefix.length)
      const step = Math.floor(now / period)
      for (const candidate of [step - 1, step, step + 1])
        if (codeOf(secret, candidate) === code) return candidate
      return null
    },
    /** The code of `secret` at time `now`. */
    codeAt: (secret: string, now: number) => codeOf(secret, Math.floor(now / period)),
  } satisfies TotpVerifier & Record<string, unknown>
}
