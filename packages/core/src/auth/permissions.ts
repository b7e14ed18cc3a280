// Permission words: `*` (everything), `read` (every `<resource>.read`), `write` (every
// `<resource>.write`), or `<resource>.read` / `<resource>.write` exactly.

/** Settings may give permissions as one word or a list; the core works with lists. */
export function toPermissionList(permissions: string | readonly string[] | undefined | null): string[] {
  if (permissions == null) return []
  return typeof permissions === 'string' ? [permissions] : [...permissions]
}

function grants(granted: string, needed: string): boolean {
  if (granted === '*' || granted === needed) return true
  if (granted === 'read') return needed.endsWith('.read')
  if (granted === 'write') return needed.endsWith('.write')
  return false
}

/**
 * True when `granted` covers `needed`. The empty permission is covered by anything, including
 * no permissions at all (it marks routes that need only an authenticated caller).
 */
export function hasPermission(granted: readonly string[], needed: string): boolean {
  if (needed === '') return true
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
