// The built server on a free port, and Debian's Chromium driven by playwright-core.
import { existsSync } from 'node:fs'
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import AxeBuilder from '@axe-core/playwright'
import * as argon2 from 'argon2'
import { type Browser, type BrowserContext, type CDPSession, chromium, type Page } from 'playwright-core'
import { afterAll, beforeAll, expect } from 'vitest'
import { requireBuild, startCli } from '../../../server/test/cli-process.js'
import { freePort } from '../../../server/test/node-red-process.js'
import { loginFor } from '../../../server/test/target-server.js'

export const CHROMIUM = '/usr/bin/chromium'
const DEMO = fileURLToPath(new URL('../../../../examples/demo', import.meta.url))
const REPO = fileURLToPath(new URL('../../../../', import.meta.url))
export const SHOTS = path.join(REPO, 'test-results', 'console')

export const GREETING = 'flowadmin-example-greeting'
export const TEXT_TOOLS = '@flowadmin-examples/text-tools'
export const BROKEN = 'flowadmin-example-broken'

export const USERS = { admin: 'admin-pw', viewer: 'viewer-pw' } as const

/** An argon2id hash as `flowadmin hash-pw` makes one: for users' passwords and resource servers' secrets. */
export const hash = (password: string) =>
  argon2.hash(password, { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 })

export interface Server {
  /** http://127.0.0.1:<port> */
  url: string
  /** The same server as http://localhost:<port>: the origin passkeys are registered for (`passkeys`). */
  origin: string
  userDir: string
  stop(): Promise<void>
}

/**
 * Starts the built CLI over a fresh userDir holding the demo's modules and flows, and a module
 * whose code does not compile, so it fails to load. `auth` false: no adminAuth at all.
 */
export interface ServerOptions {
  /** false: no adminAuth at all. */
  auth?: boolean
  /** Settings besides adminAuth. */
  extra?: Record<string, unknown>
  /** adminAuth settings besides type and users. */
  adminAuth?: Record<string, unknown>
  /** false: no password users (single sign-on alone, with `adminAuth.oidc`). */
  users?: boolean
  /**
   * Passkeys and second factors: the server on a port picked beforehand, so that its relying
   * party (`adminAuth.webauthn`) can be `localhost` with the origin `http://localhost:<port>`
   * (`Server.origin`, where the browser must open the console), and MFA_KEY as `adminAuth.mfa.key`.
   * `adminAuth` given beside it wins.
   */
  passkeys?: boolean
}

/** The key of second-factor secrets of servers started with `passkeys`. */
export const MFA_KEY = 'a-key-for-second-factor-secrets-of-the-browser-tests'

export async function startServer(options: ServerOptions = {}): Promise<Server> {
  requireBuild()
  if (!existsSync(fileURLToPath(new URL('../../dist/public/index.html', import.meta.url)))) {
    throw new Error('The console is not built: run `pnpm build` first.')
  }
  const userDir = await mkdtemp(path.join(tmpdir(), 'flowadmin-console-'))
  // The demo's own two modules, not whatever a walk through the demo installed beside them.
  for (const name of [GREETING, TEXT_TOOLS]) {
    await cp(path.join(DEMO, 'node_modules', name), path.join(userDir, 'node_modules', name), {
      recursive: true,
    })
  }
  await cp(path.join(DEMO, 'flows.json'), path.join(userDir, 'flows.json'))
  const broken = path.join(userDir, 'node_modules', BROKEN)
  await mkdir(broken)
  await writeFile(
    path.join(broken, 'package.json'),
    JSON.stringify({ name: BROKEN, version: '2.0.0', 'node-red': { nodes: { faulty: 'faulty.js' } } }),
  )
  await writeFile(path.join(broken, 'faulty.js'), 'module.exports = function (RED) {\n')
  await writeFile(
    path.join(broken, 'faulty.html'),
    '<script type="text/html" data-template-name="faulty-in"></script>\n',
  )
  const settings: Record<string, unknown> = { storage: 'sqlite', auditLog: 'off', ...options.extra }
  // Another process could take the port before the server does: its start then fails, never passes wrongly.
  const port = options.passkeys === true ? await freePort() : 0
  const factors =
    options.passkeys === true
      ? {
          webauthn: { rpId: 'localhost', origins: [`http://localhost:${port}`] },
          mfa: { key: MFA_KEY },
        }
      : {}
  if (options.auth !== false) {
    settings.adminAuth =
      options.users === false
        ? { ...factors, ...options.adminAuth }
        : {
            type: 'credentials',
            users: [
              { username: 'admin', password: await hash(USERS.admin), permissions: '*' },
              { username: 'viewer', password: await hash(USERS.viewer), permissions: 'read' },
            ],
            ...factors,
            ...options.adminAuth,
          }
  }
  const file = path.join(userDir, 'settings.json')
  await writeFile(file, JSON.stringify(settings))
  const { run, url } = await startCli(['--settings', file, '--port', String(port)])
  return {
    url,
    origin: url.replace('//127.0.0.1:', '//localhost:'),
    userDir,
    async stop() {
      run.child.kill('SIGTERM')
      await run.exited
      await rm(userDir, { recursive: true, force: true })
    },
  }
}

/**
 * One browser and one server for a test file: started before its tests, stopped after them.
 * Read `browser` and `server` inside tests and hooks (they are set once the hook has run).
 */
export function useBrowserAndServer(options?: ServerOptions | (() => Promise<ServerOptions>)): {
  readonly browser: Browser
  readonly server: Server
} {
  const env = {} as { browser: Browser; server: Server }
  beforeAll(async () => {
    const settings = typeof options === 'function' ? options() : options
    ;[env.browser, env.server] = await Promise.all([
      launch(),
      settings instanceof Promise ? settings.then(startServer) : startServer(settings),
    ])
  })
  afterAll(async () => {
    await env.browser?.close()
    await env.server?.stop()
  })
  return env
}

/** Another server for the tests of a describe block: started before them, stopped after them. */
export function useServer(options?: ServerOptions): { readonly server: Server } {
  const env = {} as { server: Server }
  beforeAll(async () => {
    env.server = await startServer(options)
  })
  afterAll(() => env.server?.stop())
  return env
}

/** Debian's Chromium, headless, with the flags that keep it off the network. */
export function launch(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`)
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
}

export interface Tab {
  context: BrowserContext
  page: Page
  /** Errors the page raised, and every CSP or Trusted Types refusal it logged. */
  problems: string[]
}

export async function open(
  browser: Browser,
  url: string,
  options: { width?: number; height?: number; colorScheme?: 'light' | 'dark' } = {},
): Promise<Tab> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1280, height: options.height ?? 800 },
    colorScheme: options.colorScheme ?? 'light',
  })
  const page = await context.newPage()
  const problems: string[] = []
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
  page.on('console', (message) => {
    const text = message.text()
    if (/Content Security Policy|Trusted Type|Refused to/i.test(text)) problems.push(text)
  })
  await page.goto(url)
  return { context, page, problems }
}

/** What a virtual authenticator of Chromium's is made with: a platform one (a phone's or a laptop's). */
export const PLATFORM_AUTHENTICATOR = {
  protocol: 'ctap2',
  transport: 'internal',
  hasResidentKey: true,
  hasUserVerification: true,
  isUserVerified: true,
  automaticPresenceSimulation: true,
} as const

/**
 * Gives the browser of `page` a virtual platform authenticator (Chromium's, through CDP), which
 * answers WebAuthn's prompts at once, its person verified. `cdp` and `authenticatorId` drive it
 * further (WebAuthn.getCredentials, WebAuthn.addCredential).
 */
export async function addAuthenticator(
  context: BrowserContext,
  page: Page,
): Promise<{ cdp: CDPSession; authenticatorId: string }> {
  const cdp = await context.newCDPSession(page)
  await cdp.send('WebAuthn.enable')
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: PLATFORM_AUTHENTICATOR,
  })
  return { cdp, authenticatorId }
}

/** Logs in through the form with the keyboard: fields by their labels, Enter submits. */
export async function logIn(page: Page, username: string, password: string): Promise<void> {
  await page.getByLabel('Username').fill(username)
  await page.getByLabel('Password').fill(password)
  await page.getByLabel('Password').press('Enter')
}

/** Serious and critical findings of axe-core on the page as it is now. */
export async function axeFindings(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).analyze()
  return result.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(
      (violation) =>
        `${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).join(', ')})`,
    )
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SHOTS, { recursive: true })
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true })
}

/** A token for `username` with the user's own permissions, straight from the API, as a script would get one. */
export const apiToken = (url: string, username: keyof typeof USERS): Promise<string> =>
  loginFor(url, { username, password: USERS[username] }, '')

/** The module as the API reports it now. */
export async function moduleState(url: string, token: string, name: string) {
  const response = await fetch(`${url}/nodes/${name}`, { headers: { authorization: `Bearer ${token}` } })
  expect(response.status).toBe(200)
  return (await response.json()) as { nodes: Array<{ id: string; enabled: boolean }> }
}

export const sessionToken = (page: Page) => page.evaluate(() => sessionStorage.getItem('flowadmin.token'))

/** An event of the trail as `GET /audit` lists it: the fields the tests read. */
export interface TrailEvent {
  actor: string | null
  event: string
  outcome: string
  details: Record<string, unknown>
}

/** flowadmin's own `event`s of `actor` in the trail, newest first, once `count` are there (or after 10 s). */
export async function trailEvents(url: string, actor: string, event: string, count: number) {
  const admin = await apiToken(url, 'admin')
  const query = new URLSearchParams({ instance: 'flowadmin', actor, event })
  for (let waited = 0; ; waited += 100) {
    const res = await fetch(`${url}/audit?${query}`, { headers: { authorization: `Bearer ${admin}` } })
    expect(res.status).toBe(200)
    const { events } = (await res.json()) as { events: TrailEvent[] }
    if (events.length >= count || waited >= 10_000) return events
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
