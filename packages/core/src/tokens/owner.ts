import type { User } from '../auth/users.js'
import type { TokenRecord } from '../ports/index.js'

/**
 * The fingerprint of every token of a person the identity provider vouched for starts with this:
 * `sso:<identity>:<session>`, keyed hashes of the provider's subject and session. A password
 * user's fingerprint is hex, so the two never meet.
 */
export const SSO_FINGERPRINT_PREFIX = 'sso:'

/**
 * The fingerprint of every token of a person of the directory starts with this: `dir:<identity>:`,
 * a keyed hash of the directory entry's lasting identity (entryUUID, objectGUID or DN).
 */
export const DIRECTORY_FINGERPRINT_PREFIX = 'dir:'

/**
 * A person vouched for elsewhere (the identity provider, or the directory), as their tokens need
 * them: not in the settings' users, so their rights travel with their tokens.
 */
export interface SsoUser {
  username: string
  /** Their permissions as derived from the provider's claims or the directory's groups at their latest sign-in. */
  permissions: string[]
  /** `sso:<identity>:<session>` or `dir:<identity>:` (see the prefixes above). */
  fingerprint: string
}

/** Whom a token is for: a configured user, or a person signed in with the identity provider or the directory. */
export type TokenOwner = User | SsoUser

/** True for a token of a person signed in with the identity provider. */
export const isSsoRecord = (record: TokenRecord): boolean =>
  record.fingerprint.startsWith(SSO_FINGERPRINT_PREFIX)

/** True for a token of a person of the directory. */
export const isDirectoryRecord = (record: Pick<TokenRecord, 'fingerprint'>): boolean =>
  record.fingerprint.startsWith(DIRECTORY_FINGERPRINT_PREFIX)

/** `dir:<identity>:`, the part of a directory token's fingerprint that names its person. */
export const directoryPersonOf = (record: Pick<TokenRecord, 'fingerprint'>): string =>
  record.fingerprint.slice(0, record.fingerprint.indexOf(':', DIRECTORY_FINGERPRINT_PREFIX.length) + 1)

/** The labels of the sources of people beside the settings' users; null where none is configured. */
export interface ProviderLabels {
  /** The identity provider's (`adminAuth.oidc.label`). */
  sso: string | null
  /** The directory's (`adminAuth.ldap.label`). */
  directory: string | null
}

/** The label of the source a token's person signed in with, or null for one of the settings' users. */
export const providerOf = (
  record: Pick<TokenRecord, 'fingerprint'>,
  labels: ProviderLabels,
): string | null =>
  record.fingerprint.startsWith(SSO_FINGERPRINT_PREFIX)
    ? labels.sso
    : isDirectoryRecord(record)
      ? labels.directory
      : null
