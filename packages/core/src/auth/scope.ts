import { isRightsWord } from '../access/grants.js'
import { err, ok, type Result } from '../errors.js'
import { hasPermission } from './permissions.js'

/** The scope words a client may request. */
export const SCOPE_WORDS: readonly string[] = ['*', 'read']

export type ScopeError = { code: 'invalid_scope'; message: string }

/**
 * Words separated by spaces, each one `isValid` accepts, without repeats; an empty scope is an
 * empty list. A word refused is named in the error, followed by `valid`, which says what is.
 */
function parseWords(
  scope: string,
  isValid: (word: string) => boolean,
  valid: string,
): Result<string[], ScopeError> {
  const words = scope.split(' ').filter((word) => word !== '')
  const unknown = words.find((word) => !isValid(word))
  if (unknown !== undefined) {
    return err({ code: 'invalid_scope', message: `Unsupported scope: ${unknown.slice(0, 64)} (${valid})` })
  }
  return ok([...new Set(words)])
}

/**
 * Parses a requested scope: words separated by spaces, each `*` or `read`. An empty scope is
 * returned as an empty list, meaning "the user's own permissions".
 */
export function parseScope(scope: string): Result<string[], ScopeError> {
  return parseWords(
    scope,
    (word) => SCOPE_WORDS.includes(word),
    `valid scopes: ${SCOPE_WORDS.join(' and ')}, separated by spaces`,
  )
}

/**
 * Parses the scope of a named API token: rights words separated by spaces (any permission word,
 * alone or on a scope, or a role on a scope: see access/grants.ts), so a token may carry any subset
 * of its owner's rights. Empty: the owner's.
 */
export function parsePermissionScope(scope: string): Result<string[], ScopeError> {
  return parseWords(
    scope,
    isRightsWord,
    'a scope is permission words separated by spaces: *, read, write, *.read, *.write or <resource>.read|write, or role:<name>; each may end in @flowadmin or @<group>',
  )
}

/**
 * The permissions a token gets: the requested words when the user holds every one of them,
 * the user's own permissions for an empty request, and null when the request exceeds them.
 * `covers` says whether the user's words hold a requested word somewhere (given the roles); by
 * default, as a permission. The token's rights at each place are its scope ∩ its user's rights
 * there, so a scope is a ceiling, never more than the user holds where it is used.
 */
export function grantScope(
  requested: readonly string[],
  userPermissions: readonly string[],
  covers: (words: readonly string[], word: string) => boolean = hasPermission,
): string[] | null {
  if (requested.length === 0) return [...userPermissions]
  return requested.every((word) => covers(userPermissions, word)) ? [...requested] : null
}
