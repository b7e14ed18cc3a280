import * as argon2 from 'argon2'
import type { Settings } from './settings.js'

/** The demo's users and passwords (examples/demo, and the README): known to anyone who read them. */
export const DEMO_CREDENTIALS: ReadonlyArray<{ username: string; password: string }> = [
  { username: 'admin', password: 'flowadmin-demo' },
  { username: 'viewer', password: 'flowadmin-view' },
]

/**
 * The demo credentials these settings accept, as `username / password`: a user of the demo's name
 * whose hash matches the demo's password, however the settings file came to hold it (the demo's
 * own, or a copy of it). At most one hash is checked per demo user.
 */
export async function demoCredentialsIn(settings: Pick<Settings, 'adminAuth'>): Promise<string[]> {
  const users = settings.adminAuth?.users ?? []
  const found: string[] = []
  for (const { username, password } of DEMO_CREDENTIALS) {
    const user = users.find((candidate) => candidate.username === username)
    if (user === undefined) continue
    if (await argon2.verify(user.password, password).catch(() => false))
      found.push(`${username} / ${password}`)
  }
  return found
}
