// A stock Node-RED 4.1 whose editor signs people in through flowadmin (the helper's SSO mode), the
// built flowadmin with an OpenID provider (oidc-provider), all on 127.0.0.1: shared by the HTTP
// test and the browser test.
import { randomBytes } from 'node:crypto'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { hashPassword } from '../src/adapters/argon2.js'
import { type BuiltServer, killAll, requireBuild, startBuiltServer } from './cli-process.js'
import { tempDir } from './ecosystem.js'
import { freePort, type NodeRedRun, startNodeRed, stopNodeReds } from './node-red-process.js'
import { CLIENT_ID, CLIENT_SECRET, startProvider, type TestProvider } from './oidc-provider.js'

/** The helper package, required by absolute path as an instance's settings.js would. */
const HELPER = fileURLToPath(new URL('../../node-red/index.js', import.meta.url))

/** The resource server the Node-RED instance is at flowadmin, and its secret. */
export const FLEET = 'fleet'
const SECRET = randomBytes(24).toString('base64url')
/** Another resource server of the same flowadmin (another fleet), and its secret. */
export const OTHER = 'other-fleet'
const OTHER_SECRET = randomBytes(24).toString('base64url')
export const LABEL = 'Sign in with Example ID'

/** People at the provider: their account id (also `sub`) → name and groups. */
export const PEOPLE = {
  'ada-sub': { username: 'ada', groups: ['nr-admins'] },
  'vic-sub': { username: 'vic', groups: ['nr-viewers'] },
  'leo-sub': { username: 'leo', groups: ['nr-admins'] },
  'dee-sub': { username: 'dee', groups: ['nr-admins'] },
  'mal-sub': { username: 'mal', groups: ['marketing'] },
} as const

export interface NodeRedSso {
  provider: TestProvider
  flowadmin: BuiltServer
  nodeRed: NodeRedRun
  /** The redirect URI registered for the fleet: Node-RED's sign-in callback. */
  redirectUri: string
  /** Basic credentials of the fleet, for the tests' own calls to flowadmin. */
  basic: string
  /** Basic credentials of another resource server (OTHER) of the same flowadmin. */
  otherBasic: string
  stop(): Promise<void>
}

export async function startNodeRedSso(): Promise<NodeRedSso> {
  requireBuild()
  const work = await tempDir('flowadmin-nr-sso-')
  const provider = await startProvider()
  const port = await freePort()
  const redirectUri = `http://127.0.0.1:${port}/auth/strategy/callback`
  const settingsFile = path.join(work.dir, 'flowadmin', 'settings.json')
  const adminAuth = {
    oidc: {
      issuer: provider.issuer,
      clientId: CLIENT_ID,
      label: LABEL,
      scope: 'openid profile groups',
      permissions: { claim: 'groups', map: { 'nr-admins': '*', 'nr-viewers': 'read' } },
    },
    resourceServers: [
      { id: FLEET, secret: await hashPassword(SECRET), redirectUris: [redirectUri] },
      { id: OTHER, secret: await hashPassword(OTHER_SECRET) },
    ],
  }
  const flowadmin = await startBuiltServer(settingsFile, {
    settings: { storage: 'sqlite', auditLog: 'stdout', adminAuth },
    env: { FLOWADMIN_OIDC_CLIENT_SECRET: CLIENT_SECRET },
  })
  await provider.register({
    redirectUris: [`${flowadmin.url}/auth/strategy/callback`],
    backchannelLogoutUri: `${flowadmin.url}/auth/strategy/backchannel-logout`,
  })
  for (const [sub, person] of Object.entries(PEOPLE)) {
    provider.people.set(sub, { username: person.username, groups: [...person.groups] })
  }
  const nodeRed = await startNodeRed(
    path.join(work.dir, 'node-red'),
    {
      preamble: `
const flowadmin = require(${JSON.stringify(HELPER)})
const options = {
  url: ${JSON.stringify(flowadmin.url)},
  clientId: ${JSON.stringify(FLEET)},
  clientSecret: process.env.FLOWADMIN_SECRET,
  cacheMs: 0,
  sso: { redirectUri: ${JSON.stringify(redirectUri)}, label: ${JSON.stringify(LABEL)} },
}
`,
      adminAuth: 'flowadmin.adminAuth(options)',
      httpAdminMiddleware: 'flowadmin.httpAdminMiddleware(options)',
    },
    { FLOWADMIN_SECRET: SECRET },
    port,
  )
  return {
    provider,
    flowadmin,
    nodeRed,
    redirectUri,
    basic: `Basic ${Buffer.from(`${FLEET}:${SECRET}`).toString('base64')}`,
    otherBasic: `Basic ${Buffer.from(`${OTHER}:${OTHER_SECRET}`).toString('base64')}`,
    async stop() {
      await stopNodeReds()
      await killAll()
      await provider.close()
      await work.remove()
    },
  }
}

/** A deploy as the editor makes it: the flows with one inject node, with the editor's token. */
export function deploy(nodeRedUrl: string, token: string): Promise<Response> {
  return fetch(`${nodeRedUrl}/flows`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${token}`,
      'Content-Type': 'application/json',
      'Node-RED-API-Version': 'v2',
      'Node-RED-Deployment-Type': 'full',
    },
    body: JSON.stringify({
      flows: [
        { id: 'tab1', type: 'tab', label: 'Flow 1' },
        { id: 'n1', type: 'inject', z: 'tab1', name: `deployed ${Date.now()}`, wires: [] },
      ],
    }),
  })
}
