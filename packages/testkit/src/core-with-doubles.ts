import {
  type AccessOptions,
  type AdminAuthOptions,
  createCore,
  type FleetOptions,
  type Stores,
  type TrailOptions,
} from '@flowadmin/core'
import {
  createEventRecorder,
  createFakeInstaller,
  createFakeLoader,
  createFakeTotp,
  createFakeTypeUsage,
  createFixedClock,
  createPlainHasher,
  createSeededRandom,
  type PlainHasher,
} from './doubles.js'
import { createFakeWebAuthn } from './fake-webauthn.js'

export interface CoreWithDoublesOptions {
  stores: Stores
  /** The credentials scheme, given the plain hasher for the users' passwords; null: auth off. */
  adminAuth: (hasher: PlainHasher) => AdminAuthOptions | null
  /** Load errors by node set id. */
  loaderFailures?: Record<string, string>
  typesInUse?: string[]
  /** Seed of the random source; a core started again over the same stores needs another. Default 7. */
  seed?: number
  /** Fleet mode's options; absent: off. */
  fleet?: FleetOptions | undefined
  /** false: no relying party, so passkeys are not configured. Default true. */
  passkeys?: boolean | undefined
  /** The trail's retention and reporters' pace; absent: the core's defaults. */
  trail?: TrailOptions | undefined
  /** Roles and groups of instances (see CoreOptions.access); absent: the built-in roles alone. */
  access?: AccessOptions | undefined
}

/**
 * A core over `stores` and every test double: a fixed clock, seeded randomness, plain passwords,
 * a recording loader, settable type usage, an event recorder, an installer over a pretend
 * registry, a TOTP port whose codes the test computes and a pretend relying party (passkeys), all returned for the test.
 */
export function createCoreWithDoubles(options: CoreWithDoublesOptions) {
  const clock = createFixedClock()
  const hasher = createPlainHasher()
  const loader = createFakeLoader(options.loaderFailures)
  const typeUsage = createFakeTypeUsage(options.typesInUse)
  const events = createEventRecorder()
  const installer = createFakeInstaller()
  const totp = createFakeTotp()
  const webauthn = createFakeWebAuthn()
  const { stores } = options
  const core = createCore(
    {
      stores,
      verifier: hasher,
      loader,
      typeUsage,
      events,
      clock,
      installer,
      totp,
      ...(options.passkeys !== false && { webauthn }),
      random: createSeededRandom(options.seed ?? 7),
    },
    {
      adminAuth: options.adminAuth(hasher),
      fleet: options.fleet,
      trail: options.trail,
      access: options.access,
    },
  )
  return { core, clock, hasher, loader, typeUsage, events, stores, installer, totp, webauthn }
}
