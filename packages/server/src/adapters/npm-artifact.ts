import { readFile } from 'node:fs/promises'
import * as path from 'node:path'
import type { InstalledArtifact } from '@flowadmin/core'

// Which tarball npm installed for a module: its lockfile's entry, `integrity` and `resolved`, as
// npm itself wrote them from the bytes it fetched and checked. userDir's package-lock.json first;
// npm's hidden lockfile in node_modules when the userDir's .npmrc turns the lockfile off.

const LOCKFILES = ['package-lock.json', path.join('node_modules', '.package-lock.json')]
/** A SHA-512 in SRI form: 64 bytes in base64. */
const SHA512 = /^sha512-[A-Za-z0-9+/]{86}==$/

/** The tarball of `name` at `version` that npm installed in `userDir`, or null when no lockfile says it. */
export async function installedArtifact(
  userDir: string,
  name: string,
  version: string,
): Promise<InstalledArtifact | null> {
  for (const file of LOCKFILES) {
    const entry = entryOf(await readJson(path.join(userDir, file)), name)
    if (entry === null) continue
    return artifactOf(entry, version)
  }
  return null
}

/** The lockfile's entry of a top-level dependency (lockfile v2 and v3). */
function entryOf(lock: unknown, name: string): Record<string, unknown> | null {
  if (!isObject(lock) || !isObject(lock.packages)) return null
  const entry = lock.packages[`node_modules/${name}`]
  return isObject(entry) ? entry : null
}

/** Its integrity's SHA-512 (an integrity may list several hashes) and its http(s) URL; null otherwise. */
export function artifactOf(entry: Record<string, unknown>, version: string): InstalledArtifact | null {
  if (entry.version !== version || typeof entry.integrity !== 'string' || typeof entry.resolved !== 'string')
    return null
  const integrity = entry.integrity.split(/\s+/).find((hash) => SHA512.test(hash))
  let url: URL
  try {
    url = new URL(entry.resolved)
  } catch {
    return null
  }
  if (integrity === undefined || (url.protocol !== 'https:' && url.protocol !== 'http:')) return null
  return { integrity, tarball: url.href }
}

async function readJson(file: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(file, 'utf8'))
  } catch {
    return null
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
