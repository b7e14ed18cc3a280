// `flowadmin tokens` treats people who signed in with the identity provider like any other user:
// the built command, on the SQLite file of a running server whose people sign in through a real
// OpenID provider (oidc-provider) on 127.0.0.1.
import * as path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RunningServer, startServer } from '../src/index.js'
import { runCli, useServerFolder, writeSettings } from './cli-process.js'
import { captureLog } from './log-capture.js'
import {
  browse,
  CLIENT_ID,
  CLIENT_SECRET,
  createCookieJar,
  startProvider,
  type TestProvider,
  walkSignIn,
} from './oidc-provider.js'

const folder = useServerFolder('sso-cli')
let settingsFile: string
let provider: TestProvider
let server: RunningServer

beforeAll(async () => {
  settingsFile = path.join(folder.dir, 'settings.json')
  provider = await startProvider()
  await writeSettings(settingsFile, {
    storage: 'sqlite',
    auditLog: 'off',
    adminAuth: {
      oidc: {
        issuer: provider.issuer,
        clientId: CLIENT_ID,
        label: 'Sign in with Example ID',
        scope: 'openid profile groups',
        permissions: { claim: 'groups', map: { 'nr-viewers': 'read' } },
      },
    },
  })
  process.env.FLOWADMIN_OIDC_CLIENT_SECRET = CLIENT_SECRET
  server = await startServer({ port: 0, settingsFile, logger: captureLog().logger })
  await provider.register({
    redirectUris: [`${server.url}/auth/strategy/callback`],
    backchannelLogoutUri: `${server.url}/auth/strategy/backchannel-logout`,
  })
  provider.people.set('dora-sub', { username: 'dora', groups: ['nr-viewers'] })
})
afterAll(async () => {
  delete process.env.FLOWADMIN_OIDC_CLIENT_SECRET
  await server?.close()
  await provider?.close()
})

async function tokens(args: string[]) {
  const run = runCli(['tokens', ...args, '--settings', settingsFile], {
    env: { FLOWADMIN_OIDC_CLIENT_SECRET: CLIENT_SECRET },
  })
  const code = await run.exited
  return { code, stdout: run.stdout, stderr: run.stderr }
}

describe('flowadmin tokens and people who signed in', () => {
  it('lists their session, makes them an API token within their rights, and ends their tokens', async () => {
    const jar = createCookieJar()
    const walked = await walkSignIn(jar, `${server.url}/auth/strategy`, 'dora-sub', (url) =>
      url.includes('#sso_code='),
    )
    const code = new URL(walked.url).hash.slice('#sso_code='.length)
    const exchanged = await browse(jar, `${server.url}/auth/token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'authorization_code', code, client_id: 'service-editor' }),
    })
    const session = ((await exchanged.json()) as { access_token: string }).access_token

    const listed = await tokens(['list', '--json'])
    expect(listed.code).toBe(0)
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({
        user: 'dora',
        kind: 'session',
        scope: ['read'],
        provider: 'Sign in with Example ID',
      }),
    ])

    const created = await tokens(['create', '--user', 'dora', '--name', 'report'])
    expect(created.code).toBe(0)
    expect(created.stderr).toMatch(
      /^flowadmin: created API token \S+ "report" for dora, scope read, audience flowadmin, expires \S+;/,
    )
    const apiToken = created.stdout.trim()
    const settings = await fetch(`${server.url}/settings`, {
      headers: { Authorization: `Bearer ${apiToken}` },
    })
    expect(settings.status).toBe(200)
    const wider = await tokens(['create', '--user', 'dora', '--name', 'wide', '--scope', '*'])
    expect(wider.code).not.toBe(0)

    const revoked = await tokens(['revoke', '--user', 'dora'])
    expect(revoked).toEqual({ code: 0, stdout: 'revoked 2 tokens\n', stderr: '' })
    const after = await fetch(`${server.url}/settings`, { headers: { Authorization: `Bearer ${session}` } })
    expect(after.status).toBe(401)
  })
})
