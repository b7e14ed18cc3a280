import { type BigIntStats, statSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import type { TypeUsage } from '@flowadmin/core'

/**
 * How long after its last change a file's timestamps are trusted to tell a later change apart.
 * File systems stamp changes with a coarse clock (a kernel tick; whole seconds on some), so two
 * writes of the same size within one tick look alike; a file changed more recently than this is
 * read again at every call.
 */
const SETTLED_NS = 2_000_000_000n

/** What identifies one version of the file: a rename, a write or a truncation changes it. */
const fingerprint = (stats: BigIntStats) =>
  `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`

/**
 * The types in use, from the flows file (flows change when they are deployed). The file holds an
 * array of node objects, or an object whose `flows` is that array; the `type` of each counts. A
 * missing or empty file means no flows and so no types in use.
 *
 * The set is kept in memory and the file is read and parsed again only when it changed: each call
 * compares the file's identity, size and change times with those of the version the set came from
 * (a synchronous stat: a few microseconds, and never queued behind password hashing in the thread
 * pool). A file changed within the last two seconds is read again at every call, so a change is
 * never missed however coarse the file system's clock: the answer is never stale.
 *
 * A file that cannot be read or parsed gives null, after telling `onUnreadable` why (the message
 * names the file: it is for the server's log, never for a response). The core then refuses every
 * disable rather than risk removing a type a flow needs; enabling never asks, so it still works.
 */
export function createFlowsTypeUsage(
  file: string,
  onUnreadable: (message: string) => void = () => {},
): TypeUsage {
  let cached: { version: string; types: ReadonlySet<string> } | null = null
  const unreadable = (message: string) => {
    onUnreadable(message)
    return null
  }
  const stat = () => {
    try {
      return statSync(file, { bigint: true, throwIfNoEntry: false }) ?? null
    } catch (error) {
      return error as Error
    }
  }
  return {
    async typesInUse() {
      const before = stat()
      if (before === null) return new Set()
      if (before instanceof Error) return unreadable(`cannot read the flows file ${file}: ${before.message}`)
      const version = fingerprint(before)
      if (cached?.version === version) return cached.types
      cached = null
      let source: string
      try {
        source = await readFile(file, 'utf8')
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Set()
        return unreadable(`cannot read the flows file ${file}: ${(error as Error).message}`)
      }
      const types = parseTypes(source, file)
      if (typeof types === 'string') return unreadable(types)
      // Kept only when the file was settled before it was read, and is still that version after.
      const after = stat()
      const settled = BigInt(Date.now()) * 1_000_000n - before.mtimeNs > SETTLED_NS
      if (settled && after !== null && !(after instanceof Error) && fingerprint(after) === version) {
        cached = { version, types }
      }
      return types
    },
  }
}

/** The set of types in a flows file's text, or why it has none. */
function parseTypes(source: string, file: string): ReadonlySet<string> | string {
  let parsed: unknown
  try {
    parsed = source.trim() === '' ? [] : JSON.parse(source)
  } catch (error) {
    return `the flows file ${file} is not valid JSON: ${(error as Error).message}`
  }
  const nodes =
    typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as { flows?: unknown }).flows
      : parsed
  if (!Array.isArray(nodes)) return `the flows file ${file} must hold an array of nodes`
  const types = new Set<string>()
  for (const node of nodes) {
    const type = (node as { type?: unknown } | null)?.type
    if (typeof type === 'string' && type !== '') types.add(type)
  }
  return types
}
