// Permissions mean exactly what they mean to Node-RED 4.1 (its editor API's `hasPermission`), so
// that one fleet's settings grant the same everywhere: `*` is everything; `read` and `*.read` are
// `read` and every `<resource>.read`; `write` and `*.write` likewise; any other word covers only
// itself. A differential test holds this rule against Node-RED's own.

/**
 * A permission word as flowadmin accepts it in settings and API token scopes: `*`, `read`,
 * `write`, `*.read`, `*.write`, or `<resource>.read|write` with a resource of letters, digits,
 * `_` and `-` starting with a letter.
 */
export const PERMISSION_WORD = /^(\*|read|write|\*\.(read|write)|[a-z][a-zA-Z0-9_-]*\.(read|write))$/

/** Settings may give permissions as one word or a list; the core works with lists. */
export function toPermissionList(permissions: string | readonly string[] | undefined | null): string[] {
  if (permissions == null) return []
  return typeof permissions === 'string' ? [permissions] : [...permissions]
}

/** `read`, or a resource's read: `<resource>.read`, the resource one line of at least a character. */
const READ = /^((.+)\.)?read$/
const WRITE = /^((.+)\.)?write$/

function grants(granted: string, needed: string): boolean {
  if (granted === '*' || granted === needed) return true
  if (granted === 'read' || granted === '*.read') return READ.test(needed)
  if (granted === 'write' || granted === '*.write') return WRITE.test(needed)
  return false
}

/**
 * True when `granted` covers `needed`; a list of needed permissions must be covered one by one.
 * The empty permission is covered by anything, including no permissions at all (it marks routes
 * that need only an authenticated caller).
 */
export function hasPermission(granted: readonly string[], needed: string | readonly string[]): boolean {
  if (needed === '') return true
  if (typeof needed !== 'string') return needed.every((word) => hasPermission(granted, word))
  return granted.some((word) => grants(word, needed))
}

/**
 * What both lists grant: each pair of words meets in the narrower one when one covers the other
 * (`*` ∩ `read` = `read`, `read` ∩ `nodes.read` = `nodes.read`), and not at all otherwise.
 */
export function intersectPermissions(a: readonly string[], b: readonly string[]): string[] {
  // The common cases, without the pairwise walk: either side is everything.
  if (a.length === 1 && a[0] === '*') return [...b]
  if (b.length === 1 && b[0] === '*') return [...a]
  const both = new Set<string>()
  for (const x of a) {
    for (const y of b) {
      if (grants(x, y)) both.add(y)
      else if (grants(y, x)) both.add(x)
    }
  }
  return [...both]
}
