// The staging folders npm works in, inside userDir: each owned by one process, whose heartbeat
// tells another instance sharing the userDir a folder in use from one a crash left behind.
import { mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import * as path from 'node:path'

/** The folders inside userDir that npm works in; swept at start in case a crash left one. */
const STAGING_PREFIX = '.flowadmin-staging-'
/**
 * In a staging folder: who works in it, `{"host", "pid"}`. Its modification time is the owner's
 * heartbeat, renewed while the folder is in use, so another instance sharing the userDir (on this
 * machine or another) can tell a folder in use from one a crash left behind.
 */
const OWNER = '.owner'
/** How often a staging folder in use has its heartbeat renewed. */
const HEARTBEAT_MS = 10_000
/** A staging folder whose heartbeat is older than this is left over, whoever owned it. */
const STALE_MS = 6 * HEARTBEAT_MS

/**
 * Removes staging folders a crash left behind, and only those: another instance sharing this
 * userDir may be installing in one of its own right now.
 */
export async function sweepStaging(userDir: string): Promise<void> {
  const entries = await readdir(userDir).catch(() => [])
  for (const entry of entries) {
    if (!entry.startsWith(STAGING_PREFIX)) continue
    const dir = path.join(userDir, entry)
    if (!(await inUse(dir))) await rm(dir, { recursive: true, force: true })
  }
}

/**
 * True while a staging folder may be in use: its heartbeat (or, before its owner is written, its
 * own age) is recent, and when the owner is a process of this machine, that process is alive.
 */
async function inUse(dir: string): Promise<boolean> {
  const owner = await readFile(path.join(dir, OWNER), 'utf8')
    .then((text) => JSON.parse(text) as { host?: unknown; pid?: unknown })
    .catch(() => null)
  const beat = (await stat(path.join(dir, OWNER)).catch(() => null)) ?? (await stat(dir).catch(() => null))
  if (beat === null || Date.now() - beat.mtimeMs > STALE_MS) return false
  if (owner?.host === hostname() && typeof owner.pid === 'number') return isAlive(owner.pid)
  return true
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: alive, but another user's.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * A new staging folder of this process, named after its pid, with its owner written and its
 * heartbeat renewed until `release()`.
 */
export async function claimStaging(userDir: string): Promise<{ dir: string; release(): void }> {
  const dir = await mkdtemp(path.join(userDir, `${STAGING_PREFIX}${process.pid}-`))
  const owner = path.join(dir, OWNER)
  await writeFile(owner, JSON.stringify({ host: hostname(), pid: process.pid }))
  const heartbeat = setInterval(() => {
    const now = new Date()
    utimes(owner, now, now).catch(() => {})
  }, HEARTBEAT_MS)
  heartbeat.unref()
  return { dir, release: () => clearInterval(heartbeat) }
}
