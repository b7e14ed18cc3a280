// The rules every part of the fleet's identities shares: what an instance id, a group name and a
// client id of an instance look like, and how secrets are made.
import { MACHINE_SECRET_BYTES } from '../auth/machine-secret.js'
import type { RandomSource } from '../ports/index.js'
import { base64url } from '../tokens/encoding.js'

/** An instance id: 1 to 128 letters, digits, ".", "_" or "-", starting with a letter or digit. */
export const INSTANCE_ID_FORM = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/

/** A group name: 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit. */
export const GROUP_NAME_FORM = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

/** Most groups one enrolment token names. */
export const MAX_ENROLMENT_GROUPS = 32

/** Bounds of an enrolment token: its uses, and its lifetime in seconds (default one hour). */
export const ENROLMENT_BOUNDS = {
  uses: { min: 1, max: 1000, default: 1 },
  expiresIn: { min: 60, max: 604_800, default: 3600 },
} as const

/** Enrolled instances one resource server may hold unless `fleet.maxInstances` says otherwise. */
export const DEFAULT_MAX_INSTANCES = 1000

/** The prefix of an enrolment token, and of an instance's secret. */
export const ENROLMENT_TOKEN_PREFIX = 'fae_'
export const INSTANCE_SECRET_PREFIX = 'fai_'

/** Longest enrolment token or secret looked at: anything longer is refused unhashed. */
export const MAX_SECRET_LENGTH = 256

/** The client id of an enrolled instance: its resource server's id, "/", its own id. */
export const instanceClientId = (resourceServer: string, instance: string) => `${resourceServer}/${instance}`

/**
 * The resource server and instance a client id names (`fleet/nr-1`), or null for a plain
 * resource server's id (resource server ids never hold "/").
 */
export function instanceOfClientId(clientId: string): { resourceServer: string; instance: string } | null {
  const slash = clientId.indexOf('/')
  if (slash < 1) return null
  const instance = clientId.slice(slash + 1)
  return INSTANCE_ID_FORM.test(instance) ? { resourceServer: clientId.slice(0, slash), instance } : null
}

/** A new secret with `prefix`: 256 random bits, base64url. */
export const newSecret = (random: RandomSource, prefix: string) =>
  `${prefix}${base64url(random.bytes(MACHINE_SECRET_BYTES))}`

/** An instance id flowadmin makes when neither the token nor the instance names one: `nr-<8 hex>`. */
export const generatedInstanceId = (random: RandomSource) =>
  `nr-${[...random.bytes(4)].map((byte) => byte.toString(16).padStart(2, '0')).join('')}`

/**
 * Who a resource server's caller is: the server itself with its shared secret (`instance` null),
 * or one of its enrolled instances with a credential of its own. `audience` is what the tokens
 * issued through it are for, and what its introspection sees as live.
 */
export interface ClientIdentity {
  /** What it authenticated as: the resource server's id, or `<resource server>/<instance>`. */
  clientId: string
  resourceServer: string
  instance: string | null
  audience: string
}

/** A request whose credential is one instance's names another. */
export type InstanceMismatch = { code: 'instance_mismatch'; instance: string; where: 'request' }
