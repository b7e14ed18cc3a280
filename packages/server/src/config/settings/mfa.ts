// `adminAuth.mfa`: people's second factors (TOTP and recovery codes), sealed with a key.
import * as v from 'valibot'
import { type FieldProblem, permissionWord, strictObject, text } from './fields.js'

/** `adminAuth.mfa`, with the key resolved. */
export interface MfaSettings {
  /** The key TOTP secrets are sealed with (at least 32 characters). */
  key: string
  /** The name authenticator apps show beside the username; default `flowadmin`. */
  issuer: string
  /**
   * Who must have a second factor to sign in with a password: `none` (default), `everyone`, or
   * whoever holds any of these permissions.
   */
  require: 'none' | 'everyone' | string[]
}

/** Where the second-factor key comes from when the settings file does not hold it. */
export const MFA_KEY_ENV = 'FLOWADMIN_MFA_KEY'
export const DEFAULT_MFA_ISSUER = 'flowadmin'
/** The fewest characters of a second-factor key (it should hold at least 256 random bits). */
export const MIN_MFA_KEY_LENGTH = 32
/** The second-factor key the repository's examples print: anyone can read it. */
export const EXAMPLE_MFA_KEY = 'the-published-demo-key-for-second-factors'
/** Set to `1`, it lets a start use EXAMPLE_MFA_KEY (the scripts that run the examples set it). */
export const ALLOW_EXAMPLE_MFA_KEY_ENV = 'FLOWADMIN_ALLOW_EXAMPLE_MFA_KEY'

export const mfa = strictObject({
  key: v.optional(
    v.pipe(
      text(`a key of at least ${MIN_MFA_KEY_LENGTH} random characters, or set ${MFA_KEY_ENV}`),
      v.minLength(MIN_MFA_KEY_LENGTH, `must have at least ${MIN_MFA_KEY_LENGTH} characters`),
    ),
  ),
  issuer: v.optional(text('the name authenticator apps show')),
  require: v.optional(
    v.union(
      [
        v.picklist(['none', 'everyone']),
        v.pipe(v.array(permissionWord), v.nonEmpty('must list at least one permission')),
      ],
      'must be "none", "everyone", or a non-empty list of permissions (e.g. ["*"])',
    ),
  ),
})

/**
 * `adminAuth.mfa` as the server uses it, the key from the file, else the environment (where it
 * turns second factors on by itself); undefined when neither has one.
 */
export function mfaOf(
  parsed: v.InferOutput<typeof mfa> | undefined,
  problem: FieldProblem,
): MfaSettings | undefined {
  const key = parsed?.key ?? process.env[MFA_KEY_ENV]
  if (key !== undefined && key.length < MIN_MFA_KEY_LENGTH) {
    throw problem('.mfa.key', `${MFA_KEY_ENV} must have at least ${MIN_MFA_KEY_LENGTH} characters`)
  }
  if (parsed !== undefined && key === undefined) {
    throw problem('.mfa.key', `is required: set it here or in the environment as ${MFA_KEY_ENV}`)
  }
  if (key === undefined) return undefined
  return { key, issuer: parsed?.issuer ?? DEFAULT_MFA_ISSUER, require: parsed?.require ?? 'none' }
}

/**
 * Why a start must not use these second-factor settings, or null: their key is the examples'
 * (TOTP secrets sealed with a key anyone can read are no secret), and neither `allowed` (the demo)
 * nor ALLOW_EXAMPLE_MFA_KEY_ENV says it is meant.
 */
export function exampleMfaKeyRefusal(settings: MfaSettings | undefined, allowed: boolean): string | null {
  if (settings?.key !== EXAMPLE_MFA_KEY || allowed || process.env[ALLOW_EXAMPLE_MFA_KEY_ENV] === '1')
    return null
  return (
    `adminAuth.mfa.key (or ${MFA_KEY_ENV}) is the key printed in flowadmin's examples, which anyone can read, ` +
    'so second factors sealed with it would be no secret: make a key of your own (`openssl rand -base64 48`). ' +
    `Only to run an example as it is, set ${ALLOW_EXAMPLE_MFA_KEY_ENV}=1.`
  )
}
