import {
  type AccessOptions,
  type AdminAuthOptions,
  createCore,
  type FleetOptions,
  type IdentityProvider,
  type LocalSignInMethod,
  type Stores,
  type UserOptions,
  type UserPrincipal,
} from '@flowadmin/core'
import {
  createEventRecorder,
  createFakeLoader,
  createFakeTotp,
  createFakeTypeUsage,
  createFixedClock,
  createPlainHasher,
  createSeededRandom,
  type PlainHasher,
} from './doubles.js'
import { createFakeWebAuthn } from './fake-webauthn.js'

/** The address the people of a core world log in from. */
export const WORLD_ADDRESS = '10.0.0.1'

export interface CoreWorldOptions {
  stores: Stores
  /**
   * What `adminAuth` holds besides the people, given the plain hasher (for resource servers'
   * secrets); `users` here replaces the people.
   */
  adminAuth?: ((hasher: PlainHasher) => Partial<AdminAuthOptions>) | undefined
  /** Seed of the random source. Default 7. */
  seed?: number | undefined
  /** A TOTP port whose codes the test computes (`totp.codeAt`); without it no one can enrol. */
  totp?: boolean | undefined
  /** A pretend relying party (`webauthn.create`, `webauthn.get`); without it no passkeys. */
  webauthn?: boolean | undefined
  /** The organisation's OpenID provider, for `adminAuth.oidc`. */
  identityProvider?: IdentityProvider | undefined
  /** Fleet mode (see CoreOptions.fleet); off by default. */
  fleet?: FleetOptions | undefined
  /** Roles and groups of instances (see CoreOptions.access). */
  access?: AccessOptions | undefined
}

/**
 * The world of the core's own tests: a core over `stores` with a fixed clock, seeded randomness,
 * plain passwords and an event recorder, and two people whose password is `pw`: `admin` (`*`) and
 * `alice` (`read`). `login` gives a session of the person's own permissions, from WORLD_ADDRESS,
 * and `principalOf` the person behind a token.
 */
export function createCoreWorld(options: CoreWorldOptions) {
  const clock = createFixedClock()
  const hasher = createPlainHasher()
  const events = createEventRecorder()
  const totp = createFakeTotp()
  const webauthn = createFakeWebAuthn()
  const { stores } = options
  const adminAuth: AdminAuthOptions = {
    users: [
      { username: 'admin', password: hasher.hash('pw'), permissions: '*' },
      { username: 'alice', password: hasher.hash('pw'), permissions: 'read' },
    ],
    ...options.adminAuth?.(hasher),
  }
  const users: readonly UserOptions[] = adminAuth.users ?? []
  const core = createCore(
    {
      stores,
      verifier: hasher,
      loader: createFakeLoader(),
      typeUsage: createFakeTypeUsage(),
      events,
      clock,
      random: createSeededRandom(options.seed ?? 7),
      ...(options.totp === true && { totp }),
      ...(options.webauthn === true && { webauthn }),
      ...(options.identityProvider !== undefined && { identityProvider: options.identityProvider }),
    },
    { adminAuth, fleet: options.fleet ?? null, access: options.access },
  )

  /** The password grant of `username` (password `pw`): its token, or a throw naming the refusal. */
  const login = async (username: string, scope = '') => {
    const issued = await core.login(
      { grantType: 'password', clientId: 'service-admin', username, password: 'pw', scope },
      WORLD_ADDRESS,
    )
    if (!issued.ok) throw new Error(issued.error.code)
    return issued.value.accessToken
  }
  /**
   * A session of `username` as flowadmin's sign-in page issues one once the person proved who
   * they are with `method` (the page's one-time code, traded by the console), from WORLD_ADDRESS.
   */
  const signedInWith = async (username: string, method: LocalSignInMethod) => {
    const user = users.find((one) => one.username === username)
    if (user === undefined || core.signIn.exchange === null) throw new Error(`no user ${username}`)
    const browser = `browser-of-${username}`
    const owner = { username, permissions: [], fingerprint: '', method }
    const code = await core.signIn.handOver(owner, { binding: browser, authorization: null }, WORLD_ADDRESS)
    if (!code.ok) throw new Error(code.error)
    const issued = await core.signIn.exchange(browser, code.value, 'service-editor', WORLD_ADDRESS, null)
    if (!issued.ok) throw new Error(issued.error.message)
    return issued.value.accessToken
  }
  /** The person signed in with `token`; throws for anyone else. */
  const principalOf = async (token: string): Promise<UserPrincipal> => {
    const principal = await core.authenticate(token)
    if (!principal.ok || principal.value.kind !== 'user') throw new Error('not signed in')
    return principal.value
  }
  return { core, clock, hasher, events, stores, users, totp, webauthn, login, signedInWith, principalOf }
}

export type CoreWorld = ReturnType<typeof createCoreWorld>
