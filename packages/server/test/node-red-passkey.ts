// The built flowadmin with users of its own and no identity provider, second factors (a key for
// them) and passkeys for `localhost`, and two stock Node-RED 4.1 editors with the helper: one
// whose "Sign in with flowadmin" goes to flowadmin's sign-in page (the helper's sso option), and
// one with the editor's own login form (credentials mode). All on this host; flowadmin at
// `http://localhost:<port>`, its port chosen first, since passkeys are bound to that origin.
import { randomBytes } from 'node:crypto'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect } from 'vitest'
import { hashPassword } from '../src/adapters/argon2.js'
import { type CliRun, killAll, requireBuild, startBuiltServer } from './cli-process.js'
import { tempDir } from './ecosystem.js'
import { freePort, type NodeRedRun, startNodeRed, stopNodeReds } from './node-red-process.js'
import { browse, createCookieJar } from './oidc-provider.js'
import { totpCode } from './totp-code.js'

/** The helper package, required by absolute path as an instance's settings.js would. */
const HELPER = fileURLToPath(new URL('../../node-red/index.js', import.meta.url))

/** The resource server both editors are at flowadmin. */
export const FLEET = 'fleet'
const SECRET = randomBytes(24).toString('base64url')
export const LABEL = 'Sign in with flowadmin'
const MFA_KEY = randomBytes(32).toString('base64url')

/**
 * flowadmin's people and their passwords: pia gets a passkey, tom an authenticator app, ned keeps
 * his password alone.
 */
export const PEOPLE = {
  pia: 'pia-password-1',
  tom: 'tom-password-1',
  ned: 'ned-password-1',
} as const

export interface NodeRedPasskey {
  flowadmin: { run: CliRun; url: string }
  /** The editor that signs people in on flowadmin's page (the helper's sso option). */
  nodeRed: NodeRedRun
  /** The editor with its own login form (credentials mode). */
  formEditor: NodeRedRun
  /** Basic credentials of the fleet, for the tests' own calls to flowadmin. */
  basic: string
  stop(): Promise<void>
}

const instanceSettings = (url: string, sso: string) => ({
  preamble: `
const flowadmin = require(${JSON.stringify(HELPER)})
const options = {
  url: ${JSON.stringify(url)},
  clientId: ${JSON.stringify(FLEET)},
  clientSecret: process.env.FLOWADMIN_SECRET,
  cacheMs: 0,${sso}
}
`,
  adminAuth: 'flowadmin.adminAuth(options)',
  httpAdminMiddleware: 'flowadmin.httpAdminMiddleware(options)',
})

export async function startNodeRedPasskey(): Promise<NodeRedPasskey> {
  requireBuild()
  const work = await tempDir('flowadmin-nr-passkey-')
  try {
    const port = await freePort()
    const nodeRedPort = await freePort()
    // Passkeys are bound to a host name, never an address: flowadmin as `localhost`.
    const url = `http://localhost:${port}`
    const redirectUri = `http://127.0.0.1:${nodeRedPort}/auth/strategy/callback`
    const settingsFile = path.join(work.dir, 'flowadmin', 'settings.json')
    const adminAuth = {
      users: await Promise.all(
        Object.entries(PEOPLE).map(async ([username, password]) => ({
          username,
          password: await hashPassword(password),
          permissions: '*',
        })),
      ),
      mfa: { key: MFA_KEY },
      webauthn: { rpId: 'localhost', origins: [url] },
      resourceServers: [{ id: FLEET, secret: await hashPassword(SECRET), redirectUris: [redirectUri] }],
    }
    const flowadmin = await startBuiltServer(settingsFile, {
      settings: { storage: 'sqlite', auditLog: 'stdout', adminAuth },
      port,
    })
    const env = { FLOWADMIN_SECRET: SECRET }
    const [nodeRed, formEditor] = await Promise.all([
      startNodeRed(
        path.join(work.dir, 'node-red'),
        instanceSettings(
          url,
          `\n  sso: { redirectUri: ${JSON.stringify(redirectUri)}, label: ${JSON.stringify(LABEL)} },`,
        ),
        env,
        nodeRedPort,
      ),
      startNodeRed(path.join(work.dir, 'node-red-form'), instanceSettings(url, ''), env),
    ])
    return {
      flowadmin: { run: flowadmin.run, url },
      nodeRed,
      formEditor,
      basic: `Basic ${Buffer.from(`${FLEET}:${SECRET}`).toString('base64')}`,
      async stop() {
        await stopNodeReds()
        await killAll()
        await work.remove()
      },
    }
  } catch (error) {
    await stopNodeReds()
    await killAll()
    await work.remove()
    throw error
  }
}

const form = (fields: Record<string, string>): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
})

/**
 * A console session of `username` (no second factor yet), got as the console gets one: flowadmin's
 * sign-in page walked with its cookie, the code in the fragment traded as the console's client.
 */
export async function consoleSession(url: string, username: string, password: string): Promise<string> {
  const jar = createCookieJar()
  expect((await browse(jar, `${url}/auth/signin`)).status).toBe(200)
  const signedIn = await browse(jar, `${url}/auth/signin`, form({ username, password }))
  expect(signedIn.status).toBe(303)
  const code = /#sso_code=([\w-]+)$/.exec(signedIn.headers.get('location') ?? '')?.[1] ?? ''
  const traded = await browse(
    jar,
    `${url}/auth/token`,
    form({ grant_type: 'authorization_code', code, client_id: 'service-editor' }),
  )
  expect(traded.status).toBe(200)
  return ((await traded.json()) as { access_token: string }).access_token
}

/** Enrols an authenticator app for `username` through the API, from a console session: its secret. */
export async function enrolTotp(url: string, username: string, password: string): Promise<string> {
  const token = await consoleSession(url, username, password)
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
  const started = await fetch(`${url}/auth/mfa/totp`, { method: 'POST', headers })
  expect(started.status).toBe(200)
  const { secret } = (await started.json()) as { secret: string }
  const confirmed = await fetch(`${url}/auth/mfa/totp/confirm`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ code: totpCode(secret) }),
  })
  expect(confirmed.status).toBe(200)
  return secret
}
