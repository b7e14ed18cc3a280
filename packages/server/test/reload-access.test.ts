// A reload takes new roles, groups and grants: they count from the next request on, and a grant
// naming a group or role the new file lacks keeps the running settings.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { hashPassword, type RunningServer, startServer } from '../src/index.js'
import { captureLog } from './log-capture.js'
import { logInAs } from './password-grant.js'

let dir: string
let settingsFile: string
let hash: string
const running: RunningServer[] = []
const DIGEST = `sha256:${'0123456789abcdef'.repeat(4)}`

beforeAll(async () => {
  hash = await hashPassword('pw')
})
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'flowadmin-reload-access-'))
  settingsFile = path.join(dir, 'settings.json')
})
afterEach(async () => {
  for (const server of running.splice(0)) await server.close()
  await rm(dir, { recursive: true, force: true })
})

async function write(
  groups: Record<string, string[]>,
  grants: unknown[],
  roles: Record<string, unknown> = {},
) {
  const settings = {
    storage: 'memory',
    fleet: { modules: true, groups },
    adminAuth: {
      users: [
        { username: 'admin', password: hash, permissions: '*' },
        { username: 'alice', password: hash, grants },
      ],
      roles,
      resourceServers: [{ id: 'fleet', secret: DIGEST, fleet: true }],
    },
  }
  await writeFile(settingsFile, JSON.stringify(settings))
}

async function start(): Promise<RunningServer> {
  const server = await startServer({
    settingsFile,
    userDir: dir,
    port: 0,
    stdout: () => {},
    logger: captureLog().logger,
  })
  running.push(server)
  return server
}

/** alice's rights at flowadmin now, with a token of hers. */
async function atFlowadmin(server: RunningServer, token: string): Promise<string[]> {
  const principal = await server.core.authenticate(token)
  if (!principal.ok) throw new Error(principal.error.code)
  return principal.value.permissions
}

const at = (instance: string) => ({ kind: 'instance' as const, instance })

describe('reloading roles, groups and grants', () => {
  it('counts them from the next request on, and names none as waiting for a restart', async () => {
    await write({ 'line-1': ['press-*'] }, [
      { role: 'deployer', on: 'line-1' },
      { role: 'viewer', on: 'flowadmin' },
    ])
    const server = await start()
    const answer = await logInAs(server.url, 'alice', 'pw', '')
    expect(answer.status).toBe(200)
    const { access_token: token } = (await answer.json()) as { access_token: string }
    expect(await atFlowadmin(server, token)).toEqual(['read'])
    expect(server.core.rights.membership.groupsOf('nr-9')).toEqual([])

    await write({ 'line-1': ['press-*', 'nr-9'] }, [{ role: 'ops', on: 'flowadmin' }], {
      ops: { permissions: ['read', 'nodes.write'] },
    })
    expect(await server.reload()).toEqual({ ok: true, users: 2, needRestart: [] })
    expect(server.core.rights.membership.groupsOf('nr-9')).toEqual(['line-1'])
    // Her session is worth what both its words and her grants now give: read at flowadmin, not
    // the new nodes.write its words never held.
    expect(await atFlowadmin(server, token)).toEqual(['read'])
    const again = (await (await logInAs(server.url, 'alice', 'pw', '')).json()) as { access_token: string }
    expect((await atFlowadmin(server, again.access_token)).sort()).toEqual(['nodes.write', 'read'])
    expect(server.settings.access.groups).toEqual({ 'line-1': ['press-*', 'nr-9'] })
    expect(server.core.rights.at(['role:ops@flowadmin'], at('nr-9'), 0)).toEqual([])
  })

  it('keeps the running settings when a grant names a group the new file lacks', async () => {
    await write({ 'line-1': ['press-*'] }, [{ role: 'deployer', on: 'line-1' }])
    const server = await start()
    await write({ 'line-2': ['weld-*'] }, [{ role: 'deployer', on: 'line-1' }])
    expect(await server.reload()).toEqual({
      ok: false,
      message: `${settingsFile}: adminAuth.users[1].grants[0]: unknown group line-1 (declare it in fleet.groups, or grant on everywhere or flowadmin)`,
    })
    expect(server.core.rights.membership.groupsOf('press-1')).toEqual(['line-1'])
  })
})
