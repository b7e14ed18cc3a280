#!/usr/bin/env node
// `pnpm start:fleet`: flowadmin and two stock Node-RED 4.1 editors that log in through it, on this
// machine, from the files of examples/fleet. The editors run fleet mode (editor-1 and editor-2 in the
// console's Fleet view; both have the module node-red-contrib-fleet-demo, which the console's Node
// modules view decides for both) and report their audit events to the console's Activity view. With --sso, also a local OpenID provider
// (oidc-provider with its development login pages, no network needed): the console and the
// editors then show "Sign in with …". Builds what changed first; each program gets a userDir of its
// own in a temporary folder, removed at the end. Ctrl-C stops everything; when one program ends on
// its own, the others are stopped and the reason is printed.
//
//   node scripts/fleet.mjs [--port 1880] [--editors 1881,1882] [--sso] [--provider-port 1890]
import { spawn } from 'node:child_process'
import { copyFile, cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { build } from './build.mjs'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const EXAMPLE = path.join(ROOT, 'examples', 'fleet')
const BIN = path.join(ROOT, 'packages', 'server', 'bin', 'flowadmin.cjs')
const HELPER = path.join(ROOT, 'packages', 'node-red')
/** The node module both editors have, for the console to decide (examples/fleet). */
const DEMO_MODULE = 'node-red-contrib-fleet-demo'
const NODE_RED = createRequire(path.join(ROOT, 'package.json')).resolve('node-red/red.js')
const fromServer = createRequire(path.join(ROOT, 'packages', 'server', 'package.json'))

/** The demo's credentials (examples/fleet/flowadmin.json holds their hashes). */
const USERS = 'admin / flowadmin-demo (all rights), viewer / flowadmin-view (read only)'
const FLEET_SECRET = 'fleet-demo-secret'
const PROVIDER_CLIENT = { id: 'flowadmin', secret: 'fleet-demo-provider-secret' }
const SSO_LABEL = 'Sign in with the demo provider'
/** The editors' button with --sso: to flowadmin's sign-in page, which offers the provider too. */
const EDITOR_LABEL = 'Sign in with flowadmin'
const STOP_DEADLINE_MS = 10_000

const USAGE = `Usage: pnpm start:fleet [--port N] [--editors N,N] [--sso] [--provider-port N]

  --port N           flowadmin's port (default 1880; 0 for any free one)
  --editors N,N      the Node-RED editors' ports, one per editor (default 1881,1882)
  --sso              also a local OpenID provider: "Sign in with …" in the console and editors
  --provider-port N  the provider's port (default 1890; 0 for any free one)
`

function usage(message) {
  process.stderr.write(`fleet: ${message}\n${USAGE}`)
  process.exit(2)
}

let values
try {
  ;({ values } = parseArgs({
    options: {
      port: { type: 'string', default: '1880' },
      editors: { type: 'string', default: '1881,1882' },
      sso: { type: 'boolean', default: false },
      'provider-port': { type: 'string', default: '1890' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  }))
} catch (error) {
  usage(error.message)
}
if (values.help) {
  process.stdout.write(USAGE)
  process.exit(0)
}
const port = (text, what, zero) => {
  const n = Number(text)
  if (!/^\d+$/.test(text) || n > 65535 || (n === 0 && !zero))
    usage(`${what} must be a port number, got "${text}"`)
  return n
}
const flowadminPort = port(values.port, '--port', true)
const editorPorts = values.editors.split(',').map((text) => port(text.trim(), '--editors', false))
if (new Set(editorPorts).size !== editorPorts.length) usage('--editors must name different ports')
const providerPort = port(values['provider-port'], '--provider-port', true)

/** Every program started, by name, while it runs. */
const children = new Map()
let stopping = false
let work

/** Stops every program (SIGTERM, SIGKILL after the deadline), removes the work folder, exits. */
async function stopAll(code, reason) {
  if (stopping) return
  stopping = true
  if (reason !== undefined) process.stdout.write(`fleet: ${reason}\n`)
  process.stdout.write('fleet: stopping\n')
  await Promise.all(
    [...children.values()].map(
      (child) =>
        new Promise((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve()
          const kill = setTimeout(() => child.kill('SIGKILL'), STOP_DEADLINE_MS)
          child.once('exit', () => {
            clearTimeout(kill)
            resolve()
          })
          child.kill('SIGTERM')
        }),
    ),
  )
  await provider?.close()
  if (work !== undefined) await rm(work, { recursive: true, force: true })
  process.stdout.write('fleet: stopped\n')
  process.exit(code)
}
// Ctrl-C reaches this process (twice under pnpm, which passes it on); the programs run in process
// groups of their own, so they are stopped once, in order, from here.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => void stopAll(0))

/**
 * Starts a program in a process group of its own; its lines are printed with `name` in front.
 * Resolves with the first match of `ready` in its output; when it ends before (or later, on its
 * own), everything is stopped.
 */
function start(name, args, env, ready) {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  children.set(name, child)
  return new Promise((resolve) => {
    let found = false
    for (const stream of [child.stdout, child.stderr]) {
      let rest = ''
      stream.setEncoding('utf8').on('data', (chunk) => {
        const lines = (rest + chunk).split('\n')
        rest = lines.pop() ?? ''
        for (const line of lines) {
          process.stdout.write(`[${name}] ${line}\n`)
          const match = found ? null : ready.exec(line)
          if (match !== null) {
            found = true
            resolve(match)
          }
        }
      })
    }
    child.on('exit', (code, signal) => {
      children.delete(name)
      if (!stopping) void stopAll(1, `${name} ended (${signal ?? `exit code ${code}`}): stopping the others`)
    })
  })
}

const WEB_FONT = /@import url\(https:\/\/fonts\.googleapis\.com\/[^)]*\);/g
/** `body` with the web font's import replaced by as many spaces. */
function blankWebFont(body) {
  const text = body.toString('utf8')
  if (!WEB_FONT.test(text)) return body
  const blanked = text.replace(WEB_FONT, (line) => ' '.repeat(line.length))
  return typeof body === 'string' ? blanked : Buffer.from(blanked, 'utf8')
}

/** A local OpenID provider: anyone signs in with any name at its development login page. */
let provider
async function listenProvider() {
  let handler = null
  const server = createServer((req, res) => {
    if (handler === null) {
      res.statusCode = 503
      return res.end()
    }
    // Its development pages import a web font from Google: blanked (same length, so the
    // Content-Length stands), they need no network.
    const end = res.end
    res.end = function (body, ...rest) {
      const blanked = typeof body === 'string' || Buffer.isBuffer(body) ? blankWebFont(body) : body
      return end.call(this, blanked, ...rest)
    }
    handler(req, res)
  })
  await new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(providerPort, '127.0.0.1', resolve)
  })
  const issuer = `http://127.0.0.1:${server.address().port}`
  provider = {
    issuer,
    /** Registers flowadmin, whose sign-in comes back to `redirectUris`. */
    async register(redirectUris) {
      const { default: Provider } = await import(pathToFileURL(fromServer.resolve('oidc-provider')).href)
      const oidc = new Provider(issuer, {
        clients: [
          {
            client_id: PROVIDER_CLIENT.id,
            client_secret: PROVIDER_CLIENT.secret,
            redirect_uris: redirectUris,
            response_types: ['code'],
            grant_types: ['authorization_code'],
            token_endpoint_auth_method: 'client_secret_basic',
          },
        ],
        claims: { openid: ['sub'], profile: ['preferred_username'], groups: ['groups'] },
        // Whoever signs in is in the group that flowadmin's settings map to every right.
        async findAccount(_ctx, id) {
          return {
            accountId: id,
            claims: async () => ({ sub: id, preferred_username: id, groups: ['fleet-admins'] }),
          }
        },
        features: { devInteractions: { enabled: true } },
        cookies: { keys: ['the-fleet-demo-provider-cookie-key'] },
      })
      handler = oidc.callback()
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

const built = build()
if (built !== 0) process.exit(built)

work = await mkdtemp(path.join(tmpdir(), 'flowadmin-fleet-'))
try {
  // flowadmin: the example's settings, with the editors' callbacks at the ports asked for.
  const settings = JSON.parse(await readFile(path.join(EXAMPLE, 'flowadmin.json'), 'utf8'))
  settings.adminAuth.resourceServers[0].redirectUris = editorPorts.map(
    (editor) => `http://127.0.0.1:${editor}/auth/strategy/callback`,
  )
  // Passkeys are bound to the origin people open: localhost on the port asked for (none on port 0).
  if (flowadminPort === 0) delete settings.adminAuth.webauthn
  else settings.adminAuth.webauthn.origins = [`http://localhost:${flowadminPort}`]
  if (values.sso) {
    await listenProvider()
    settings.adminAuth.oidc = {
      issuer: provider.issuer,
      clientId: PROVIDER_CLIENT.id,
      label: SSO_LABEL,
      scope: 'openid profile groups',
      permissions: { claim: 'groups', map: { 'fleet-admins': '*' } },
    }
  }
  const flowadminDir = path.join(work, 'flowadmin')
  await mkdir(flowadminDir)
  await writeFile(path.join(flowadminDir, 'settings.json'), `${JSON.stringify(settings, null, 2)}\n`)
  const [, flowadmin] = await start(
    'flowadmin',
    [BIN, 'start', '--settings', path.join(flowadminDir, 'settings.json'), '--port', String(flowadminPort)],
    // The example's second-factor key is published: flowadmin takes it only when told so.
    { FLOWADMIN_OIDC_CLIENT_SECRET: PROVIDER_CLIENT.secret, FLOWADMIN_ALLOW_EXAMPLE_MFA_KEY: '1' },
    /listening on (http:\/\/\S+)/,
  )
  if (values.sso) {
    const origins = [flowadmin, flowadmin.replace('127.0.0.1', 'localhost')]
    await provider.register(origins.map((origin) => `${origin}/auth/strategy/callback`))
  }

  // The editors: each a userDir with the example's settings.js and the helper in node_modules, as
  // `npm install` of the helper's tarball puts it there, and the demo's node module.
  const editors = await Promise.all(
    editorPorts.map(async (editor, index) => {
      const userDir = path.join(work, `node-red-${editor}`)
      await mkdir(path.join(userDir, 'node_modules', '@flowadmin'), { recursive: true })
      await symlink(HELPER, path.join(userDir, 'node_modules', '@flowadmin', 'node-red'), 'dir')
      await cp(path.join(EXAMPLE, DEMO_MODULE), path.join(userDir, 'node_modules', DEMO_MODULE), {
        recursive: true,
      })
      await copyFile(path.join(EXAMPLE, 'settings.js'), path.join(userDir, 'settings.js'))
      const [, url] = await start(
        `node-red ${editor}`,
        [
          NODE_RED,
          '--userDir',
          userDir,
          '--settings',
          path.join(userDir, 'settings.js'),
          '--port',
          String(editor),
        ],
        {
          PORT: String(editor),
          FLOWADMIN_URL: flowadmin,
          FLOWADMIN_SECRET: FLEET_SECRET,
          FLOWADMIN_INSTANCE: `editor-${index + 1}`,
          ...(values.sso && { FLOWADMIN_SSO_LABEL: EDITOR_LABEL }),
        },
        /Server now running at (http:\/\/\S+?)\/?$/,
      )
      return url
    }),
  )
  const lines = [
    '',
    'fleet: ready',
    `  flowadmin (console and API)  ${flowadmin}/`,
    ...editors.map((url, index) => `  Node-RED editor ${index + 1} (editor-${index + 1}) ${url}/`),
    ...(values.sso ? [`  OpenID provider              ${provider.issuer}/`] : []),
    `  sign in with                 ${USERS}`,
    ...(values.sso
      ? [
          `  or "${SSO_LABEL}" (in an editor, "${EDITOR_LABEL}" first): any name, any password at the provider's login page (all rights)`,
        ]
      : []),
    `  in the console               Fleet: the editors, by name; Node modules: ${DEMO_MODULE}, for both; Activity: their deploys and logins`,
    `  settings                     examples/fleet (the editors' secret: ${FLEET_SECRET})`,
    `  pids                         ${[...children].map(([name, child]) => `${name} ${child.pid}`).join(', ')}`,
    '  Ctrl-C stops everything',
    '',
  ]
  process.stdout.write(`${lines.join('\n')}\n`)
} catch (error) {
  await stopAll(1, `could not start: ${error?.message ?? error}`)
}
