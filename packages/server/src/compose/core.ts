// The core as this service assembles it, from the settings and the adapters.
import { createHmac, hash } from 'node:crypto'
import * as path from 'node:path'
import {
  type Core,
  type CoreObserver,
  createCore,
  type Digest,
  type Directory,
  type EventSink,
  type IdentityProvider,
  type ModuleInstaller,
  type NodeSetLoader,
  type PasswordVerifier,
  type Stores,
  type TotpVerifier,
  type WebAuthn,
} from '@flowadmin/core'
import { createArgon2Verifier } from '../adapters/argon2.js'
import { createFlowsTypeUsage } from '../adapters/flows.js'
import { createDiskLoader, type DiscoveredModule } from '../adapters/modules-on-disk.js'
import { rangeProblem } from '../adapters/palette-policy.js'
import { createVariableSealer } from '../adapters/variable-sealer.js'
import { trailOptionsOf } from '../config/settings/audit.js'
import type { LdapSettings } from '../config/settings/ldap.js'
import type { MfaSettings } from '../config/settings/mfa.js'
import type { OidcSettings } from '../config/settings/oidc.js'
import type { Settings } from '../config/settings/schema.js'
import type { WebAuthnSettings } from '../config/settings/webauthn.js'
import type { Log } from '../log.js'
import type { LoginQueueSizing } from './login-queue-sizing.js'
import { onFirstUse } from './on-first-use.js'

/**
 * SHA-256 on the event loop. Web Crypto's digest runs on libuv's thread pool, where it would
 * queue behind password hashing: every authenticated request would wait out a login storm.
 * `hash` is the one-shot form: a third of `createHash`'s cost for a token-sized input.
 */
const nodeDigest: Digest = {
  sha256: async (text) => hash('sha256', text, 'hex'),
  hmacSha256: async (key, text) => createHmac('sha256', key).update(text).digest('hex'),
}

/** Single sign-on over openid-client, loaded at the first sign-in. */
const identityProviderOf = (settings: OidcSettings): IdentityProvider => ({
  issuer: settings.issuer,
  ...onFirstUse(
    async () => (await import('../adapters/oidc.js')).createOidcProvider(settings),
    ['authorizationUrl', 'complete', 'verifyLogoutToken'],
  ),
})

/** The directory over ldapts, loaded (and connected) at the first sign-in of a name not configured here. */
const directoryOf = (settings: LdapSettings): Directory =>
  onFirstUse(
    async () => (await import('../adapters/ldap.js')).createLdapDirectory(settings),
    ['authenticate', 'find'],
  )

/** TOTP over otpauth, loaded at the first enrolment or code checked. */
const totpOf = (settings: MfaSettings): TotpVerifier =>
  onFirstUse(
    async () => (await import('../adapters/totp.js')).createTotpVerifier(settings),
    ['create', 'check'],
  )

/** Passkeys over @simplewebauthn/server, loaded at the first ceremony. */
const webAuthnOf = (settings: WebAuthnSettings): WebAuthn =>
  onFirstUse(
    async () => (await import('../adapters/webauthn.js')).createWebAuthn(settings),
    ['registrationOptions', 'verifyRegistration', 'authenticationOptions', 'verifyAuthentication'],
  )

/** What the core of this service is made of; everything but the settings, stores and sinks has a default. */
export interface ServerCoreOptions {
  settings: Settings
  stores: Stores
  events: EventSink
  log: Log
  /** The node modules discovery found: the default loader loads from them. Default: none. */
  modules?: readonly DiscoveredModule[] | undefined
  /** Default: argon2id. */
  verifier?: PasswordVerifier | undefined
  /** The login queue's settings, as sized from the verify rate. Default: the core's. */
  loginQueue?: LoginQueueSizing | undefined
  observer?: CoreObserver | undefined
  /** Default: one over `modules`. */
  loader?: NodeSetLoader | undefined
  /** Default: none, so installs are refused. */
  installer?: ModuleInstaller | undefined
  /** Default: openid-client over `adminAuth.oidc`, when it is set, loaded at the first sign-in. */
  identityProvider?: IdentityProvider | undefined
  /** Default: ldapts over `adminAuth.ldap`, when it is set, loaded at the first sign-in it checks. */
  directory?: Directory | undefined
}

/**
 * The core as this service runs it: argon2, SHA-256 on the event loop, modules on disk, and the
 * adapters of what the settings turn on (single sign-on, second factors, passkeys), each loaded at
 * its first use.
 */
export async function createServerCore(options: ServerCoreOptions): Promise<Core> {
  const { settings, stores, events, log, loginQueue } = options
  // The second factor's key and the directory's password go to their adapters only, not into
  // the core's options.
  const mfa = settings.adminAuth?.mfa
  const webauthn = settings.adminAuth?.webauthn
  const ldap = settings.adminAuth?.ldap
  const adminAuth = settings.adminAuth && {
    ...settings.adminAuth,
    mfa: undefined,
    webauthn: undefined,
    ...(mfa !== undefined && { secondFactor: { require: mfa.require } }),
    ldap: ldap && {
      label: ldap.label,
      permissions: ldap.permissions,
      recheckMinutes: ldap.recheckMinutes,
      throttle: ldap.throttle,
    },
  }
  return createCore(
    {
      stores,
      verifier: options.verifier ?? (await createArgon2Verifier()),
      digest: nodeDigest,
      loader: options.loader ?? createDiskLoader(options.modules ?? []),
      installer: options.installer,
      versionProblem: rangeProblem,
      typeUsage: createFlowsTypeUsage(path.join(settings.userDir, 'flows.json'), (message) =>
        log('error', 'flows file unreadable; disabling modules is refused until it is fixed', {
          reason: message,
        }),
      ),
      events,
      observer: options.observer,
      identityProvider:
        options.identityProvider ??
        (settings.adminAuth?.oidc === undefined ? undefined : identityProviderOf(settings.adminAuth.oidc)),
      directory: options.directory ?? (ldap === undefined ? undefined : directoryOf(ldap)),
      totp: mfa === undefined ? undefined : totpOf(mfa),
      variableSealer: settings.fleet?.flowsKey ? createVariableSealer(settings.fleet.flowsKey) : undefined,
      webauthn: webauthn === undefined ? undefined : webAuthnOf(webauthn),
    },
    {
      fleet: settings.fleet,
      trail: trailOptionsOf(settings.auditTrail),
      access: settings.access,
      adminAuth: adminAuth && {
        ...adminAuth,
        ...(loginQueue && {
          loginQueue: {
            concurrency: loginQueue.concurrency,
            maxWaiting: loginQueue.maxWaiting,
            maxWaitingKnown: loginQueue.maxWaitingKnown,
            retryAfter: loginQueue.retryAfter,
          },
        }),
      },
    },
  )
}
