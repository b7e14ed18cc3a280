// The servers under test, started the same way for every measurement: a fresh user folder
// (settings, empty flows, the ten bench modules, optionally a seeded token store), a spawned
// process on a free 127.0.0.1 port, and the time from spawn to listening.
import { spawn } from 'node:child_process'
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import net from 'node:net'
import { delimiter, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { removeFolder, track } from './cleanup.mjs'
import {
  copyDatabase,
  FLOWADMIN_CLIENT,
  flowadminBin,
  seedFlowadminTokens,
  writeFlowadminSettings,
} from './flowadmin.mjs'
import { NODE_RED_CLIENT, nodeRedSessions, nodeRedSessionsFile, writeNodeRedSettings } from './node-red.mjs'
import { seedPostgresTokens } from './postgres.mjs'

const modulesDir = new URL('fixtures/modules/', import.meta.url).pathname
/** The bench node modules, one per connection of the 10-connection toggle. */
export const BENCH_MODULES = readdirSync(modulesDir).sort()
const START_TIMEOUT_MS = 60_000
const STOP_TIMEOUT_MS = 10_000

function newUserDir(root, name) {
  const userDir = mkdtempSync(join(root, `${name}-`))
  cpSync(modulesDir, join(userDir, 'node_modules'), { recursive: true })
  // Flows deployed a while before the start, as on a server that has run for some time: a flows
  // file changed in the last two seconds is read again at every disable (a coarse file-system
  // clock could hide a second change), which is not what a running server's toggles cost.
  const flows = join(userDir, 'flows.json')
  writeFileSync(flows, '[]\n')
  const deployed = new Date(Date.now() - 60_000)
  utimesSync(flows, deployed, deployed)
  return userDir
}

/**
 * flowadmin: the built CLI, SQLite in the user folder (or, given `postgres`, a PostgreSQL database
 * of its own per start), argon2id at OWASP parameters. `seed(count)` makes (once) a database
 * holding `count` live tokens; `start({ seed })` starts on a copy of it; `startPeer(instance)`
 * starts a second instance on the same database as `instance`, stopped with it. `features`: the
 * settings' ('demo' or 'full', see writeFlowadminSettings).
 */
export function createFlowadminTarget({
  name = 'flowadmin',
  namedOnly = false,
  root,
  serverRoot,
  serverEnv = {},
  username,
  passwordHash,
  cpuProfDir,
  postgres = null,
  features = 'demo',
  settings: more = {},
}) {
  const seeds = new Map()
  const bin = flowadminBin(serverRoot)
  // Read now, in every run: a launcher line the bench cannot read fails the smoke run, not the
  // first profiled start.
  const launcher = readLauncher(bin)
  /**
   * Starts the CLI on a new user folder; `prepare(userDir)` runs before it starts. `profile`:
   * write a V8 CPU profile of this process into the --cpu-prof folder; `preload`: a module node
   * loads first (NODE_OPTIONS=--require); `resourceServers`: adminAuth.resourceServers.
   */
  const launch = async ({ postgresUrl, prepare, profile = false, preload = null, resourceServers } = {}) => {
    const userDir = newUserDir(root, 'flowadmin')
    const settings = writeFlowadminSettings(userDir, {
      username,
      passwordHash,
      postgresUrl,
      resourceServers,
      features,
      more,
    })
    prepare?.(userDir)
    const args = ['start', '--settings', settings, '--port', '0']
    const started = performance.now()
    const env = { ...process.env, ...serverEnv }
    // The program as users run it: the bin, through its launcher line (which sets the
    // process-wide tuning), with the node first on PATH, this one. The profiler's flags are
    // node's own (NODE_OPTIONS refuses them), so a profiled start runs node with the variables
    // and flags that line would give it.
    env.PATH = `${dirname(process.execPath)}${delimiter}${env.PATH ?? ''}`
    const [command, argv] =
      profile && cpuProfDir
        ? [process.execPath, ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`, bin, ...args]]
        : [bin, args]
    if (command !== bin) {
      Object.assign(env, launcher.variables(env))
      argv.unshift(...launcher.nodeFlags)
    }
    if (preload) env.NODE_OPTIONS = `${env.NODE_OPTIONS ?? ''} --require ${preload}`.trim()
    const child = track(spawn(command, argv, { cwd: userDir, env, stdio: ['ignore', 'pipe', 'pipe'] }))
    const output = collect(child)
    const url = await waitFor(child, output, () => output.stdout.match(/listening on (http:\/\/\S+)/)?.[1])
    const spawnMs = performance.now() - started
    return instance({ child, userDir, url, spawnMs, output })
  }
  if (postgres) {
    return {
      name,
      namedOnly,
      clientId: FLOWADMIN_CLIENT,
      async seed(count, audience) {
        const key = `${count} ${audience ?? 'flowadmin'}`
        if (!seeds.has(key)) {
          const seeded = await seedPostgresTokens(postgres, {
            count,
            username,
            passwordHash,
            root: serverRoot,
            audience,
          })
          seeds.set(key, { template: seeded.name, tokens: seeded.tokens })
        }
        return seeds.get(key)
      },
      async start({ seed, profile, preload, resourceServers } = {}) {
        const database = await postgres.create(seed?.template)
        const first = await launch({ postgresUrl: database.url, profile, preload, resourceServers })
        const peers = []
        return {
          ...first,
          database,
          async startPeer() {
            const peer = await launch({ postgresUrl: database.url, resourceServers })
            peers.push(peer)
            return peer
          },
          async stop() {
            for (const peer of peers.splice(0)) await peer.stop()
            await first.stop()
            await postgres.drop(database.name)
          },
        }
      },
      startPeer: (first) => first.startPeer(),
    }
  }
  return {
    name,
    namedOnly,
    clientId: FLOWADMIN_CLIENT,
    async seed(count, audience) {
      const key = `${count} ${audience ?? 'flowadmin'}`
      if (!seeds.has(key)) {
        const folder = join(root, `${name}-seed-${count}-${audience ?? 'flowadmin'}`)
        mkdirSync(folder, { recursive: true })
        const file = join(folder, 'flowadmin.db')
        const tokens = await seedFlowadminTokens(file, {
          count,
          username,
          passwordHash,
          root: serverRoot,
          audience,
        })
        seeds.set(key, { file, tokens })
      }
      return seeds.get(key)
    },
    start: ({ seed, profile, preload, resourceServers } = {}) =>
      launch({
        prepare: (userDir) => seed && copyDatabase(seed.file, userDir),
        profile,
        preload,
        resourceServers,
      }),
  }
}

/**
 * How the bin starts node, for a start that bypasses it (the profiler's flags are node's own):
 * `variables(env)` gives the environment the bin's launcher line would give node when started
 * with `env`, `nodeFlags` the flags it gives node. Two forms are read: the shell line after
 * `#!/bin/sh` (`':' //; export NAME="value${NAME:+:$NAME}"; exec node --flag "$0" "$@"`) and the
 * older `#!/usr/bin/env -S NAME=value node --flag` (a checkout measured with --server may have
 * it). Anything else throws: a profiled start must not silently lose the tuning.
 */
export function readLauncher(bin) {
  const [first = '', second = ''] = readFileSync(bin, 'utf8').split('\n', 2)
  const unreadable = (why) =>
    new Error(
      `bench: cannot read how ${bin} starts node (${why}); bench/targets.mjs (readLauncher) must learn its launcher line`,
    )
  if (first.startsWith('#!/usr/bin/env -S ')) {
    const words = first.slice('#!/usr/bin/env -S '.length).trim().split(/\s+/)
    const at = words.indexOf('node')
    if (at < 0) throw unreadable('no `node` in its first line')
    const set = Object.fromEntries(
      words
        .slice(0, at)
        .filter((word) => /^[A-Z_][A-Z0-9_]*=/.test(word))
        .map((word) => word.split(/=(.*)/s, 2)),
    )
    return { variables: () => ({ ...set }), nodeFlags: words.slice(at + 1).filter((w) => w.startsWith('--')) }
  }
  if (first.trim() !== '#!/bin/sh')
    throw unreadable(`its first line is neither #!/bin/sh nor #!/usr/bin/env -S: ${first}`)
  const exec = /(?:^|;)\s*exec node((?:\s+--[^\s"';]+)*)\s+"\$0"\s+"\$@"\s*$/.exec(second)
  if (exec === null)
    throw unreadable(`its second line does not end in exec node [--flags] "$0" "$@": ${second}`)
  const exports = []
  for (const statement of second.slice(0, exec.index).split(';')) {
    const text = statement.trim()
    if (text === '' || text === "':' //") continue
    const match = /^export ([A-Z_][A-Z0-9_]*)="([^"]*)"$/.exec(text)
    if (match === null) throw unreadable(`its second line has a statement it does not know: ${text}`)
    exports.push([match[1], match[2]])
  }
  return {
    variables(env) {
      const now = { ...env }
      for (const [name, value] of exports) now[name] = expand(value, now, unreadable)
      return Object.fromEntries(exports.map(([name]) => [name, now[name]]))
    },
    nodeFlags: exec[1].trim().split(/\s+/).filter(Boolean),
  }
}

/** The shell's expansion of a double-quoted word: `$NAME`, `${NAME}` and `${NAME:+word}`, nothing else. */
function expand(word, env, unreadable) {
  return word.replace(
    /\$\{([A-Z_][A-Z0-9_]*)(?::\+([^}]*))?\}|\$([A-Z_][A-Z0-9_]*)|\$/g,
    (_match, braced, alternative, bare) => {
      const name = braced ?? bare
      if (name === undefined) throw unreadable(`a $ it cannot expand in ${word}`)
      const value = env[name] ?? ''
      if (alternative === undefined) return value
      return value === '' ? '' : expand(alternative, env, unreadable)
    },
  )
}

/**
 * Node-RED (see installNodeRed): same user (bcrypt, cost 8), same modules, same flows. It prints
 * nothing with logging off, so listening is when its port accepts a connection. `namedOnly`: the
 * target runs only in the scenarios that name it. `start({ helper })` starts it with
 * @flowadmin/node-red's settings instead of its own user (see writeNodeRedSettings).
 */
export function createNodeRedTarget({
  name = 'node-red',
  namedOnly = false,
  root,
  username,
  passwordHash,
  redJs,
}) {
  const seeds = new Map()
  return {
    name,
    namedOnly,
    clientId: NODE_RED_CLIENT,
    async seed(count) {
      if (!seeds.has(count)) {
        const folder = join(root, `node-red-seed-${count}`)
        mkdirSync(folder, { recursive: true })
        const file = join(folder, 'sessions.json')
        const { json, tokens } = nodeRedSessions({ count, username })
        writeFileSync(file, json)
        seeds.set(count, { file, tokens })
      }
      return seeds.get(count)
    },
    async start({ seed, helper = null } = {}) {
      const userDir = newUserDir(root, 'node-red')
      const port = await freePort()
      const settings = writeNodeRedSettings(userDir, { port, username, passwordHash, helper })
      if (seed) cpSync(seed.file, nodeRedSessionsFile(userDir))
      const env = { ...process.env, NODE_RED_DISABLE_TELEMETRY: 'true' }
      const started = performance.now()
      const child = track(
        spawn(process.execPath, [redJs, '-u', userDir, '-s', settings], {
          cwd: userDir,
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
        }),
      )
      const output = collect(child)
      let accepting = false
      const probe = setInterval(() => {
        const socket = net.connect(port, '127.0.0.1', () => {
          accepting = true
          socket.destroy()
        })
        socket.on('error', () => socket.destroy())
      }, 2)
      try {
        await waitFor(child, output, () => accepting || undefined)
      } finally {
        clearInterval(probe)
      }
      const spawnMs = performance.now() - started
      return instance({ child, userDir, url: `http://127.0.0.1:${port}`, spawnMs, output })
    },
  }
}

/**
 * Node-RED whose logins and tokens are flowadmin's, through @flowadmin/node-red (the build's
 * packages/node-red, set as its README says, with `cacheMs`): each start also starts a flowadmin
 * (the target `flowadmin`) with `resourceServer` among its adminAuth.resourceServers, and stops it
 * with Node-RED. The instance is Node-RED's; `peerPids` holds flowadmin's, whose CPU is counted as
 * the server's too (every request may cost an introspection there). `start({ profile })` profiles
 * the flowadmin. Runs only in the scenarios that name it.
 */
export function createNodeRedHelperTarget({
  name,
  root,
  serverRoot,
  redJs,
  flowadmin,
  resourceServer,
  cacheMs,
}) {
  const helperFolder = fileURLToPath(new URL('packages/node-red/', serverRoot))
  if (!existsSync(join(helperFolder, 'index.js')))
    throw new Error(`${helperFolder}index.js is missing: the Node-RED helper of the build measured`)
  const nodeRed = createNodeRedTarget({ name, root, redJs })
  return {
    name,
    namedOnly: true,
    clientId: NODE_RED_CLIENT,
    async start({ profile } = {}) {
      const backend = await flowadmin.start({
        profile,
        resourceServers: [{ id: resourceServer.id, secret: resourceServer.hash }],
      })
      let front
      try {
        front = await nodeRed.start({
          helper: {
            module: helperFolder,
            url: backend.url,
            clientId: resourceServer.id,
            clientSecret: resourceServer.secret,
            cacheMs,
          },
        })
      } catch (error) {
        await backend.stop()
        throw error
      }
      return {
        ...front,
        peerPids: [backend.pid],
        output: {
          get stdout() {
            return front.output.stdout
          },
          get stderr() {
            const flowadminStderr = backend.output.stderr.trim()
            return flowadminStderr
              ? `${front.output.stderr}\n(flowadmin) ${flowadminStderr}`
              : front.output.stderr
          },
        },
        async stop() {
          try {
            await front.stop()
          } finally {
            await backend.stop()
          }
        },
      }
    },
  }
}

/**
 * A baseline (see baseline-server.mjs): `hono` or `node-http`, answering flowadmin's GET /auth/login
 * and GET /settings as recorded in `routesFile`, with its own live token (`instance.token`).
 */
export function createBaselineTarget({ kind, root, routesFile }) {
  return {
    name: kind,
    baseline: true,
    async start() {
      const folder = mkdtempSync(join(root, `${kind}-`))
      const script = new URL('baseline-server.mjs', import.meta.url).pathname
      const started = performance.now()
      const child = track(
        spawn(process.execPath, [script, kind, routesFile, join(folder, 'baseline.db')], {
          cwd: folder,
          stdio: ['ignore', 'pipe', 'pipe'],
        }),
      )
      const output = collect(child)
      const match = await waitFor(
        child,
        output,
        () => output.stdout.match(/listening on (http:\/\/\S+) token (\S+)/) ?? undefined,
      )
      const spawnMs = performance.now() - started
      return { ...instance({ child, userDir: folder, url: match[1], spawnMs, output }), token: match[2] }
    },
  }
}

function instance({ child, userDir, url, spawnMs, output }) {
  return {
    url,
    port: Number(new URL(url).port),
    pid: child.pid,
    spawnMs,
    output,
    /** Stops the server (SIGTERM, then SIGKILL after a while) and removes its user folder. */
    async stop() {
      await stopChild(child)
      removeFolder(userDir)
    },
  }
}

function collect(child) {
  const output = { stdout: '', stderr: '' }
  child.stdout.setEncoding('utf8').on('data', (chunk) => {
    if (output.stdout.length < 65_536) output.stdout += chunk
  })
  child.stderr.setEncoding('utf8').on('data', (chunk) => {
    if (output.stderr.length < 65_536) output.stderr += chunk
  })
  return output
}

/** Resolves with `ready()`'s first defined value; rejects when the child exits or time runs out. */
function waitFor(child, output, ready) {
  return new Promise((resolve, reject) => {
    const fail = (why) => {
      cleanup()
      child.kill('SIGKILL')
      reject(new Error(`${why}\nstdout: ${output.stdout.trim()}\nstderr: ${output.stderr.trim()}`))
    }
    const check = () => {
      const value = ready()
      if (value !== undefined) {
        cleanup()
        resolve(value)
      }
    }
    const onExit = (code, signal) => fail(`the server exited before listening (${signal ?? code})`)
    const timer = setTimeout(
      () => fail(`the server was not listening after ${START_TIMEOUT_MS} ms`),
      START_TIMEOUT_MS,
    )
    // Polled, so a probe's success and a line on stdout are seen the same way.
    const poll = setInterval(check, 1)
    child.stdout.on('data', check)
    child.once('exit', onExit)
    function cleanup() {
      clearTimeout(timer)
      clearInterval(poll)
      child.stdout.off('data', check)
      child.off('exit', onExit)
    }
  })
}

function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS)
    child.once('exit', () => {
      clearTimeout(timer)
      resolve()
    })
    child.kill('SIGTERM')
  })
}

/** A port that was free a moment ago on 127.0.0.1 (Node-RED needs one given; it cannot print port 0's). */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}
