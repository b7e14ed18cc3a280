import type { AccessOptions } from './access/rights.js'
import type { DirectoryOptions } from './auth/directory.js'
import type { LoginQueueOptions } from './auth/login-queue.js'
import type { ResourceServerOptions } from './auth/resource-servers.js'
import type { SecondFactorPolicy } from './auth/sign-in.js'
import type { SsoOptions } from './auth/sso.js'
import type { ThrottleOptions } from './auth/throttle.js'
import type { UserOptions } from './auth/users.js'
import type { FleetOptions } from './fleet/fleet.js'
import type {
  Clock,
  CoreObserver,
  Digest,
  Directory,
  EventSink,
  IdentityProvider,
  ModuleInstaller,
  NodeSetLoader,
  PasswordVerifier,
  RandomSource,
  Stores,
  TotpVerifier,
  TypeUsage,
  VariableSealer,
  WebAuthn,
} from './ports/index.js'
import type { ApiTokenOptions } from './tokens/api-token-lifetime.js'
import type { TrailOptions } from './trail/trail.js'

export const DEFAULT_CLIENTS: readonly string[] = ['service-admin', 'service-editor']
/** Seconds a token lives unless `sessionExpiryTime` says otherwise: seven days. */
export const DEFAULT_SESSION_EXPIRY = 604_800

/** The users and rules of the credentials scheme. Without it the API is open. */
export interface AdminAuthOptions {
  /** People who log in with a password; none when everyone signs in with the identity provider. */
  users?: readonly UserOptions[] | undefined
  /**
   * Single sign-on with the organisation's OpenID provider (needs the `identityProvider` port):
   * the button's label, and how the person's groups map to permissions.
   */
  oidc?: SsoOptions | undefined
  /**
   * People of the organisation's directory (LDAP, Active Directory; needs the `directory` port):
   * a name that is not a configured user's signs in with the directory's password, and their
   * groups map to permissions.
   */
  ldap?: DirectoryOptions | undefined
  /** Permissions of requests that carry no token. Without it such requests are refused. */
  default?: { permissions: string | readonly string[] } | undefined
  /** Seconds a token lives; default 604800 (seven days). */
  sessionExpiryTime?: number | undefined
  /** Client ids accepted besides `service-admin` and `service-editor`. */
  clients?: readonly string[] | undefined
  throttle?: Partial<ThrottleOptions> | undefined
  /** Lifetimes of named API tokens: 90 days by default, at most a year, never "never". */
  apiTokens?: Partial<ApiTokenOptions> | undefined
  /** The queue in front of password verification. */
  loginQueue?: Partial<LoginQueueOptions> | undefined
  /** Programs that may ask about tokens (introspection) and check passwords for their users. */
  resourceServers?: readonly ResourceServerOptions[] | undefined
  /**
   * Who must have a second factor to sign in with a password: nobody (default), `everyone`, or
   * whoever holds any of the listed permissions. Such people sign in on flowadmin's page (asked to
   * enrol there when they have none); the password grant refuses them (`mfa_required`).
   */
  secondFactor?: { require: SecondFactorPolicy } | undefined
}

export interface CoreOptions {
  adminAuth?: AdminAuthOptions | null | undefined
  /**
   * Fleet mode: the module routes state the desired modules of the Node-RED instances that report
   * here (see createFleet), not the modules of this process. Off when absent or null.
   */
  fleet?: FleetOptions | null | undefined
  /** How long and how many events the trail keeps, and how fast reporters may add them; default DEFAULT_TRAIL_OPTIONS. */
  trail?: TrailOptions | undefined
  /**
   * Who may do what where: the settings' roles (beside the built-in ones) and groups of instances
   * (each group's instance id patterns). Grants name them (see access/grants.ts).
   */
  access?: AccessOptions | undefined
}

export interface CorePorts {
  stores: Stores
  verifier: PasswordVerifier
  loader: NodeSetLoader
  typeUsage: TypeUsage
  events?: EventSink | undefined
  /** Installs and removes node modules; without it every install is refused as not allowed. */
  installer?: ModuleInstaller | undefined
  /**
   * Why a module's version is not one an install takes (a semver version or range), or null: the
   * same check as the installer's, for the versions a snapshot names. Without it, any version of at
   * most 64 characters.
   */
  versionProblem?: ((version: string) => string | null) | undefined
  /** Defaults to the system clock. */
  clock?: Clock | undefined
  /** Defaults to the platform CSPRNG. */
  random?: RandomSource | undefined
  /** Defaults to Web Crypto's SHA-256. */
  digest?: Digest | undefined
  /** Told what the core measures of itself (for metrics); nothing by default. */
  observer?: CoreObserver | undefined
  /** The organisation's OpenID provider, for `adminAuth.oidc`. */
  identityProvider?: IdentityProvider | undefined
  /** The organisation's directory, for `adminAuth.ldap`. */
  directory?: Directory | undefined
  /** TOTP secrets and codes; without it no one can enrol a second factor. */
  totp?: TotpVerifier | undefined
  /**
   * Seals secret flow variables for the store and opens them for a deploy (see VariableSealer).
   * Without it, secret variables cannot be set; plain ones can.
   */
  variableSealer?: VariableSealer | undefined
  /** Passkey ceremonies (the relying party); without it no one can register or use a passkey. */
  webauthn?: WebAuthn | undefined
}
