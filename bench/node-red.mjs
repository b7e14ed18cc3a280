// The Node-RED peer: the project's own development copy when it is the version measured, else
// installed with npm into a cached temp folder; configured with the same user, the same node
// modules and the same deployed flows as flowadmin, or with @flowadmin/node-red checking its logins
// and tokens at a flowadmin.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { track } from './cleanup.mjs'

export const NODE_RED_VERSION = '4.1.15'
export const NODE_RED_CLIENT = 'node-red-admin'
const INSTALL_TIMEOUT_MS = 300_000

/** The cached install folder, reused between runs. */
export const nodeRedHome = join(tmpdir(), `flowadmin-bench-node-red-${NODE_RED_VERSION}`)

function installedVersion(home) {
  try {
    return JSON.parse(readFileSync(join(home, 'node_modules/node-red/package.json'), 'utf8')).version
  } catch {
    return null
  }
}

/** The node-red of the project's dev dependencies, when it is NODE_RED_VERSION: its folder, else null. */
function devDependencyHome() {
  try {
    const require = createRequire(new URL('../package.json', import.meta.url))
    const manifest = require.resolve('node-red/package.json')
    return JSON.parse(readFileSync(manifest, 'utf8')).version === NODE_RED_VERSION ? dirname(manifest) : null
  } catch {
    return null
  }
}

/**
 * Node-RED's red.js: the project's dev dependency when it is NODE_RED_VERSION, else the one
 * installed into the cache folder (installing it there unless it is already).
 */
export async function installNodeRed(log) {
  const dev = devDependencyHome()
  if (dev) return join(dev, 'red.js')
  if (installedVersion(nodeRedHome) !== NODE_RED_VERSION) {
    // Install beside the cache and rename, so an interrupted install never looks complete.
    const staging = `${nodeRedHome}.partial-${process.pid}`
    rmSync(staging, { recursive: true, force: true })
    mkdirSync(staging, { recursive: true })
    writeFileSync(join(staging, 'package.json'), '{"name":"bench-node-red","private":true}\n')
    log(`installing node-red@${NODE_RED_VERSION} with npm into ${nodeRedHome} ...`)
    try {
      await run(
        'npm',
        [
          'install',
          `node-red@${NODE_RED_VERSION}`,
          '--no-audit',
          '--no-fund',
          '--no-save',
          '--omit=dev',
          '--loglevel=error',
        ],
        staging,
      )
      rmSync(nodeRedHome, { recursive: true, force: true })
      renameSync(staging, nodeRedHome)
    } finally {
      rmSync(staging, { recursive: true, force: true })
    }
    if (installedVersion(nodeRedHome) !== NODE_RED_VERSION) throw new Error('node-red install failed')
  }
  return join(nodeRedHome, 'node_modules/node-red/red.js')
}

function run(command, args, cwd) {
  return new Promise((resolve, reject) => {
    const child = track(spawn(command, args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] }))
    let stderr = ''
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), INSTALL_TIMEOUT_MS)
    child.on('error', reject)
    child.on('exit', (code, signal) => {
      clearTimeout(timer)
      if (code === 0) resolve()
      else reject(new Error(`${command} ${args.join(' ')} failed (${signal ?? code}): ${stderr.trim()}`))
    })
  })
}

/** A bcrypt hash (cost 8) made with the bcrypt module of the Node-RED whose red.js is `redJs`. */
export function bcryptHash(password, redJs) {
  const require = createRequire(join(dirname(redJs), 'package.json'))
  let bcrypt
  try {
    bcrypt = require('@node-rs/bcrypt')
  } catch {
    bcrypt = require('bcryptjs')
  }
  return bcrypt.hashSync(password, 8)
}

/**
 * Writes settings.js (loopback, the given port, one admin user, quiet logs). Given `helper`
 * ({module, url, clientId, clientSecret, cacheMs}), adminAuth and httpAdminMiddleware are
 * @flowadmin/node-red's (from the folder `module`), as its README sets them: logins and tokens are
 * flowadmin's.
 */
export function writeNodeRedSettings(userDir, { port, username, passwordHash, helper = null }) {
  const settings = {
    uiHost: '127.0.0.1',
    uiPort: port,
    userDir,
    flowFile: 'flows.json',
    credentialSecret: 'bench',
    adminAuth: {
      type: 'credentials',
      users: [{ username, password: passwordHash, permissions: '*' }],
    },
    logging: { console: { level: 'off', metrics: false, audit: false } },
    telemetry: { enabled: false, updateNotification: false },
    diagnostics: { enabled: false, ui: false },
    runtimeState: { enabled: false, ui: false },
    externalModules: { autoInstall: false, palette: { allowInstall: false } },
    editorTheme: { tours: false, projects: { enabled: false } },
  }
  const file = join(userDir, 'settings.js')
  if (helper === null) {
    writeFileSync(file, `module.exports = ${JSON.stringify(settings, null, 2)}\n`)
    return file
  }
  const { module, ...options } = helper
  writeFileSync(
    file,
    [
      `const flowadmin = require(${JSON.stringify(module)})`,
      `const options = ${JSON.stringify(options)}`,
      `module.exports = {`,
      `  ...${JSON.stringify({ ...settings, adminAuth: undefined })},`,
      '  adminAuth: flowadmin.adminAuth(options),',
      '  httpAdminMiddleware: flowadmin.httpAdminMiddleware(options),',
      '}',
      '',
    ].join('\n'),
  )
  return file
}

/** The sessions file Node-RED keeps in its user folder. */
export const nodeRedSessionsFile = (userDir) => join(userDir, '.sessions.json')

/**
 * Makes the content of a `.sessions.json` holding `count` live sessions of `username`, in the
 * format Node-RED writes (token: 128 random bytes in base64). Returns it and the tokens.
 */
export function nodeRedSessions({ count, username }) {
  const sessions = {}
  const tokens = []
  const expires = Date.now() + 604_800_000
  for (let i = 0; i < count; i++) {
    const accessToken = randomBytes(128).toString('base64')
    sessions[accessToken] = { user: username, client: NODE_RED_CLIENT, scope: ['*'], accessToken, expires }
    tokens.push(accessToken)
  }
  return { json: JSON.stringify(sessions), tokens }
}
