// What a restart of Node-RED must not lose: a logout refused while flowadmin was away, kept in the
// userDir, its token still refused after the restart until flowadmin revokes it.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import * as path from 'node:path'
import { waitFor } from '@flowadmin/testkit'
import { afterEach, describe, expect, test } from 'vitest'
import { flowadmin } from './load.js'
import { loadSettingsModule } from './settings-module.js'
import { type StubFlowadmin, startStubFlowadmin } from './stub-flowadmin.js'

const require = createRequire(import.meta.url)
const FILE = '.flowadmin-pending-logouts.json'
let stub: StubFlowadmin | undefined
afterEach(async () => {
  await stub?.close()
  stub = undefined
})

/** The editor's logout through the middleware of these options: `next` (on to Node-RED) or the status. */
function logout(options: object, token: string) {
  const middleware = flowadmin.httpAdminMiddleware(options as never)
  return new Promise<number | 'next'>((resolve) => {
    const req = { method: 'POST', url: '/auth/revoke', headers: { authorization: `Bearer ${token}` } }
    const res = {
      statusCode: 200,
      once: () => res,
      setHeader: () => res,
      end: () => resolve(res.statusCode),
    }
    middleware(req as never, res as never, () => resolve('next'))
  })
}

describe('a logout refused while flowadmin was away', () => {
  test('survives a restart: kept in the userDir (0600), the token refused until flowadmin revokes it', async () => {
    stub = await startStubFlowadmin()
    const live = stub
    // The token is cached, so the logout knows it is one this instance accepted.
    const before = loadSettingsModule(live.url, { options: { timeoutMs: 500, cacheMs: 5000 } })
    const token = (await before.adminAuth.authenticate('admin', 'pw'))?.token ?? ''
    live.setMode('down')
    expect(await logout(before.options, token)).toBe('next')
    const file = path.join(before.userDir, FILE)
    expect(existsSync(file)).toBe(true)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      version: 1,
      pending: [{ token, expiresAt: null }],
      unvouched: [],
    })
    expect(readdirSync(before.userDir).filter((name) => name.endsWith('.tmp'))).toEqual([])

    // Node-RED restarts (the same userDir, a new process's objects); flowadmin is back, but does
    // not answer revocations yet. The token is still good there: refused here, never asked.
    live.holdRevocations()
    live.setMode('up')
    const after = loadSettingsModule(live.url, { userDir: before.userDir, fileName: 'settings-after.js' })
    // Node-RED serves nothing before it listens, well after its settings are loaded.
    await new Promise((resolve) => setImmediate(resolve))
    expect(await after.adminAuth.tokens(token)).toBeNull()
    expect(live.isLive(token)).toBe(true)
    expect(live.to('/auth/introspect').filter((r) => r.form.token === token)).toHaveLength(1)
    await waitFor(
      () => live.to('/auth/revoke').some((r) => r.form.token === token && r.at > 0),
      'the revocation to be retried',
    )
    expect(after.lines).toEqual([
      `1 logouts from before this start still wait for flowadmin at ${live.url} to revoke their tokens: they are refused here until it does`,
    ])
    live.releaseRevocations()
    await waitFor(() => !existsSync(file), 'the file to go once nothing waits')
    expect(live.isLive(token)).toBe(false)
  })

  test('what is taken back is bounded as in memory, well formed, and not expired', () => {
    const { createRevocations, MAX_PENDING, MAX_UNVOUCHED } = require('../lib/revocations.js') as {
      createRevocations(
        settings: object,
        client: object,
      ): { keepIn(dir: string): void; refuses(t: string): boolean }
      MAX_PENDING: number
      MAX_UNVOUCHED: number
    }
    const dir = path.dirname(loadSettingsModule('http://127.0.0.1:9').settingsFile)
    const now = Date.now()
    writeFileSync(
      path.join(dir, FILE),
      JSON.stringify({
        version: 1,
        pending: [
          ...Array.from({ length: MAX_PENDING + 5 }, (_, i) => ({ token: `p${i}`, expiresAt: null })),
          { token: 'gone', expiresAt: now - 1 },
          { token: 7, expiresAt: null },
          { token: 'x'.repeat(2000), expiresAt: null },
        ],
        unvouched: [...Array.from({ length: MAX_UNVOUCHED + 5 }, (_, i) => `u${i}`), { no: 1 }],
      }),
    )
    const lines: string[] = []
    const revocations = createRevocations(
      { log: (line: string) => lines.push(line), now: Date.now, timeoutMs: 100, url: 'https://fa' },
      { revoke: () => new Promise(() => {}) },
    )
    revocations.keepIn(dir)
    // The last 10000 well-formed (one of them expired) and the last 1000.
    expect(lines[0]).toMatch(new RegExp(`^${MAX_PENDING - 1 + MAX_UNVOUCHED} logouts from before this start`))
    expect(revocations.refuses(`p${MAX_PENDING + 4}`)).toBe(true)
    expect(revocations.refuses('p0')).toBe(false)
    expect(revocations.refuses('gone')).toBe(false)
    expect(revocations.refuses(`u${MAX_UNVOUCHED + 4}`)).toBe(true)
    expect(revocations.refuses('u4')).toBe(false)
  })
})
